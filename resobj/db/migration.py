"""Schema creation and upgrade with the project's one alembic tree.

Migrations are expand-only within a release series so that N-1 and N
services can share a database during a rolling upgrade; there are no
downgrades (restore a backup instead), as in nova and placement.
"""

import alembic.command
import alembic.config
import alembic.migration
import alembic.script

from resobj.db import facade

SCRIPT_LOCATION = 'resobj.db:migrations'


def _alembic_config(connection):
    config = alembic.config.Config()
    config.set_main_option('script_location', SCRIPT_LOCATION)
    config.attributes['connection'] = connection
    return config


def db_sync(engine=None, revision='head'):
    """Create or upgrade the schema to ``revision`` (default: newest)."""
    engine = engine or facade.get_engine()
    with engine.begin() as connection:
        alembic.command.upgrade(_alembic_config(connection), revision)


def db_version(engine=None):
    """The schema revision of the database, or None before the first sync."""
    engine = engine or facade.get_engine()
    with engine.connect() as connection:
        return alembic.migration.MigrationContext.configure(
            connection).get_current_revision()


def head_revision():
    """The newest revision this code knows."""
    script = alembic.script.ScriptDirectory.from_config(
        _alembic_config(None))
    return script.get_current_head()
