"""Queries on the inventories table: what each provider offers.

Every change (add, update, delete, replace-all) is one transaction that
ends with the provider's generation compare-and-swap, so a change made
from a stale generation changes nothing. Inventories are passed and
returned as dicts keyed by the column names, with ``resource_class``
(the class's name) instead of its id.
"""

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from resobj.db.api import resource_class as rc_db
from resobj.db.api import resource_provider as rp_db
from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import inventory as models
from resobj.db.models import resource_class as rc_models
from resobj import exception

LOG = logging.getLogger(__name__)

_INV = models.Inventory.__table__
_RC = rc_models.ResourceClass.__table__
_ALLOC = alloc_models.Allocation.__table__

# The largest value the integer columns hold on every backend.
MAX_INT = 0x7FFFFFFF
# What an inventory that does not say otherwise has, as in placement's
# Inventory object (its HTTP layer defaults max_unit to MAX_INT instead).
DEFAULTS = {'reserved': 0, 'min_unit': 1, 'max_unit': 1, 'step_size': 1,
            'allocation_ratio': 1.0}
VALUE_COLUMNS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
                 'allocation_ratio')


def _capacity(inventory):
    """What may be allocated in all: int((total - reserved) * ratio)."""
    return int((inventory['total'] - inventory['reserved'])
               * inventory['allocation_ratio'])


def _validated(provider_uuid, inventory):
    """``inventory`` with defaults filled in; else InvalidInventoryValue."""
    values = dict(DEFAULTS, **inventory)
    name = values.get('resource_class')

    def invalid(reason):
        return exception.InvalidInventoryValue(
            resource_class=name, provider=provider_uuid, reason=reason)

    if not name:
        raise invalid('no resource class')
    if 'total' not in values:
        raise invalid('no total')
    minimum = {'total': 1, 'reserved': 0, 'min_unit': 1, 'max_unit': 1,
               'step_size': 1}
    for column, low in minimum.items():
        value = values[column]
        if isinstance(value, bool) or not isinstance(value, int) or \
                not low <= value <= MAX_INT:
            raise invalid('%s must be an integer from %d to %d, not %r'
                          % (column, low, MAX_INT, value))
    ratio = values['allocation_ratio']
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or \
            not ratio > 0:
        raise invalid('allocation_ratio must be greater than 0, not %r'
                      % (ratio,))
    if values['reserved'] > values['total']:
        raise invalid('reserved (%d) exceeds total (%d)'
                      % (values['reserved'], values['total']))
    return {key: values[key] for key in ('resource_class',) + VALUE_COLUMNS}


def _select():
    return sa.select(
        _RC.c.name.label('resource_class'), _INV.c.resource_class_id,
        *(_INV.c[column] for column in VALUE_COLUMNS),
        _INV.c.created_at, _INV.c.updated_at,
    ).select_from(_INV.join(_RC, _RC.c.id == _INV.c.resource_class_id))


def _current(context, provider_id):
    return utils.fetch_all(context, _select().where(
        _INV.c.resource_provider_id == provider_id).order_by(_RC.c.name))


@facade.reader
def get_all_by_provider(context, provider_id):
    """The provider's inventories, ordered by resource class name."""
    rows = _current(context, provider_id)
    for row in rows:
        del row['resource_class_id']
    return rows


def _in_use(context, provider_id, rc_ids):
    """The names of classes among ``rc_ids`` the provider has allocated."""
    if not rc_ids:
        return []
    return list(utils.execute(
        context,
        sa.select(_RC.c.name).where(_RC.c.id.in_(
            sa.select(_ALLOC.c.resource_class_id).where(
                _ALLOC.c.resource_provider_id == provider_id,
                _ALLOC.c.resource_class_id.in_(sorted(rc_ids)))))
        .order_by(_RC.c.id)).scalars())


def _refuse_in_use(context, provider, rc_ids):
    names = _in_use(context, provider['id'], rc_ids)
    if names:
        raise exception.InventoryInUse(resource_classes=', '.join(names),
                                       provider=provider['uuid'])


def _warn_over_capacity(context, provider, inventories):
    """Log each class whose usage now exceeds its capacity.

    Allowed, as in placement: an operator may lower capacity (raise
    reserved, lower a ratio) under existing usage; new allocations are
    then refused until usage falls.
    """
    by_id = {inv['resource_class_id']: inv for inv in inventories}
    if not by_id:
        return
    usage = utils.execute(
        context,
        sa.select(_INV.c.resource_class_id, _INV.c.used)
        .where(_INV.c.resource_provider_id == provider['id'],
               _INV.c.resource_class_id.in_(sorted(by_id)))).all()
    over = sorted(by_id[rc_id]['resource_class'] for rc_id, used in usage
                  if used > _capacity(by_id[rc_id]))
    if over:
        LOG.warning('Resource provider %s is now over-capacity for %s',
                    provider['uuid'], ', '.join(over))


def _insert(context, provider, inventories):
    now = base.utcnow()
    try:
        utils.execute(context, sa.insert(_INV), [
            dict({column: inv[column] for column in VALUE_COLUMNS},
                 resource_provider_id=provider['id'],
                 resource_class_id=inv['resource_class_id'],
                 created_at=now)
            for inv in inventories])
    except db_exc.DBDuplicateEntry:
        # Only add() can get here: another writer added the class first.
        raise exception.InventoryExists(
            provider=provider['uuid'],
            resource_class=inventories[0]['resource_class'])


def _update(context, provider, inventory):
    return utils.execute(
        context,
        sa.update(_INV).where(
            _INV.c.resource_provider_id == provider['id'],
            _INV.c.resource_class_id == inventory['resource_class_id'])
        .values(updated_at=base.utcnow(),
                **{column: inventory[column] for column in VALUE_COLUMNS})
    ).rowcount


def _prepare(context, provider_id, inventories):
    """The provider's row and ``inventories`` validated, with class ids."""
    provider = rp_db.get(context, provider_id)
    inventories = [_validated(provider['uuid'], inv) for inv in inventories]
    rc_ids = rc_db.ids_by_names(
        context, [inv['resource_class'] for inv in inventories])
    for inv in inventories:
        inv['resource_class_id'] = rc_ids[inv['resource_class']]
    return provider, inventories


@facade.writer
def add(context, provider_id, seen_generation, inventory):
    """Add inventory of a class the provider has none of.

    Returns the provider's new generation. InventoryExists if it has.
    """
    provider, (inventory,) = _prepare(context, provider_id, [inventory])
    _insert(context, provider, [inventory])
    _warn_over_capacity(context, provider, [inventory])
    return rp_db.increment_generation(context, provider_id, seen_generation)


@facade.writer
def update(context, provider_id, seen_generation, inventory):
    """Replace the values of one class's inventory; return the generation.

    InventoryNotFound if the provider has none of that class. Capacity
    below current usage is allowed and logged.
    """
    provider, (inventory,) = _prepare(context, provider_id, [inventory])
    if not _update(context, provider, inventory):
        raise exception.InventoryNotFound(
            provider=provider['uuid'],
            resource_class=inventory['resource_class'])
    _warn_over_capacity(context, provider, [inventory])
    return rp_db.increment_generation(context, provider_id, seen_generation)


@facade.writer
def delete(context, provider_id, seen_generation, resource_class):
    """Delete one class's inventory; return the provider's generation.

    InventoryInUse while the provider has allocations of the class.
    """
    provider = rp_db.get(context, provider_id)
    rc_id = rc_db.ids_by_names(context, [resource_class])[resource_class]
    _refuse_in_use(context, provider, [rc_id])
    count = utils.execute(context, sa.delete(_INV).where(
        _INV.c.resource_provider_id == provider_id,
        _INV.c.resource_class_id == rc_id)).rowcount
    if not count:
        raise exception.InventoryNotFound(provider=provider['uuid'],
                                          resource_class=resource_class)
    return rp_db.increment_generation(context, provider_id, seen_generation)


@facade.writer
def set_inventories(context, provider_id, seen_generation, inventories):
    """Make ``inventories`` all of the provider's inventory.

    Classes not listed are deleted (InventoryInUse, changing nothing, if
    any has allocations), new ones added, changed ones updated; then the
    generation is bumped once. Returns the new generation.
    """
    provider, inventories = _prepare(context, provider_id, inventories)
    wanted = {inv['resource_class_id']: inv for inv in inventories}
    if len(wanted) != len(inventories):
        raise exception.InvalidInventoryValue(
            resource_class=', '.join(sorted(
                inv['resource_class'] for inv in inventories)),
            provider=provider['uuid'], reason='a class is listed twice')
    current = {row['resource_class_id']: row
               for row in _current(context, provider_id)}
    removed = sorted(set(current) - set(wanted))
    _refuse_in_use(context, provider, removed)
    if removed:
        utils.execute(context, sa.delete(_INV).where(
            _INV.c.resource_provider_id == provider_id,
            _INV.c.resource_class_id.in_(removed)))
    added = [inv for rc_id, inv in sorted(wanted.items())
             if rc_id not in current]
    if added:
        _insert(context, provider, added)
    changed = [inv for rc_id, inv in sorted(wanted.items())
               if rc_id in current and any(
                   inv[column] != current[rc_id][column]
                   for column in VALUE_COLUMNS)]
    for inv in changed:
        _update(context, provider, inv)
    _warn_over_capacity(context, provider, added + changed)
    return rp_db.increment_generation(context, provider_id, seen_generation)


def _wrong_usage(limit=None):
    """Inventories whose ``used`` is not the sum of their allocations.

    The first ``limit`` by id; all of them, unordered, without one.
    """
    allocated = sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0)
    query = (
        sa.select(_INV.c.id)
        .select_from(_INV.outerjoin(_ALLOC, sa.and_(
            _ALLOC.c.resource_provider_id == _INV.c.resource_provider_id,
            _ALLOC.c.resource_class_id == _INV.c.resource_class_id)))
        .group_by(_INV.c.id, _INV.c.used)
        .having(_INV.c.used != allocated))
    if limit is None:
        return query
    return query.order_by(_INV.c.id).limit(limit)


@facade.reader
def count_wrong_usage(context):
    """How many inventories :func:`fix_usage` has left to recount."""
    return utils.count(context, _wrong_usage().subquery())


@facade.reader
def find_wrong_usage(context, limit=100):
    """Ids of inventories whose usage disagrees with their allocations.

    The database's triggers keep ``inventories.used`` (see
    resobj/db/models/inventory_usage.py); this is the check that they
    did, for tests and for :func:`fix_usage`.
    """
    return utils.execute(context, _wrong_usage(limit)).scalars().all()


@facade.writer
def fix_usage(context, max_count):
    """Online migration: recount up to ``max_count`` wrong inventory usages.

    Nothing should need it: the triggers count every allocation written.
    The exception is an upgrade to the release that added them on MySQL,
    whose DDL commits at once, so that an allocation written while the
    migration filled the column may be miscounted. Returns (found, done).

    The inventory rows are locked before their allocations are summed
    again, so a concurrent writer's trigger, which needs the same row,
    adds its amount after this recount rather than before it.
    """
    ids = utils.execute(context, _wrong_usage(max_count)).scalars().all()
    if not ids:
        return 0, 0
    utils.execute(context, sa.select(_INV.c.id).where(
        _INV.c.id.in_(ids)).with_for_update())
    allocated = sa.select(
        sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0)).where(
        _ALLOC.c.resource_provider_id == _INV.c.resource_provider_id,
        _ALLOC.c.resource_class_id == _INV.c.resource_class_id
    ).scalar_subquery()
    # updated_at kept: a recount is not a change of the inventory.
    done = utils.execute(context, sa.update(_INV).where(
        _INV.c.id.in_(ids)).values(
        used=allocated, updated_at=_INV.c.updated_at)).rowcount
    LOG.warning('Recounted the usage of %d inventories (ids %s)', done,
                ', '.join(str(i) for i in ids))
    return len(ids), done
