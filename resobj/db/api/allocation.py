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

from resobj.db.api import consumer as consumer_db
from resobj.db.api import resource_class as rc_db
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import consumer as consumer_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_class as rc_models
from resobj.db.models import resource_provider as rp_models
from resobj import exception

_ALLOC = alloc_models.Allocation.__table__
_INV = inv_models.Inventory.__table__
_RP = rp_models.ResourceProvider.__table__
_RC = rc_models.ResourceClass.__table__
_CONSUMER = consumer_models.Consumer.__table__
_PROJECT = consumer_models.Project.__table__
_USER = consumer_models.User.__table__
_TYPE = consumer_models.ConsumerType.__table__

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
    """Compare-and-swap every provider's generation.

    ``providers`` maps id to (uuid, generation read in this transaction);
    returns id to (uuid, new generation).
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
        bumped[rp_id] = (uuid, seen + 1)
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
    return {rp_id: generation for rp_id, (_, generation)
            in _replace(context, consumer_ids, rows).items()}


def _replace(context, consumer_ids, rows):
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


# Passed as a consumer's expected generation when the caller does not
# check it (clients that predate consumer generations).
ANY_GENERATION = '<any>'


def _provider_ids(context, uuids):
    uuids = sorted(set(uuids))
    found = dict(context.session.execute(
        sa.select(_RP.c.uuid, _RP.c.id).where(_RP.c.uuid.in_(uuids))
    ).all()) if uuids else {}
    missing = sorted(set(uuids) - set(found))
    if missing:
        raise exception.ResourceProviderNotFound(key=missing[0])
    return found


def _ensure_consumer(context, request):
    """The consumer row for ``request``, created or checked; its dict."""
    expected = request.get('generation', ANY_GENERATION)
    try:
        row = consumer_db.get_by_uuid(context, request['consumer_uuid'])
    except exception.ConsumerNotFound:
        if expected not in (None, ANY_GENERATION):
            raise exception.ConcurrentUpdateDetected(
                what='consumer generation conflict - expected %s but got '
                     'None; consumer %s' % (expected,
                                            request['consumer_uuid']),
                generation=expected)
        project = consumer_db.get_or_create_project(
            context, request['project_id'])
        user = consumer_db.get_or_create_user(context, request['user_id'])
        return consumer_db.create(
            context, request['consumer_uuid'], project['id'], user['id'],
            consumer_type=request.get('consumer_type'))
    if expected is not ANY_GENERATION and expected != row['generation']:
        raise exception.ConcurrentUpdateDetected(
            what='consumer generation conflict - expected %s but got %s; '
                 'consumer %s' % (expected, row['generation'],
                                  request['consumer_uuid']),
            generation=expected)
    _update_owner(context, row, request)
    return row


def _update_owner(context, row, request):
    """Give an existing consumer the request's project, user and type.

    A client may name another owner than the stored one (an allocation
    written before 1.8 has the incomplete-consumer placeholders, which a
    later write fills in); the newest request wins, as in placement. The
    generation is not bumped here: replace_all bumps it once.
    """
    changes = {}
    if request['project_id'] != row['project_external_id']:
        changes['project_id'] = consumer_db.get_or_create_project(
            context, request['project_id'])['id']
    if request['user_id'] != row['user_external_id']:
        changes['user_id'] = consumer_db.get_or_create_user(
            context, request['user_id'])['id']
    consumer_type = request.get('consumer_type')
    if consumer_type is not None and consumer_type != row['consumer_type']:
        changes['consumer_type'] = consumer_type
    if changes:
        consumer_db.update(context, row['id'], row['generation'], changes)


@facade.retrying_writer(exception.ResourceProviderConcurrentUpdateDetected)
def replace_all(context, requests):
    """Replace the allocations of one or more consumers, atomically.

    Each request is a dict: consumer_uuid, project_id and user_id
    (external ids), optional consumer_type, generation (the consumer
    generation the caller saw: None for a consumer it believes new; leave
    it out, or pass ANY_GENERATION, not to check) and allocations, a list
    of {resource_provider_uuid, resource_class, used}; an empty list
    removes the consumer's allocations (and the consumer).

    One transaction: consumers are created or checked (a consumer
    generation mismatch raises ConcurrentUpdateDetected and is NOT
    retried: the caller's view is stale), allocations replaced as in
    replace_for_consumers, every consumer's generation bumped, emptied
    consumers deleted. Provider generation conflicts are retried
    (``max_retries=``). Returns ({consumer uuid: new generation, or None
    when deleted}, {provider uuid: new generation}).
    """
    allocations = [a for r in requests for a in r['allocations']]
    rp_ids = _provider_ids(
        context, [a['resource_provider_uuid'] for a in allocations])
    rc_ids = rc_db.ids_by_names(
        context, [a['resource_class'] for a in allocations])
    consumers = {}
    rows = []
    for request in requests:
        consumer = _ensure_consumer(context, request)
        consumers[request['consumer_uuid']] = consumer
        rows += [(rp_ids[a['resource_provider_uuid']], consumer['id'],
                  rc_ids[a['resource_class']], a['used'])
                 for a in request['allocations']]
    bumped = _replace(context, [c['id'] for c in consumers.values()], rows)
    generations = {
        uuid: consumer_db.increment_generation(context, c['id'],
                                               c['generation'])
        for uuid, c in consumers.items()}
    held = {row[1] for row in rows if row[3] > 0}
    emptied = [c['id'] for c in consumers.values() if c['id'] not in held]
    consumer_db.delete_if_no_allocations(context, emptied)
    for uuid, c in consumers.items():
        if c['id'] not in held:
            generations[uuid] = None
    return generations, dict(bumped.values())


@facade.writer
def delete_all(context, consumer_uuid):
    """Remove a consumer's allocations and the consumer itself.

    ConsumerNotFound if there is no such consumer. Like the reference
    service, this does not bump provider generations: usage only went
    down, which makes no concurrent claim unsafe.
    """
    consumer = consumer_db.get_by_uuid(context, consumer_uuid)
    context.session.execute(
        sa.delete(_ALLOC).where(_ALLOC.c.consumer_id == consumer['id']))
    consumer_db.destroy(context, consumer['id'])


def _select_allocations():
    return (sa.select(_RP.c.uuid.label('resource_provider_uuid'),
                      _RP.c.generation.label('resource_provider_generation'),
                      _RC.c.name.label('resource_class'),
                      _ALLOC.c.used, _ALLOC.c.created_at,
                      _CONSUMER.c.uuid.label('consumer_uuid'),
                      _CONSUMER.c.generation.label('consumer_generation'),
                      _PROJECT.c.external_id.label('project_id'),
                      _USER.c.external_id.label('user_id'),
                      _TYPE.c.name.label('consumer_type'))
            .select_from(
                _ALLOC.join(_RP, _RP.c.id == _ALLOC.c.resource_provider_id)
                .join(_RC, _RC.c.id == _ALLOC.c.resource_class_id)
                .join(_CONSUMER, _CONSUMER.c.id == _ALLOC.c.consumer_id)
                .join(_PROJECT, _PROJECT.c.id == _CONSUMER.c.project_id)
                .join(_USER, _USER.c.id == _CONSUMER.c.user_id)
                .outerjoin(_TYPE,
                           _TYPE.c.id == _CONSUMER.c.consumer_type_id)))


@facade.reader
def get_all_by_consumer(context, consumer_uuid):
    """A consumer's allocations with provider and class names: one query."""
    return [dict(r) for r in context.session.execute(
        _select_allocations().where(_CONSUMER.c.uuid == consumer_uuid)
        .order_by(_RP.c.id, _RC.c.id)).mappings()]


@facade.reader
def get_all_by_provider(context, provider_uuid):
    """A provider's allocations, one row per consumer and class."""
    return [dict(r) for r in context.session.execute(
        _select_allocations().where(_RP.c.uuid == provider_uuid)
        .order_by(_ALLOC.c.id)).mappings()]
