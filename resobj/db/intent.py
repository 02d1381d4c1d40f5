"""What the transaction this thread is about to begin is for.

The facade records it around every decorated DB API call; the backends
read it when a transaction begins (SQLite takes the write lock at BEGIN
for writers, PostgreSQL runs pure reads without a transaction block),
and the outage guards (:mod:`resobj.db.outage`) read by when the
request being served must have its answer.
"""

import contextlib
import threading

_local = threading.local()


@contextlib.contextmanager
def writing(writes=True):
    """Transactions this thread begins in the block intend to write.

    The writer decorators use it, and so does code that runs its own
    transaction on an engine, such as the schema sync. ``writes=False``
    keeps the intent of an enclosing block (a reader inside a writer
    still runs in the writer's transaction).
    """
    outer = getattr(_local, 'writes', False)
    _local.writes = writes or outer
    try:
        yield
    finally:
        _local.writes = outer


def writes():
    """Whether the transaction this thread begins next intends to write."""
    return getattr(_local, 'writes', False)


@contextlib.contextmanager
def decorated(writes):
    """Record whether the outermost decorated call of this thread writes.

    Only a transaction begun under a reader decorator, and no writer
    around it, is a pure read (:func:`pure_read`). Code that runs its own
    transaction on an engine is never one.
    """
    outer = getattr(_local, 'scope', None)
    if outer is None:
        _local.scope = 'write' if writes else 'read'
    try:
        yield
    finally:
        _local.scope = outer


def pure_read():
    """Whether this thread is inside a reader with no writer around it."""
    return getattr(_local, 'scope', None) == 'read'


@contextlib.contextmanager
def answer_by(deadline):
    """Waits on the server in the block end by ``deadline`` at the latest.

    ``deadline`` is a ``time.monotonic()`` value, or None for no bound
    beyond each wait's own. An enclosing block's deadline is kept: it is
    the request's.
    """
    outer = getattr(_local, 'deadline', None)
    if outer is None:
        _local.deadline = deadline
    try:
        yield
    finally:
        _local.deadline = outer


def deadline():
    """The deadline of the request this thread serves, or None."""
    return getattr(_local, 'deadline', None)
