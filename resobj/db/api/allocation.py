"""The allocation write path and usage reads: set-based SQL only.

Replacing a set of consumers' allocations is one transaction:

1. note the providers' generations and the usage of every involved
   (provider, class) before the change;
2. delete the consumers' rows;
3. check every (provider, class) the new rows need in ONE query:
   inventory exists, each amount respects min_unit, max_unit and
   step_size, and usage + amount fits the capacity
   ``(total - reserved) * allocation_ratio`` -- or at least does not make
   an already over-capacity provider worse, so consumers can still leave
   or shrink after an inventory was lowered;
4. insert the new rows;
5. bump the generation of every provider whose usage changed, each a
   compare-and-swap against the generation read in step 1.

Concurrent writers on the same provider therefore cannot both commit: the
second one's compare-and-swap finds the generation moved and raises
ResourceProviderConcurrentUpdateDetected, rolling its transaction back;
callers retry that (and deadlocks) with a fresh transaction. The number
of statements does not depend on how many allocations already exist.
"""

import collections

import sqlalchemy as sa

from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_class as rc_models
from resobj.db.models import resource_provider as rp_models
from resobj import exception

_ALLOC = alloc_models.Allocation.__table__
_INV = inv_models.Inventory.__table__
_RP = rp_models.ResourceProvider.__table__
_RC = rc_models.ResourceClass.__table__

Row = collections.namedtuple(
    'Row', 'resource_provider_id consumer_id resource_class_id used')


def _old_rows(context, consumer_ids):
    """The consumers' current rows with their providers: one query.

    Returns ({(rp_id, rc_id): amount}, {rp_id: (uuid, generation)}).
    """
    amounts = collections.defaultdict(int)
    providers = {}
    if not consumer_ids:
        return amounts, providers
    rows = context.session.execute(
        sa.select(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id,
                  _ALLOC.c.used, _RP.c.uuid, _RP.c.generation)
        .join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
        .where(_ALLOC.c.consumer_id.in_(consumer_ids)))
    for rp_id, rc_id, used, uuid, generation in rows:
        amounts[(rp_id, rc_id)] += used
        providers[rp_id] = (uuid, generation)
    return amounts, providers


def _check_capacity(context, rows, old_amounts):
    """Check ``rows`` against the providers' inventories in one query.

    Run after the consumers' old rows are deleted, so usage excludes
    them; usage before this change is that plus ``old_amounts``. Raises
    unless every row fits; returns {rp_id: (uuid, generation)} for the
    providers involved, read in the same statement as their usage.
    """
    needed = collections.defaultdict(int)
    amounts = collections.defaultdict(list)
    for row in rows:
        key = (row.resource_provider_id, row.resource_class_id)
        needed[key] += row.used
        amounts[key].append(row.used)
    if not needed:
        return {}
    rp_ids = sorted({rp for rp, _ in needed})
    usage = (
        sa.select(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id,
                  sa.func.sum(_ALLOC.c.used).label('used'))
        .where(_ALLOC.c.resource_provider_id.in_(rp_ids))
        .group_by(_ALLOC.c.resource_provider_id,
                  _ALLOC.c.resource_class_id)
        .subquery())
    query = (
        sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation, _INV.c.total,
                  _INV.c.resource_class_id, _INV.c.reserved,
                  _INV.c.min_unit, _INV.c.max_unit, _INV.c.step_size,
                  _INV.c.allocation_ratio,
                  sa.func.coalesce(usage.c.used, 0))
        .select_from(_RP.outerjoin(_INV, sa.and_(
            _INV.c.resource_provider_id == _RP.c.id,
            _INV.c.resource_class_id.in_(sorted({rc for _, rc in needed}))))
            .outerjoin(usage, sa.and_(
                usage.c.resource_provider_id == _RP.c.id,
                usage.c.resource_class_id == _INV.c.resource_class_id)))
        .where(_RP.c.id.in_(rp_ids)))
    providers, inventories = {}, {}
    for (rp_id, uuid, generation, total, rc_id, reserved, min_unit,
         max_unit, step_size, ratio, used) in context.session.execute(query):
        providers[rp_id] = (uuid, generation)
        if rc_id is not None:
            inventories[(rp_id, rc_id)] = (total, reserved, min_unit,
                                           max_unit, step_size, ratio, used)
    missing = sorted(set(rp_ids) - set(providers))
    if missing:
        raise exception.ResourceProviderNotFound(key='id=%s' % missing[0])
    for key, amount in sorted(needed.items()):
        rp_uuid = providers[key[0]][0]
        if key not in inventories:
            raise exception.InvalidInventory(
                resource_provider=rp_uuid,
                resource_class=_class_name(context, key[1]))
        (total, reserved, min_unit, max_unit, step_size, ratio,
         used) = inventories[key]
        for single in amounts[key]:
            if single < min_unit or single > max_unit or \
                    single % step_size:
                raise exception.InvalidAllocationConstraintsViolated(
                    resource_provider=rp_uuid,
                    resource_class=_class_name(context, key[1]),
                    amount=single, min_unit=min_unit, max_unit=max_unit,
                    step_size=step_size)
        capacity = (total - reserved) * ratio
        if used + amount > capacity and \
                used + amount > used + old_amounts.get(key, 0):
            # Over capacity and worse than before this change: refused.
            # Not worse (a consumer shrinking or leaving an over-capacity
            # provider) is allowed.
            raise exception.InvalidAllocationCapacityExceeded(
                resource_provider=rp_uuid,
                resource_class=_class_name(context, key[1]),
                requested=amount, used=used, capacity=capacity)
    return providers


def _class_name(context, rc_id):
    # Only on the error path: one more query there is fine.
    return context.session.execute(
        sa.select(_RC.c.name).where(_RC.c.id == rc_id)).scalar() or rc_id


def _bump_generations(context, providers):
    """Compare-and-swap every provider's generation; {id: new}.

    ``providers`` maps id to (uuid, generation read in this transaction).
    """
    bumped = {}
    for rp_id, (uuid, seen) in sorted(providers.items()):
        count = context.session.execute(
            sa.update(_RP)
            .where(_RP.c.id == rp_id, _RP.c.generation == seen)
            .values(generation=seen + 1,
                    updated_at=_RP.c.updated_at)).rowcount
        if count != 1:
            raise exception.ResourceProviderConcurrentUpdateDetected(
                provider=uuid, generation=seen)
        bumped[rp_id] = seen + 1
    return bumped


@facade.retrying_writer(exception.ResourceProviderConcurrentUpdateDetected)
def replace_for_consumers(context, consumer_ids, rows):
    """Replace ``consumer_ids``' allocations with ``rows`` atomically.

    A concurrent change to one of the providers makes this transaction's
    generation compare-and-swap fail; it is then retried from the start
    (``max_retries=``, default 10), re-reading usage, so a retry can still
    fail on capacity.

    ``rows`` are Row(resource_provider_id, consumer_id, resource_class_id,
    used); a row with used == 0 only marks its consumer as emptied.
    Returns {provider id: new generation} for every provider whose usage
    changed (new rows' providers and the consumers' previous ones).
    """
    rows = [Row(*row) for row in rows]
    new = [row for row in rows if row.used > 0]
    consumer_ids = sorted(set(consumer_ids) | {r.consumer_id for r in rows})
    old_amounts, providers = _old_rows(context, consumer_ids)
    if old_amounts:
        context.session.execute(
            sa.delete(_ALLOC).where(_ALLOC.c.consumer_id.in_(consumer_ids)))
    providers.update(_check_capacity(context, new, old_amounts))
    if new:
        now = base.utcnow()
        context.session.execute(sa.insert(_ALLOC), [
            dict(row._asdict(), created_at=now) for row in new])
    return _bump_generations(context, providers)


@facade.reader
def usage_by_provider(context, provider_id):
    """{class name: used} for every class the provider has inventory of.

    Unused classes show 0. One query.
    """
    usage = (
        sa.select(_ALLOC.c.resource_class_id,
                  sa.func.sum(_ALLOC.c.used).label('used'))
        .where(_ALLOC.c.resource_provider_id == provider_id)
        .group_by(_ALLOC.c.resource_class_id).subquery())
    rows = context.session.execute(
        sa.select(_RC.c.name, sa.func.coalesce(usage.c.used, 0))
        .select_from(_INV.join(_RC, _RC.c.id == _INV.c.resource_class_id)
                     .outerjoin(usage, usage.c.resource_class_id ==
                                _INV.c.resource_class_id))
        .where(_INV.c.resource_provider_id == provider_id))
    return {name: int(used) for name, used in rows}
