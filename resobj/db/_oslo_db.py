"""oslo.db's internals that resobj relies on, where it has no public way.

Used through the one function here;
``resobj/tests/functional/db/test_library_internals.py`` fails if
oslo.db changes what it relies on, and
doc/source/contributor/architecture.rst lists it.
"""

import sqlalchemy as sa

from resobj.db import _sqlalchemy

# oslo.db's SQLite begin hook (a function of this name) emits a plain
# BEGIN unless this key of the connection's ``info`` says a transaction
# has begun; its commit and rollback hooks remove the key.
_SQLITE_BEGIN_HOOK = '_sqlite_emit_begin'
_SQLITE_BEGUN = 'in_transaction'


def replace_sqlite_begin(engine, emit_begin):
    """Begin ``engine``'s transactions with ``emit_begin(connection)``.

    In the place of oslo.db's SQLite begin hook: oslo.db turns pysqlite's
    own BEGIN off and emits a plain one in a begin hook, with no option
    to choose the kind of BEGIN, and SQLAlchemy has no way to run a hook
    before one already registered (``insert`` is ignored for an engine's
    connection events). So oslo.db's hook is removed, found by its
    function's name, and a transaction begun is marked as oslo.db marks
    it, so that its commit and rollback hooks end the mark. Returns how
    many hooks of oslo.db's were removed (one).
    """
    removed = 0
    for listener in _sqlalchemy.listeners(engine, 'begin'):
        if getattr(listener, '__name__', None) == _SQLITE_BEGIN_HOOK:
            sa.event.remove(engine, 'begin', listener)
            removed += 1

    def _begin(conn):
        if _SQLITE_BEGUN not in conn.info:
            emit_begin(conn)
            conn.info[_SQLITE_BEGUN] = True

    sa.event.listen(engine, 'begin', _begin)
    return removed
