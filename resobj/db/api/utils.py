"""Query helpers shared by the per-noun DB API modules.

These run inside the caller's transaction (``context.session``), so they
are called only from decorated DB API functions.
"""

import sqlalchemy as sa

from resobj.db.models import base


def filter_deleted(context, table, stmt):
    """Apply ``context.read_deleted`` to a select on a soft-delete table."""
    if context.read_deleted == 'no':
        return stmt.where(table.c.deleted == 0)
    if context.read_deleted == 'only':
        return stmt.where(table.c.deleted != 0)
    return stmt


def fetch_one(context, stmt):
    """The first row of ``stmt`` as a plain dict, or None."""
    row = context.session.execute(stmt).mappings().first()
    return dict(row) if row is not None else None


def fetch_all(context, stmt):
    return [dict(row) for row in context.session.execute(stmt).mappings()]


def soft_delete(context, table, *criteria):
    """Soft-delete the live rows matching ``criteria``; return the count.

    ``deleted`` takes the row's own id, which keeps unique constraints that
    include ``deleted`` satisfiable however many times a key is deleted.
    ``updated_at`` is kept: deleting is not an update of the row's data.
    """
    stmt = (
        sa.update(table)
        .where(table.c.deleted == 0, *criteria)
        .values(deleted=table.c.id, deleted_at=base.utcnow(),
                updated_at=table.c.updated_at)
    )
    return context.session.execute(stmt).rowcount
