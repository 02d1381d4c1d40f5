"""Queries on the traits table.

Standard traits come from os-traits and are synced into the table; their
ids are generated, so unlike resource classes they differ between
deployments and only names cross process boundaries.
"""

import os_traits
from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db import facade
from resobj.db.models import base
from resobj.db.models import trait as models
from resobj import exception

_TABLE = models.Trait.__table__


def _standard_names():
    global _STANDARD
    if _STANDARD is None:
        _STANDARD = frozenset(os_traits.get_traits())
    return _STANDARD


_STANDARD = None


@facade.writer
def ensure_sync(context):
    """Insert the standard traits this database lacks; return how many.

    One multi-row insert normally; if a concurrent sync got there first,
    the rows are inserted one by one, each in a savepoint, skipping what
    exists.
    """
    present = set(context.session.execute(
        sa.select(_TABLE.c.name)).scalars())
    now = base.utcnow()
    missing = [{'name': name, 'created_at': now}
               for name in sorted(_standard_names() - present)]
    if not missing:
        return 0
    try:
        with context.session.begin_nested():
            context.session.execute(sa.insert(_TABLE), missing)
        return len(missing)
    except db_exc.DBDuplicateEntry:
        pass
    added = 0
    for row in missing:
        try:
            with context.session.begin_nested():
                context.session.execute(sa.insert(_TABLE).values(row))
            added += 1
        except db_exc.DBDuplicateEntry:
            pass
    return added


@facade.reader
def ids_by_names(context, names):
    """{name: id} for ``names``; TraitNotFound names the first unknown."""
    names = set(names)
    found = dict(context.session.execute(
        sa.select(_TABLE.c.name, _TABLE.c.id).where(
            _TABLE.c.name.in_(sorted(names)))).all()) if names else {}
    unknown = sorted(names - set(found))
    if unknown:
        raise exception.TraitNotFound(name=unknown[0])
    return found
