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

from resobj.db import facade
from resobj import exception

SCRIPT_LOCATION = 'resobj.db:migrations'


def _alembic_config(connection):
    config = alembic.config.Config()
    config.set_main_option('script_location', SCRIPT_LOCATION)
    config.attributes['connection'] = connection
    return config


def db_sync(engine=None, revision='head'):
    """Create or upgrade the schema to ``revision`` (default: newest)."""
    with facade.translate_errors():
        engine = engine or facade.get_engine()
        with engine.begin() as connection:
            try:
                alembic.command.upgrade(_alembic_config(connection),
                                        revision)
            except alembic.util.CommandError as exc:
                # e.g. a database migrated by newer resobj code.
                raise exception.DatabaseSchemaError(reason=str(exc))


def db_version(engine=None):
    """The schema revision of the database, or None before the first sync."""
    with facade.translate_errors():
        engine = engine or facade.get_engine()
        with engine.connect() as connection:
            return alembic.migration.MigrationContext.configure(
                connection).get_current_revision()


def head_revision():
    """The newest revision this code knows."""
    script = alembic.script.ScriptDirectory.from_config(
        _alembic_config(None))
    return script.get_current_head()
