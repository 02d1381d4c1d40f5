"""Alembic environment: runs on the connection resobj hands it."""

from alembic import context

from resobj.db.migrations import resumable
from resobj.db import models

config = context.config
target_metadata = models.BASE.metadata


def run_migrations_online():
    connection = config.attributes.get('connection')
    if connection is None:
        raise RuntimeError(
            'resobj migrations run through resobj-manage db sync (or '
            'resobj.db.migration.db_sync), which provides the connection')
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode copies the table.
        render_as_batch=True,
        compare_type=True,
    )
    # MySQL's DDL is not transactional: an interrupted sync must be
    # able to finish what it began.
    undo = resumable.make_resumable(context.get_context())
    try:
        with context.begin_transaction():
            context.run_migrations()
    finally:
        undo()


if context.is_offline_mode():
    raise RuntimeError('resobj does not support offline (SQL script) '
                       'migrations')
run_migrations_online()
