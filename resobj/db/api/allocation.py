"""The allocation write path and usage reads: set-based SQL only.

Replacing a set of consumers' allocations is one transaction of at most
four statements (on MySQL, one more per provider beyond the first),
however many allocations exist:

1. ONE query reads, for the new rows' providers and the providers the
   consumers hold allocations on now: each provider's generation, whether
   the consumers hold anything there, and for every (provider, class) the
   new rows need its inventory, its usage and the consumers' own share of
   that usage. Every new row is checked against it: inventory exists,
   each amount respects min_unit, max_unit and step_size, and usage
   without the consumers' own rows + amount fits the capacity
   ``(total - reserved) * allocation_ratio`` -- or at least does not make
   an already over-capacity provider worse, so consumers can still leave
   or shrink after an inventory was lowered;
2. delete the consumers' rows (skipped when they hold none);
3. insert the new rows;
4. bump the generation of every provider whose usage changed, a
   compare-and-swap against the generation read in step 1 with the
   usage: one UPDATE ... RETURNING for all of them, where a provider it
   does not return has moved (one UPDATE per provider on MySQL). On
   PostgreSQL steps 3 and 4 are one statement, the insert a WITH of the
   UPDATE: a round trip fewer for every claim.

Before these, one statement resolves the write's names and uuids to ids
(:func:`_ids`); on PostgreSQL it also inserts a new consumer whose
owners exist, in a WITH (:func:`sql.allocation.create_consumer_query`),
another round trip fewer for a claim. There, the usual claim (a new
consumer of known owners, on known providers and classes, that fits)
is first tried as one statement of its own (:func:`_one_statement_claim`,
:func:`sql.allocation.claim_query`); these steps run when that statement
wrote nothing, and word its errors.

Concurrent writers on the same provider therefore cannot both commit: the
second one's compare-and-swap finds the generation moved and raises
ResourceProviderConcurrentUpdateDetected, rolling its transaction back;
callers retry that (and deadlocks) with a fresh transaction.

The statements are built once for each length of the lists they bind
(sql.resource_provider.in_list; a claim's lists are short, and a list
longer than MAX_SLOTS is an expanding parameter instead): a claim takes
little database time, and building and cache-keying SQLAlchemy constructs per
call, or rendering expanding parameters into the SQL on every
execution, cost as much. They run on the transaction's Core
connection, not through an ORM session.
"""

import collections
import functools

import sqlalchemy as sa

from resobj.db.api import consumer as consumer_db
from resobj.db.api import utils
from resobj.db import backends
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import consumer as consumer_models
from resobj.db.models import resource_class as rc_models
from resobj.db.models import resource_provider as rp_models
from resobj.db.sql import allocation as alloc_sql
from resobj.db.sql import resource_provider as sql
from resobj import exception

_ALLOC = alloc_models.Allocation.__table__
_RP = rp_models.ResourceProvider.__table__
_RC = rc_models.ResourceClass.__table__
_CONSUMER = consumer_models.Consumer.__table__
_PROJECT = consumer_models.Project.__table__
_USER = consumer_models.User.__table__
_TYPE = consumer_models.ConsumerType.__table__

Row = collections.namedtuple(
    'Row', 'resource_provider_id consumer_id resource_class_id used')


_CLASS_NAME = sa.select(_RC.c.name).where(_RC.c.id == sa.bindparam('id'))


def _snapshot(conn, consumer_ids, rows, fresh=False):
    """Step 1: read and check; nothing is written.

    ``fresh``: the consumers are new in this transaction (see
    :func:`sql.allocation.snapshot_query`).

    Raises unless every row fits. Returns ({rp_id: (uuid, generation)}
    for every provider involved, whether the consumers hold any row).
    """
    needed = collections.defaultdict(int)
    amounts = collections.defaultdict(list)
    for row in rows:
        key = (row.resource_provider_id, row.resource_class_id)
        needed[key] += row.used
        amounts[key].append(row.used)
    rp_ids = sorted({rp for rp, _ in needed})
    providers, inventories = {}, {}
    held_any = False
    counts, values = sql.list_params({
        'consumer_ids': consumer_ids, 'rp_ids': rp_ids,
        'rc_ids': sorted({rc for _, rc in needed})})
    for (rp_id, uuid, generation, held, rc_id, total, reserved, min_unit,
         max_unit, step_size, ratio, used, own) in conn.execute(
            alloc_sql.snapshot_query(fresh, counts), values):
        providers[rp_id] = (uuid, generation)
        held_any = held_any or bool(held)
        if rc_id is not None:
            # MySQL sums are Decimals.
            inventories[(rp_id, rc_id)] = (
                total, reserved, min_unit, max_unit, step_size, ratio,
                int(used) - int(own), int(own))
    missing = sorted(set(rp_ids) - set(providers))
    if missing:
        raise exception.ResourceProviderNotFound(key='id=%s' % missing[0])
    if {rp_id for rp_id, _ in needed} - {rp_id for rp_id, _ in inventories}:
        # As placement: a provider with none of the request's classes is
        # reported before any amount is checked.
        raise _no_inventory(conn, providers, inventories, needed, None)
    for key, amount in sorted(needed.items()):
        rp_uuid = providers[key[0]][0]
        if key not in inventories:
            raise _no_inventory(conn, providers, inventories, needed, key)
        (total, reserved, min_unit, max_unit, step_size, ratio,
         used, own) = inventories[key]
        for single in amounts[key]:
            if single < min_unit or single > max_unit or \
                    single % step_size:
                raise exception.InvalidAllocationConstraintsViolated(
                    resource_provider=rp_uuid,
                    resource_class=_class_name(conn, key[1]),
                    amount=single, min_unit=min_unit, max_unit=max_unit,
                    step_size=step_size)
        # ``used`` leaves out the consumers' own rows, which this
        # change replaces.
        capacity = (total - reserved) * ratio
        if used + amount > capacity and amount > own:
            # Over capacity and worse than before this change: refused.
            # Not worse (a consumer shrinking or leaving an over-capacity
            # provider) is allowed.
            raise exception.InvalidAllocationCapacityExceeded(
                resource_provider=rp_uuid,
                resource_class=_class_name(conn, key[1]),
                requested=amount, used=used, capacity=capacity)
    return providers, held_any


def _no_inventory(conn, providers, inventories, needed, key):
    """InvalidInventory in placement's words.

    ``needed``: the (rp_id, rc_id) pairs asked for; ``inventories``: the
    pairs of their providers and classes with inventory; ``key``: the
    pair found missing first, None if none was looked at yet. As
    placement answers: the providers with inventory of none of the
    request's classes are named with every class of the request (each
    named provider has none of the named classes); when every provider
    has some of them, the first (provider, class) without inventory is.
    Classes by name, providers in the order they were created.
    """
    stocked = {rp_id for rp_id, _ in inventories}
    empty = sorted({rp_id for rp_id, _ in needed} - stocked)
    if empty:
        rc_ids = {rc_id for _, rc_id in needed}
    else:
        empty, rc_ids = [key[0]], {key[1]}
    names = sorted(str(_class_name(conn, rc_id)) for rc_id in rc_ids)
    return exception.InvalidInventory(
        resource_provider=', '.join(providers[rp_id][0] for rp_id in empty),
        resource_class=', '.join(names))


def _class_name(conn, rc_id):
    # Only on the error path: one more query there is fine.
    return conn.execute(_CLASS_NAME, {'id': rc_id}).scalar() or rc_id


def _insert_with_bump(conn, rows, seen):
    """Steps 3 and 4 as one statement (PostgreSQL); the ids bumped.

    A claim is a handful of round trips, each costing more than the
    database's work on it: the new rows go in through a data-modifying
    WITH of the compare-and-swap UPDATE, which PostgreSQL runs to
    completion whether or not the UPDATE reads it.
    """
    columns = list(zip(*((row.resource_provider_id, row.consumer_id,
                          row.resource_class_id, row.used) for row in rows)))
    count, values = alloc_sql.seen_params(seen)
    return set(conn.execute(alloc_sql.insert_with_bump_query(count), dict(
        values, rps=list(columns[0]), consumers=list(columns[1]),
        rcs=list(columns[2]), useds=list(columns[3]),
        now=base.utcnow())).scalars())


def _bump(conn, seen):
    """Compare-and-swap the (id, generation) pairs ``seen``; ids bumped."""
    if conn.dialect.update_returning:
        count, values = alloc_sql.seen_params(seen)
        return set(conn.execute(alloc_sql.bump_query(count, returning=True),
                                values).scalars())
    bumped = set()
    for rp_id, gen in seen:
        if not conn.execute(alloc_sql.bump_query(1),
                            alloc_sql.seen_params([(rp_id, gen)])[1]).rowcount:
            break
        bumped.add(rp_id)
    return bumped


def _insert_and_bump(conn, providers, rows):
    """Steps 3 and 4: insert ``rows``, compare-and-swap every generation.

    ``providers`` maps id to (uuid, generation read in this transaction);
    returns id to (uuid, new generation). One UPDATE for all providers
    where the database returns the ids it updated (PostgreSQL, SQLite),
    so the ones missing are those that moved; on PostgreSQL the insert
    is a WITH of that UPDATE (:func:`_insert_with_bump`). MySQL and
    MariaDB have no UPDATE ... RETURNING and a rowcount cannot name the
    provider that moved: there, one UPDATE per provider (one in all for
    a claim on a single provider).
    """
    # Every row's provider is among ``providers`` (step 1 checked it).
    seen = sorted((rp_id, gen) for rp_id, (_, gen) in providers.items())
    if not seen:
        return {}
    if rows and backends.for_dialect(conn.dialect.name).WRITES_IN_WITH:
        bumped = _insert_with_bump(conn, rows, seen)
    else:
        if rows:
            now = base.utcnow()
            conn.execute(alloc_sql.INSERT,
                         [dict(row._asdict(), created_at=now)
                          for row in rows])
        bumped = _bump(conn, seen)
    for rp_id, gen in seen:
        if rp_id not in bumped:
            raise exception.ResourceProviderConcurrentUpdateDetected(
                provider=providers[rp_id][0], generation=gen)
    return {rp_id: (providers[rp_id][0], gen + 1) for rp_id, gen in seen}


@facade.retrying_writer(exception.ResourceProviderConcurrentUpdateDetected,
                        connection=True)
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
            in _replace(context.connection, consumer_ids, rows).items()}


def _replace(conn, consumer_ids, rows, fresh=False):
    """Steps 1 to 4 on ``conn``, the transaction's Core connection.

    ``fresh``: every consumer was created in this transaction.
    """
    # In (provider, class) order: each row's trigger locks its inventory
    # row (see sql.INV), and writers that lock in one order cannot
    # deadlock on them.
    rows = sorted((Row(*row) for row in rows), key=lambda row: (
        row.resource_provider_id, row.resource_class_id))
    new = [row for row in rows if row.used > 0]
    consumer_ids = sorted(set(consumer_ids) | {r.consumer_id for r in rows})
    if not consumer_ids:
        return {}
    providers, held = _snapshot(conn, consumer_ids, new, fresh)
    if held:
        counts, values = sql.list_params({'consumer_ids': consumer_ids})
        conn.execute(alloc_sql.delete_query(counts), values)
    return _insert_and_bump(conn, providers, new)


# Passed as a consumer's expected generation when the caller does not
# check it (clients that predate consumer generations).
ANY_GENERATION = '<any>'


def _ids(context, requests, create=None):
    """The ids a write of ``requests`` needs, in one statement.

    Returns {'rp': {uuid: id}, 'rc': {name: id}, 'project': {external id:
    id}, 'user': {...}, 'type': {name: id}, 'consumer': {uuid: id},
    'created': {None: id}}. ``create``: a request whose consumer this
    statement inserts if it is new and its owners exist (PostgreSQL;
    see :func:`sql.allocation.create_consumer_query`); 'created'
    holds its id then.
    Unknown providers, classes and owners are left out (see
    :func:`_check_known`; a new consumer's owners are created).
    """
    allocations = [a for r in requests for a in r['allocations']]
    uuids = {a['resource_provider_uuid'] for a in allocations}
    names = {a['resource_class'] for a in allocations}
    found = {'rp': {}, 'rc': {}, 'project': {}, 'user': {}, 'type': {},
             'consumer': {}, 'created': {}}
    counts, values = sql.list_params({
        'uuids': sorted(uuids), 'names': sorted(names),
        'projects': sorted({r['project_id'] for r in requests}),
        'users': sorted({r['user_id'] for r in requests}),
        'types': sorted({r['consumer_type'] for r in requests
                         if r.get('consumer_type') is not None}),
        'consumers': sorted({r['consumer_uuid'] for r in requests})})
    typed = None
    if create is not None:
        typed, created = _new_consumer_values(create)
        values.update(created)
    for kind, key, row_id in utils.execute(
            context, alloc_sql.ids_query(counts, typed), values):
        found[kind][key] = row_id
    return found


def _new_consumer_values(request):
    """(typed, values): what sql.allocation.create_consumer_query binds.

    For ``request``'s consumer; ``typed``: it has a consumer type.
    """
    return request.get('consumer_type') is not None, {
        'new_uuid': request['consumer_uuid'],
        'new_project': request['project_id'],
        'new_user': request['user_id'],
        'new_type': request.get('consumer_type'),
        'now': base.utcnow()}


def _check_known(request, ids):
    """ResourceProviderNotFound or ResourceClassNotFound for ``request``.

    The first unknown provider, then the first unknown class, in the
    order of the request, as placement reports them: after every
    consumer's generation is checked.
    """
    for allocation in request['allocations']:
        if allocation['resource_provider_uuid'] not in ids['rp']:
            raise exception.ResourceProviderNotFound(
                key=allocation['resource_provider_uuid'])
    for allocation in request['allocations']:
        if allocation['resource_class'] not in ids['rc']:
            raise exception.ResourceClassNotFound(
                name=allocation['resource_class'])


def _ensure_consumer(context, request, ids):
    """The consumer row for ``request``, created or checked; its dict.

    ``ids``: what :func:`_ids` found.
    """
    expected = request.get('generation', ANY_GENERATION)
    if ids['created']:
        # Inserted by the ids statement (see _ids), at the generation
        # this write gives it, as below.
        return {'id': ids['created'][None], 'generation': 1, 'new': True}
    try:
        if request['consumer_uuid'] not in ids['consumer']:
            # Known absent from the ids statement: no lookup. A consumer
            # created concurrently since is caught by the insert below.
            raise exception.ConsumerNotFound(key=request['consumer_uuid'])
        row = consumer_db.get_by_uuid(context, request['consumer_uuid'])
    except exception.ConsumerNotFound:
        if expected not in (None, ANY_GENERATION):
            raise exception.ConsumerGenerationConflict(
                consumer=request['consumer_uuid'], actual=None,
                given=expected)
        project_id, user_id, type_id = consumer_db.owner_ids(
            context, request['project_id'], request['user_id'],
            request.get('consumer_type'), known=ids)
        # Inserted at the generation this write gives it: the row is new
        # in this transaction, so nobody can have seen generation 0, and
        # the compare-and-swap bump is a statement saved.
        try:
            consumer_id = consumer_db.insert(
                context, request['consumer_uuid'], project_id, user_id,
                type_id, generation=1)
        except exception.ConsumerExists:
            # Another request created it since this one looked: the
            # caller's "new consumer" view is stale, which clients retry
            # on (placement answers this race the same way).
            raise exception.ConsumerGenerationConflict(
                consumer=request['consumer_uuid'], actual=1, given=None)
        return {'id': consumer_id, 'generation': 1, 'new': True}
    if expected is not ANY_GENERATION and expected != row['generation']:
        raise exception.ConsumerGenerationConflict(
            consumer=request['consumer_uuid'], actual=row['generation'],
            given=expected)
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


def _one_statement_claim(context, requests):
    """A new consumer's claim in one statement, where the backend can.

    For one new consumer (generation None: the caller asserts it is new)
    allocating a positive amount of each requested (provider, class),
    each pair once, on a backend whose WITH clauses write: see
    :func:`resobj.db.sql.allocation.claim_query`. Returns
    :func:`replace_all`'s answer ({consumer uuid: 1}, {provider uuid:
    new generation}), or None if it does not apply or the statement
    wrote nothing: the caller then takes the general path in the same
    transaction. A provider whose generation moved since the statement
    read it raises ResourceProviderConcurrentUpdateDetected, for the
    caller to roll back and retry.
    """
    if len(requests) != 1:
        return None
    request = requests[0]
    allocations = request['allocations']
    if request.get('generation', ANY_GENERATION) is not None or \
            not allocations:
        return None
    pairs = {(a['resource_provider_uuid'], a['resource_class'])
             for a in allocations if a['used'] > 0}
    if len(pairs) != len(allocations) or not backends.for_dialect(
            context.session.get_bind().dialect.name).WRITES_IN_WITH:
        return None
    typed, values = _new_consumer_values(request)
    values.update(
        rp_uuids=[a['resource_provider_uuid'] for a in allocations],
        rc_names=[a['resource_class'] for a in allocations],
        amounts=[a['used'] for a in allocations],
        rows=len(allocations))
    found = utils.execute(context, alloc_sql.claim_query(typed),
                          values).all()
    if not found:
        return None
    for row in found:
        if not row.bumped:
            raise exception.ResourceProviderConcurrentUpdateDetected(
                provider=row.uuid, generation=row.generation)
    return ({request['consumer_uuid']: 1},
            {row.uuid: row.generation + 1 for row in found})


def _missing_owners(requests, ids):
    """The owners ``requests`` name that :func:`_ids` did not find.

    As keyword arguments of consumer.create_owners.
    """
    def unknown(kind, values):
        return sorted({v for v in values if v is not None} - set(ids[kind]))
    return {
        'projects': unknown('project', (r['project_id'] for r in requests)),
        'users': unknown('user', (r['user_id'] for r in requests)),
        'types': unknown('type', (r.get('consumer_type')
                                  for r in requests))}


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

    Projects, users and consumer types the requests name that do not
    exist yet are created before, in a transaction of their own
    (a facade.Prerequisite) that commits whatever becomes of the write,
    as placement creates them: a burst of claims for a new tenant
    would otherwise each insert the same new project in a transaction
    that may roll back (a claim refused for capacity), failing the
    others that wait on that row.

    A new consumer's claim is first tried as one statement, where the
    backend allows it (:func:`_one_statement_claim`); when that
    statement writes nothing, the general path below runs in the same
    transaction.
    """
    claimed = _one_statement_claim(context, requests)
    if claimed is not None:
        return claimed
    create = None
    backend = backends.for_dialect(context.session.get_bind().dialect.name)
    if backend.WRITES_IN_WITH and len(requests) == 1 and requests[0].get(
            'generation', ANY_GENERATION) in (None, ANY_GENERATION):
        # A consumer that may be new: created by the ids statement if
        # it is and its owners exist.
        create = requests[0]
    ids = _ids(context, requests, create)
    missing = _missing_owners(requests, ids)
    if any(missing.values()):
        raise facade.Prerequisite(functools.partial(
            consumer_db.create_owners, context, **missing))
    rp_ids, rc_ids = ids['rp'], ids['rc']
    consumers = {}
    rows = []
    for request in requests:
        consumers[request['consumer_uuid']] = _ensure_consumer(
            context, request, ids)
    for request in requests:
        _check_known(request, ids)
        consumer = consumers[request['consumer_uuid']]
        rows += [(rp_ids[a['resource_provider_uuid']], consumer['id'],
                  rc_ids[a['resource_class']], a['used'])
                 for a in request['allocations']]
    bumped = _replace(context.session.connection(),
                      [c['id'] for c in consumers.values()], rows,
                      fresh=all(c.get('new') for c in consumers.values()))
    generations = {
        uuid: c['generation'] if c.get('new') else
        consumer_db.increment_generation(context, c['id'], c['generation'])
        for uuid, c in consumers.items()}
    held = {row[1] for row in rows if row[3] > 0}
    emptied = [c['id'] for c in consumers.values() if c['id'] not in held]
    consumer_db.delete_if_no_allocations(context, emptied)
    for uuid, c in consumers.items():
        if c['id'] not in held:
            generations[uuid] = None
    return generations, dict(bumped.values())


@facade.retrying_writer()
def delete_all(context, consumer_uuid):
    """Remove a consumer's allocations and the consumer itself.

    ConsumerNotFound if there is no such consumer. Like the reference
    service, this does not bump provider generations: usage only went
    down, which makes no concurrent claim unsafe. Retried on deadlocks:
    the inventories' usage triggers lock inventory rows, which a claim
    on the same providers locks too.
    """
    consumer = consumer_db.get_by_uuid(context, consumer_uuid)
    utils.execute(
        context,
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
    return [dict(r) for r in utils.execute(
        context,
        _select_allocations().where(_CONSUMER.c.uuid == consumer_uuid)
        .order_by(_RP.c.id, _RC.c.id)).mappings()]


@facade.reader
def get_all_by_provider(context, provider_uuid):
    """A provider's allocations, one row per consumer and class."""
    return [dict(r) for r in utils.execute(
        context,
        _select_allocations().where(_RP.c.uuid == provider_uuid)
        .order_by(_ALLOC.c.id)).mappings()]
