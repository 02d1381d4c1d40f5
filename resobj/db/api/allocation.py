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


def _usage(context, pairs):
    """{(rp_id, rc_id): SUM(used)} for the given pairs, one query."""
    if not pairs:
        return {}
    rp_ids = sorted({rp for rp, _ in pairs})
    rc_ids = sorted({rc for _, rc in pairs})
    rows = context.session.execute(
        sa.select(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id,
                  sa.func.sum(_ALLOC.c.used))
        .where(_ALLOC.c.resource_provider_id.in_(rp_ids),
               _ALLOC.c.resource_class_id.in_(rc_ids))
        .group_by(_ALLOC.c.resource_provider_id,
                  _ALLOC.c.resource_class_id))
    return {(rp, rc): int(used) for rp, rc, used in rows}


def _check_capacity(context, rows, previous):
    """Raise unless ``rows`` fit the providers' inventories (one query)."""
    needed = collections.defaultdict(int)
    amounts = collections.defaultdict(list)
    for row in rows:
        key = (row.resource_provider_id, row.resource_class_id)
        needed[key] += row.used
        amounts[key].append(row.used)
    if not needed:
        return
    usage = (
        sa.select(_ALLOC.c.resource_provider_id, _ALLOC.c.resource_class_id,
                  sa.func.sum(_ALLOC.c.used).label('used'))
        .where(_ALLOC.c.resource_provider_id.in_(
            sorted({rp for rp, _ in needed})))
        .group_by(_ALLOC.c.resource_provider_id,
                  _ALLOC.c.resource_class_id)
        .subquery())
    query = (
        sa.select(_RP.c.id, _RP.c.uuid, _RC.c.id, _RC.c.name,
                  _INV.c.total, _INV.c.reserved, _INV.c.min_unit,
                  _INV.c.max_unit, _INV.c.step_size,
                  _INV.c.allocation_ratio,
                  sa.func.coalesce(usage.c.used, 0))
        .select_from(_RP.join(_INV, _INV.c.resource_provider_id == _RP.c.id)
                     .join(_RC, _RC.c.id == _INV.c.resource_class_id)
                     .outerjoin(usage, sa.and_(
                         usage.c.resource_provider_id == _RP.c.id,
                         usage.c.resource_class_id == _RC.c.id)))
        .where(_RP.c.id.in_(sorted({rp for rp, _ in needed})),
               _RC.c.id.in_(sorted({rc for _, rc in needed}))))
    inventories = {(r[0], r[2]): r for r in context.session.execute(query)}
    for key, amount in sorted(needed.items()):
        inv = inventories.get(key)
        if inv is None:
            raise exception.InvalidInventory(
                **_names(context, key))
        (_, rp_uuid, _, rc_name, total, reserved, min_unit, max_unit,
         step_size, ratio, used) = inv
        for single in amounts[key]:
            if single < min_unit or single > max_unit or \
                    single % step_size:
                raise exception.InvalidAllocationConstraintsViolated(
                    resource_provider=rp_uuid, resource_class=rc_name,
                    amount=single, min_unit=min_unit, max_unit=max_unit,
                    step_size=step_size)
        capacity = (total - reserved) * ratio
        if used + amount > capacity and \
                used + amount > previous.get(key, 0):
            # Over capacity and worse than before this change: refused.
            # Not worse (a consumer shrinking or leaving an over-capacity
            # provider) is allowed.
            raise exception.InvalidAllocationCapacityExceeded(
                resource_provider=rp_uuid, resource_class=rc_name,
                requested=amount, used=used, capacity=capacity)


def _names(context, key):
    rp_id, rc_id = key
    rp_uuid = context.session.execute(
        sa.select(_RP.c.uuid).where(_RP.c.id == rp_id)).scalar()
    rc_name = context.session.execute(
        sa.select(_RC.c.name).where(_RC.c.id == rc_id)).scalar()
    return {'resource_provider': rp_uuid or rp_id,
            'resource_class': rc_name or rc_id}


def _bump_generations(context, providers):
    """Compare-and-swap every provider's generation; {id: new}.

    ``providers`` maps id to (uuid, generation seen at the start).
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
                uuid=uuid)
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
    old_pairs = set()
    if consumer_ids:
        old_pairs = {tuple(p) for p in context.session.execute(
            sa.select(_ALLOC.c.resource_provider_id,
                      _ALLOC.c.resource_class_id)
            .where(_ALLOC.c.consumer_id.in_(consumer_ids)).distinct())}
    new_pairs = {(r.resource_provider_id, r.resource_class_id) for r in new}
    providers = sorted({rp for rp, _ in old_pairs | new_pairs})
    seen = {rp_id: (uuid, generation) for rp_id, uuid, generation in
            context.session.execute(
                sa.select(_RP.c.id, _RP.c.uuid, _RP.c.generation)
                .where(_RP.c.id.in_(providers)))} if providers else {}
    missing = sorted(set(providers) - set(seen))
    if missing:
        raise exception.ResourceProviderNotFound(key='id=%s' % missing[0])
    previous = _usage(context, new_pairs)
    if consumer_ids:
        context.session.execute(
            sa.delete(_ALLOC).where(_ALLOC.c.consumer_id.in_(consumer_ids)))
    _check_capacity(context, new, previous)
    if new:
        now = base.utcnow()
        context.session.execute(sa.insert(_ALLOC), [
            dict(row._asdict(), created_at=now) for row in new])
    return _bump_generations(context, seen)


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
