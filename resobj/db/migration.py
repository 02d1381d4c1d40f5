"""Schema creation and upgrade with the project's one alembic tree.

Migrations are expand-only within a release series so that N-1 and N
services can share a database during a rolling upgrade; there are no
downgrades (restore a backup instead), as in nova and placement.
"""

import alembic.command
import alembic.config
import alembic.migration
import alembic.script
import alembic.util
import sqlalchemy as sa

from resobj.db import facade
from resobj import exception

SCRIPT_LOCATION = 'resobj.db:migrations'

# The lock that lets one schema sync at a time change a server database.
# Every worker of a WSGI server without a master that syncs first (e.g.
# gunicorn without --preload) syncs as it loads; the others wait and then
# find the schema current. PostgreSQL's lock is a 64-bit key ("resobj"
# in ASCII), MySQL's a name.
LOCK_KEY = 0x7265736f626a
LOCK_NAME = 'resobj.db_sync'
# How long a sync waits on MySQL for another one to finish.
LOCK_WAIT_SECONDS = 600


def _alembic_config(connection):
    config = alembic.config.Config()
    config.set_main_option('script_location', SCRIPT_LOCATION)
    config.attributes['connection'] = connection
    return config


def _lock(connection):
    """Wait until no other schema sync runs on this database.

    Begins the transaction the sync runs in. PostgreSQL's lock ends with
    it; MySQL's (DDL commits there anyway) is released by :func:`_unlock`.
    On SQLite the transaction itself is the lock: it begins with BEGIN
    IMMEDIATE (see db_sync).
    """
    dialect = connection.dialect.name
    if dialect == 'postgresql':
        connection.execute(sa.text('SELECT pg_advisory_xact_lock(:key)'),
                           {'key': LOCK_KEY})
    elif dialect == 'mysql':
        got = connection.execute(
            sa.text('SELECT GET_LOCK(:name, :wait)'),
            {'name': LOCK_NAME, 'wait': LOCK_WAIT_SECONDS}).scalar()
        if got != 1:
            raise exception.DatabaseSchemaError(
                reason='another schema sync held the lock %r for over %d s'
                       % (LOCK_NAME, LOCK_WAIT_SECONDS))
    else:
        connection.execute(sa.text('SELECT 1'))


def _unlock(connection):
    if connection.dialect.name == 'mysql':
        connection.execute(sa.text('SELECT RELEASE_LOCK(:name)'),
                           {'name': LOCK_NAME})
        connection.commit()


def _script_directory():
    """This release's revisions."""
    return alembic.script.ScriptDirectory.from_config(_alembic_config(None))


def _current_revision(connection):
    """The database's revision, or None before the first sync."""
    return alembic.migration.MigrationContext.configure(
        connection).get_current_revision()


def is_newer(revision):
    """Whether ``revision`` is one this code does not know.

    Such a database was upgraded by a newer release: alembic cannot
    tell more, having only this release's revisions.
    """
    if revision is None:
        return False
    try:
        _script_directory().get_revision(revision)
    except alembic.util.CommandError:
        return True
    return False


def db_sync(engine=None, revision='head', newer_ok=False):
    """Create or upgrade the schema to ``revision`` (default: newest).

    Safe to run from several processes at once: one syncs, the others
    wait for it and then have nothing left to do.

    ``newer_ok``: a database that a newer release has upgraded (its
    revision is unknown here) is left as it is and its revision
    returned, rather than refused with DatabaseSchemaError. A service
    starting during a rolling upgrade passes it: migrations are
    expand-only, so this release keeps working on the newer schema.
    Returns None otherwise.
    """
    with facade.translate_errors():
        engine = engine or facade.get_engine()
        # On SQLite the sync's transaction takes the write lock at BEGIN.
        # A deferred one would read the version, then fail at once with
        # "database is locked" on its first write if another sync had
        # written meanwhile; this way the second one waits (busy timeout).
        with facade.writing(), engine.connect() as connection:
            _lock(connection)
            try:
                if newer_ok:
                    # Read under the lock: a newer release's sync may
                    # have just finished.
                    current = _current_revision(connection)
                    if is_newer(current):
                        return current
                alembic.command.upgrade(_alembic_config(connection),
                                        revision)
                connection.commit()
            except alembic.util.CommandError as exc:
                # e.g. a database migrated by newer resobj code.
                raise exception.DatabaseSchemaError(reason=str(exc))
            finally:
                # Nothing to undo after the commit; after an error, the
                # rollback lets the MySQL lock be released.
                connection.rollback()
                _unlock(connection)


def db_version(engine=None):
    """The schema revision of the database, or None before the first sync."""
    with facade.translate_errors():
        engine = engine or facade.get_engine()
        with engine.connect() as connection:
            return _current_revision(connection)


def head_revision():
    """The newest revision this code knows."""
    return _script_directory().get_current_head()
