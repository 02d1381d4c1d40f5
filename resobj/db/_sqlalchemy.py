"""SQLAlchemy's internals that resobj relies on, where it has no public way.

Each is used through one function here;
``resobj/tests/functional/db/test_library_internals.py`` fails if
SQLAlchemy changes one, and doc/source/contributor/architecture.rst
lists them. No other module names a private attribute of SQLAlchemy's
objects (``resobj/tests/unit/test_private_names.py`` checks it).
"""


def stop_pre_ping(pool):
    """Turn off ``pool``'s ping of every connection it checks out.

    SQLAlchemy takes ``pre_ping`` only when it builds a pool (the
    engine's ``pool_pre_ping``), keeps it in the pool's ``_pre_ping``,
    reads that at each checkout and copies it into the pool that
    ``dispose()`` builds next. oslo.db builds its engines with the ping
    and no option to leave it out.
    """
    pool._pre_ping = False


def listeners(target, identifier):
    """The functions listening for event ``identifier`` of ``target``.

    In the order they run. SQLAlchemy's ``event.contains`` tells whether
    a known function listens; only the target's ``dispatch``, which it
    does not document, lists them.
    """
    return list(getattr(target.dispatch, identifier))
