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

from resobj.db import backends
from resobj.db import facade
from resobj import exception

SCRIPT_LOCATION = 'resobj.db:migrations'


def _alembic_config(connection):
    config = alembic.config.Config()
    config.set_main_option('script_location', SCRIPT_LOCATION)
    config.attributes['connection'] = connection
    return config


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
        backend = backends.for_dialect(engine.dialect.name)
        # One sync at a time on a database: every worker of a WSGI server
        # without a master that syncs first (e.g. gunicorn without
        # --preload) syncs as it loads; the others wait for the lock (it
        # begins the sync's transaction) and then find the schema
        # current. On SQLite the transaction itself is the lock: under
        # writing() it takes the write lock at BEGIN. A deferred one would
        # read the version, then fail at once with "database is locked"
        # on its first write if another sync had written meanwhile; this
        # way the second one waits (busy timeout).
        with facade.writing(), engine.connect() as connection:
            backend.lock_schema(connection)
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
                backend.unlock_schema(connection)


def db_version(engine=None):
    """The schema revision of the database, or None before the first sync."""
    with facade.translate_errors():
        engine = engine or facade.get_engine()
        with engine.connect() as connection:
            return _current_revision(connection)


def head_revision():
    """The newest revision this code knows."""
    return _script_directory().get_current_head()
