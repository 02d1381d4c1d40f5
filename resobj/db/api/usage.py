"""Usage reads and the capacity report: set-based SQL only.

Nothing here builds a row per allocation or runs a query per provider:
each function runs a fixed number of statements whatever the number of
providers, inventories or allocations, and sums happen in the database.

Sharing providers: a provider with the trait ``MISC_SHARES_VIA_AGGREGATE``
shares its inventory with every provider in one of its aggregates. That
inventory is still the sharing provider's own, so the capacity report
counts it once, under the sharing provider, and only *lists* the
providers that can use it. Adding the shared pool to each such provider's
own figures is the hypervisor-statistics bug the allocations spec cites
(one 10 TB Ceph pool behind 3 compute nodes reported as 30 TB).
"""

import collections

import functools

import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import consumer as consumer_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_class as rc_models
from resobj.db.models import resource_provider as rp_models
from resobj.db.models import trait as trait_models
from resobj.db.sql import resource_provider as sql
from resobj import exception

_ALLOC = alloc_models.Allocation.__table__
_CONSUMERS = consumer_models.Consumer.__table__
_PROJECTS = consumer_models.Project.__table__
_USERS = consumer_models.User.__table__
_TYPES = consumer_models.ConsumerType.__table__
_INV = inv_models.Inventory.__table__
_RC = rc_models.ResourceClass.__table__
_RP = rp_models.ResourceProvider.__table__
_RP_AGG = rp_models.ResourceProviderAggregate.__table__
_RP_TRAIT = rp_models.ResourceProviderTrait.__table__
_TRAIT = trait_models.Trait.__table__

SHARING_TRAIT = sql.SHARING_TRAIT
# How a consumer without a type is reported, as placement does.
UNKNOWN_TYPE = 'unknown'
# The consumer_type filter value that asks for every type, summed.
ALL_TYPES = 'all'


@functools.cache
def _provider_usage_stmt():
    # Built once: constructing the statement cost more than running it
    # (a provider's usages are read on every claim and report). Each
    # inventory carries its usage (see sql.INV).
    return (
        sa.select(_RP.c.generation, _RC.c.name, _INV.c.used)
        .select_from(
            _RP.outerjoin(_INV, _INV.c.resource_provider_id == _RP.c.id)
            .outerjoin(_RC, _RC.c.id == _INV.c.resource_class_id))
        .where(_RP.c.uuid == sa.bindparam('uuid'))
        .order_by(_RC.c.name))


@facade.reader
def get_provider_usages(context, provider_uuid):
    """A provider's generation and usage of every class it has.

    Returns {'resource_provider_generation': int, 'usages':
    [{resource_class, usage}]}, usages by class name, 0 for a class
    nothing uses; raises ResourceProviderNotFound when no provider has
    ``provider_uuid``.

    One query: the provider is outer-joined to its inventories, so a
    provider without inventory still returns one row (with no class),
    which tells it apart from a missing provider, and carries the
    generation a caller returns with the usages.
    """
    rows = utils.execute(
        context,
        _provider_usage_stmt(), {'uuid': provider_uuid}).all()
    if not rows:
        raise exception.ResourceProviderNotFound(key=provider_uuid)
    return {'resource_provider_generation': rows[0][0],
            'usages': [{'resource_class': name, 'usage': int(used)}
                       for _generation, name, used in rows
                       if name is not None]}


@functools.cache
def _project_usage_stmt(by_user, type_filter, with_counts=True,
                        by_type=True):
    """Sums per (type id, class id) and consumer counts per type id.

    One statement for both: a UNION ALL of the sums over the consumers'
    allocations and the count of the consumers holding anything (an
    index probe per consumer, so no DISTINCT; written as a scalar
    subquery because PostgreSQL turns an EXISTS into a semi-join that
    reads every consumer's allocations), with the names joined on
    the few grouped rows only. The project, user and type are looked up
    by scalar subqueries rather than joined row by row.
    ``type_filter``: None, ``'unknown'`` (untyped only) or ``'named'``
    (the type ``:consumer_type``). ``by_type=False``: sums per class and
    one count over every type, their type NULL (grouping on one column
    instead of two is cheaper). Rows: (type name or NULL, class name,
    amount), the class name NULL on count rows.

    Without types or counts (``GET /usages`` before 1.38) the consumers
    are not read at all: each allocation carries its consumer's project
    and user (see :func:`_owned_usage_stmt`).
    """
    if not (by_type or with_counts or type_filter):
        return _owned_usage_stmt(by_user)
    scope = [_CONSUMERS.c.project_id == _owner_id(_PROJECTS, 'project_id')]
    if by_user:
        scope.append(_CONSUMERS.c.user_id == _owner_id(_USERS, 'user_id'))
    if type_filter == UNKNOWN_TYPE:
        scope.append(_CONSUMERS.c.consumer_type_id.is_(None))
    elif type_filter is not None:
        scope.append(_CONSUMERS.c.consumer_type_id == sa.select(
            _TYPES.c.id).where(_TYPES.c.name == sa.bindparam(
                'consumer_type')).scalar_subquery())
    type_id = (_CONSUMERS.c.consumer_type_id if by_type
               else sa.cast(sa.null(), sa.Integer))
    type_keys = (type_id,) if by_type else ()
    sums = (
        sa.select(type_id.label('type_id'),
                  _ALLOC.c.resource_class_id.label('rc_id'),
                  sa.func.sum(_ALLOC.c.used).label('amount'))
        .select_from(_ALLOC.join(_CONSUMERS,
                                 _CONSUMERS.c.id == _ALLOC.c.consumer_id))
        .where(*scope)
        .group_by(*type_keys, _ALLOC.c.resource_class_id))
    counts = (
        sa.select(type_id, sa.cast(sa.null(), sa.Integer),
                  sa.func.count())
        .where(*scope, sa.select(sa.literal(1)).where(
            _ALLOC.c.consumer_id == _CONSUMERS.c.id).limit(1)
            .scalar_subquery().is_not(None))
        .group_by(*type_keys))
    grouped = (sa.union_all(sums, counts) if with_counts
               else sums).subquery('grouped')
    return (
        sa.select(_TYPES.c.name, _RC.c.name, grouped.c.amount)
        .select_from(
            grouped.outerjoin(_TYPES, _TYPES.c.id == grouped.c.type_id)
            .outerjoin(_RC, _RC.c.id == grouped.c.rc_id)))


def _owner_id(table, param):
    """Scalar subquery: the id of project or user ``:param`` (external)."""
    return sa.select(table.c.id).where(
        table.c.external_id == sa.bindparam(param)).scalar_subquery()


def _owned_usage_stmt(by_user):
    """Sums per class of a project's (and a user's) allocations.

    Rows (NULL, class name, amount), as :func:`_project_usage_stmt`'s.
    The allocations' copy of their consumer's owner (kept by the
    database, see resobj/db/models/allocation_owner.py) finds them by
    index, where a join of the project's consumers with every
    allocation reads far more rows.
    """
    scope = [_ALLOC.c.project_id == _owner_id(_PROJECTS, 'project_id')]
    if by_user:
        scope.append(_ALLOC.c.user_id == _owner_id(_USERS, 'user_id'))
    sums = (sa.select(_ALLOC.c.resource_class_id.label('rc_id'),
                      sa.func.sum(_ALLOC.c.used).label('amount'))
            .where(*scope).group_by(_ALLOC.c.resource_class_id)
            .subquery('grouped'))
    return (sa.select(sa.cast(sa.null(), sa.String), _RC.c.name,
                      sums.c.amount)
            .select_from(sums.join(_RC, _RC.c.id == sums.c.rc_id)))


@facade.reader
def get_all_by_project_user(context, project_id, user_id=None,
                            consumer_type=None, count_consumers=True):
    """Usage of a project's (and a user's) consumers, per class and type.

    ``project_id`` and ``user_id`` are external (Keystone) ids.
    ``consumer_type``: None reports each type on its own rows; a name
    keeps that type only, ``'unknown'`` the consumers without a type, and
    ``'all'`` sums every type into rows typed ``'all'``.

    Returns [{resource_class, usage, consumer_type, consumer_count}],
    where consumer_count is the number of distinct consumers of that
    type holding anything, the same on each of the type's rows; with
    ``count_consumers=False`` the rows have no consumer_count and the
    counting half of the statement is left out.

    The counts are per type, not per (type, class) row: a consumer
    holding VCPU and MEMORY_MB counts once. Both come from one statement
    (:func:`_project_usage_stmt`); the handful of grouped rows are
    merged here, where an untyped consumer and a type literally named
    'unknown' become one group, as in placement.
    """
    if consumer_type in (None, ALL_TYPES):
        type_filter = None
    elif consumer_type == UNKNOWN_TYPE:
        type_filter = UNKNOWN_TYPE
    else:
        type_filter = 'named'
    values = {'project_id': project_id, 'user_id': user_id,
              'consumer_type': consumer_type}

    def type_name(raw):
        if consumer_type == ALL_TYPES:
            return ALL_TYPES
        return UNKNOWN_TYPE if raw is None else raw

    counts, usages = {}, {}
    for ctype, rc_name, amount in utils.execute(
            context,
            _project_usage_stmt(user_id is not None, type_filter,
                                count_consumers,
                                by_type=consumer_type != ALL_TYPES),
            values):
        ctype = type_name(ctype)
        if rc_name is None:
            counts[ctype] = counts.get(ctype, 0) + int(amount)
        else:
            usages[ctype, rc_name] = usages.get((ctype, rc_name), 0) + \
                int(amount)
    rows = [{'resource_class': name, 'usage': used, 'consumer_type': ctype}
            for (ctype, name), used in sorted(usages.items())]
    if count_consumers:
        for row in rows:
            row['consumer_count'] = counts[row['consumer_type']]
    return rows


def _sharing_providers():
    """The ids of the providers that have the sharing trait."""
    return (sa.select(_RP_TRAIT.c.resource_provider_id)
            .select_from(_RP_TRAIT.join(
                _TRAIT, _TRAIT.c.id == _RP_TRAIT.c.trait_id))
            .where(_TRAIT.c.name == SHARING_TRAIT))


@facade.reader
def capacity_report(context):
    """Every provider's inventories and usage, and the cloud's totals.

    Three queries, whatever the number of providers and allocations:

    1. providers, each inventory with its capacity and usage, and
       whether the provider shares;
    2. the (sharing provider, provider it shares with) pairs, through
       common aggregates;
    3. the totals per class, summed in the database over the inventories
       table, where each provider's inventory is one row, so a shared
       pool counts once however many providers reach it.

    Returns {'providers': [{uuid, name, sharing, shares_with,
    shared_from, inventories: [{resource_class, total, reserved,
    allocation_ratio, capacity, used, free}]}],
    'totals': [{resource_class, total, reserved, capacity, used, free}]}
    with providers by name and classes by name. ``shares_with`` lists
    the uuids a sharing provider serves, ``shared_from`` the sharing
    providers a provider can draw from; neither changes any figure.
    """
    inventories = (
        sa.select(_INV.c.resource_provider_id, _RC.c.name, _INV.c.total,
                  _INV.c.reserved, _INV.c.allocation_ratio,
                  sql.capacity().label('capacity'), _INV.c.used)
        .select_from(_INV.join(_RC, _RC.c.id == _INV.c.resource_class_id))
        .subquery())
    sharing = _RP.c.id.in_(_sharing_providers())
    rows = utils.execute(
        context,
        sa.select(_RP.c.id, _RP.c.uuid, _RP.c.name,
                  sa.case((sharing, True), else_=False),
                  inventories.c.name, inventories.c.total,
                  inventories.c.reserved, inventories.c.allocation_ratio,
                  inventories.c.capacity, inventories.c.used)
        .select_from(
            _RP.outerjoin(inventories,
                          inventories.c.resource_provider_id == _RP.c.id))
        .order_by(_RP.c.name, inventories.c.name)).all()

    sharer = _RP_AGG.alias('sharer')
    member = _RP_AGG.alias('member')
    sharer_rp = _RP.alias('sharer_rp')
    member_rp = _RP.alias('member_rp')
    pairs = utils.execute(
        context,
        sa.select(sharer_rp.c.uuid, member_rp.c.uuid).distinct()
        .select_from(
            sharer.join(member, sa.and_(
                member.c.aggregate_id == sharer.c.aggregate_id,
                member.c.resource_provider_id !=
                sharer.c.resource_provider_id))
            .join(sharer_rp, sharer_rp.c.id == sharer.c.resource_provider_id)
            .join(member_rp, member_rp.c.id == member.c.resource_provider_id))
        .where(sharer.c.resource_provider_id.in_(_sharing_providers()))
        .order_by(sharer_rp.c.uuid, member_rp.c.uuid)).all()

    per_class = (
        sa.select(_INV.c.resource_class_id,
                  sa.func.sum(_INV.c.total).label('total'),
                  sa.func.sum(_INV.c.reserved).label('reserved'),
                  sa.func.sum(sql.capacity()).label('capacity'),
                  sa.func.sum(_INV.c.used).label('used'))
        .group_by(_INV.c.resource_class_id).subquery())
    totals = utils.execute(
        context,
        sa.select(_RC.c.name, per_class.c.total, per_class.c.reserved,
                  per_class.c.capacity, per_class.c.used)
        .select_from(
            per_class.join(_RC, _RC.c.id == per_class.c.resource_class_id))
        .order_by(_RC.c.name)).all()

    shares_with = collections.defaultdict(list)
    shared_from = collections.defaultdict(list)
    for sharer_uuid, member_uuid in pairs:
        shares_with[sharer_uuid].append(member_uuid)
        shared_from[member_uuid].append(sharer_uuid)
    providers = {}
    for (rp_id, uuid, name, is_sharing, rc_name, total, reserved, ratio,
         capacity, used) in rows:
        provider = providers.get(rp_id)
        if provider is None:
            provider = providers[rp_id] = {
                'uuid': uuid, 'name': name, 'sharing': bool(is_sharing),
                'shares_with': shares_with.get(uuid, []),
                'shared_from': shared_from.get(uuid, []),
                'inventories': []}
        if rc_name is not None:
            provider['inventories'].append({
                'resource_class': rc_name, 'total': total,
                'reserved': reserved, 'allocation_ratio': ratio,
                'capacity': int(capacity), 'used': int(used),
                'free': int(capacity) - int(used)})
    return {
        'providers': list(providers.values()),
        'totals': [{'resource_class': name, 'total': int(total),
                    'reserved': int(reserved), 'capacity': int(capacity),
                    'used': int(used), 'free': int(capacity) - int(used)}
                   for name, total, reserved, capacity, used in totals],
    }
