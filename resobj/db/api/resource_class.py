"""Queries on the resource_classes table.

Standard classes are those of os-resource-classes, stored with their
index as id (VCPU is 0 everywhere), so ids never differ between
deployments; custom classes (CUSTOM_*) take ids from 10000.

Rows are hard-deleted, so the soft-delete helpers of ``utils`` (select,
get_one, update_live) do not apply here; the fetch and insert ones do.
"""

import os_resource_classes as orc
from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import base
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_class as models
from resobj import exception

_TABLE = models.ResourceClass.__table__

MIN_CUSTOM_ID = 10000
# How many ids a create tries before giving up: each failure means another
# creator took the id in between, so this bounds the contention tolerated.
MAX_ID_ATTEMPTS = 100


@facade.writer
def ensure_sync(context):
    """Insert the standard classes this database lacks; return how many.

    Safe to run from several processes at once: a class another process
    inserted meanwhile is simply there.
    """
    present = set(utils.execute(
        context,
        sa.select(_TABLE.c.name).where(
            _TABLE.c.id < MIN_CUSTOM_ID)).scalars())
    now = base.utcnow()
    return utils.insert_missing(context, _TABLE, [
        {'id': index, 'name': name, 'created_at': now}
        for index, name in enumerate(orc.STANDARDS) if name not in present])


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
def ids_by_names(context, names, in_order=False):
    """{name: id} for ``names``, in one query however many there are.

    ResourceClassNotFound names the first unknown one, in name order or
    with ``in_order`` in the order of ``names``.
    """
    return utils.ids_by_names(context, _TABLE, names,
                              exception.ResourceClassNotFound,
                              in_order=in_order)


def _by_id(context, rc_id):
    row = utils.fetch_one(context, sa.select(_TABLE).where(
        _TABLE.c.id == rc_id))
    if row is None:
        raise exception.ResourceClassNotFound(name='id=%s' % rc_id)
    return row


@facade.reader
def get(context, rc_id):
    return _by_id(context, rc_id)


def _max_custom_id(context):
    return utils.execute(
        context,
        sa.select(sa.func.max(_TABLE.c.id)).where(
            _TABLE.c.id >= MIN_CUSTOM_ID)).scalar()


def _is_name_collision(exc, name):
    # oslo.db names the columns on SQLite and PostgreSQL, and on MySQL the
    # key (PRIMARY or the constraint name) plus the value; a custom
    # class's name is never an integer, so the value tells them apart.
    return exc.value == name or any('name' in column
                                    for column in exc.columns)


@facade.writer
def create(context, name):
    """Insert custom class ``name`` with the next free id; return its row.

    The id is max(custom id) + 1. A concurrent creator may take that id
    between our read and our insert, and on MySQL a repeated read would
    not see its row (REPEATABLE READ keeps the first snapshot), so each
    retry tries the next id rather than reading again; the unique index
    is what decides, and it sees committed rows on every backend.
    """
    next_id = (_max_custom_id(context) or MIN_CUSTOM_ID - 1) + 1
    for _attempt in range(MAX_ID_ATTEMPTS):
        try:
            # A savepoint per attempt: PostgreSQL refuses every statement
            # after a failed one in the same (sub)transaction.
            with context.session.begin_nested():
                utils.insert(context, _TABLE, {'id': next_id, 'name': name})
            return _by_id(context, next_id)
        except db_exc.DBDuplicateEntry as exc:
            if _is_name_collision(exc, name):
                raise exception.ResourceClassExists(name=name)
            next_id += 1
    raise exception.MaxDBRetriesExceeded(
        attempts=MAX_ID_ATTEMPTS, action='create resource class %s' % name)


@facade.writer
def update(context, rc_id, name):
    """Rename custom class ``rc_id``; return its row."""
    current = _by_id(context, rc_id)
    if rc_id < MIN_CUSTOM_ID:
        raise exception.ResourceClassCannotUpdateStandard(
            name=current['name'])
    try:
        utils.execute(context, sa.update(_TABLE).where(
            _TABLE.c.id == rc_id).values(name=name,
                                         updated_at=base.utcnow()))
    except db_exc.DBDuplicateEntry:
        raise exception.ResourceClassExists(name=name)
    return _by_id(context, rc_id)


@facade.writer
def destroy(context, rc_id):
    """Delete custom class ``rc_id`` unless anything refers to it."""
    name = _by_id(context, rc_id)['name']
    if rc_id < MIN_CUSTOM_ID:
        raise exception.ResourceClassCannotDeleteStandard(name=name)
    inventories = inv_models.Inventory.__table__
    if utils.execute(context, sa.select(inventories.c.id).where(
            inventories.c.resource_class_id == rc_id).limit(1)).first():
        raise exception.ResourceClassInUse(name=name)
    try:
        # The foreign keys refuse the delete when an inventory appeared
        # after the check, or an allocation names the class without an
        # inventory (placement leaves allocations unchecked and would
        # orphan them; the schema here does not allow that).
        utils.execute(context, sa.delete(_TABLE).where(
            _TABLE.c.id == rc_id))
    except db_exc.DBReferenceError:
        raise exception.ResourceClassInUse(name=name)
