"""Queries on the resource_classes table.

Standard classes are those of os-resource-classes, stored with their
index as id (VCPU is 0 everywhere), so ids never differ between
deployments; custom classes (CUSTOM_*) take ids from 10000.
"""

import os_resource_classes as orc
from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import base
from resobj.db.models import resource_class as models
from resobj import exception

_TABLE = models.ResourceClass.__table__

MIN_CUSTOM_ID = 10000


@facade.writer
def ensure_sync(context):
    """Insert the standard classes this database lacks; return how many.

    Safe to run from several processes at once: a class another process
    inserted meanwhile is simply there.
    """
    present = set(context.session.execute(
        sa.select(_TABLE.c.name).where(
            _TABLE.c.id < MIN_CUSTOM_ID)).scalars())
    missing = [{'id': index, 'name': name, 'created_at': base.utcnow()}
               for index, name in enumerate(orc.STANDARDS)
               if name not in present]
    added = 0
    for row in missing:
        try:
            # A savepoint per row keeps the transaction usable when a
            # concurrent sync inserted the same class first.
            with context.session.begin_nested():
                context.session.execute(sa.insert(_TABLE).values(row))
            added += 1
        except db_exc.DBDuplicateEntry:
            pass
    return added


@facade.reader
def get_all(context):
    return utils.fetch_all(context, sa.select(_TABLE).order_by(_TABLE.c.id))


@facade.reader
def get_by_name(context, name):
    row = utils.fetch_one(context, sa.select(_TABLE).where(
        _TABLE.c.name == name))
    if row is None:
        raise exception.ResourceClassNotFound(name=name)
    return row


@facade.reader
def ids_by_names(context, names):
    """{name: id} for ``names``, in one query however many there are.

    ResourceClassNotFound names the first unknown one.
    """
    names = set(names)
    found = dict(context.session.execute(
        sa.select(_TABLE.c.name, _TABLE.c.id).where(
            _TABLE.c.name.in_(sorted(names)))).all()) if names else {}
    unknown = sorted(names - set(found))
    if unknown:
        raise exception.ResourceClassNotFound(name=unknown[0])
    return found
