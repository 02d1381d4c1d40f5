"""SQL clauses shared by the provider, usage and candidate queries.

Plain SQLAlchemy Core expressions over the provider tables: no context,
no session, nothing runs here. ``resobj.db.api.resource_provider``
(provider filters), ``usage`` (capacity figures) and
``resobj.search`` (the candidate search's statements) compose them, so the
capacity rule, the aggregate and trait filters and the name-to-id
lookups are written once.
"""

import sqlalchemy as sa

from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models

RP = rp_models.ResourceProvider.__table__
AGG = rp_models.PlacementAggregate.__table__
RP_AGG = rp_models.ResourceProviderAggregate.__table__
RP_TRAIT = rp_models.ResourceProviderTrait.__table__
# A provider with this trait shares its inventory with every provider in
# one of its aggregates.
SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'

# ``INV.c.used`` is the sum of the inventory's allocations, kept by the
# database (see resobj/db/models/inventory_usage.py): usage is read from
# it, never summed from the allocations.
INV = inv_models.Inventory.__table__


# Lists up to this long get statements built for their length (see
# in_list); a longer one is one expanding parameter.
MAX_SLOTS = 32


def in_list(column, param, count=None):
    """``column`` IN the list bound as ``param``.

    ``count`` None: one expanding parameter, which SQLAlchemy renders
    into the SQL on every execution (its post-compile step, CPU that a
    claim pays for each of its statements). ``count`` N:
    the statement is built for a list of N and binds ``param_0`` ...
    ``param_{N-1}`` (:func:`list_params`), so it compiles once.
    PostgreSQL sees the same SQL either way: a ``= ANY(array)`` would
    spare the rendering too, but PostgreSQL then plans every execution
    of it anew, where the expanded form keeps a cached plan.
    """
    if count is None:
        return column.in_(sa.bindparam(param, expanding=True))
    return column.in_([sa.bindparam('%s_%d' % (param, i))
                       for i in range(count)])


def list_params(lists):
    """(counts, values) to bind ``lists``, {param: list}, with in_list.

    ``counts``: the lists' lengths in the order of ``lists`` (the key of
    the statement built for them), or None if one is longer than
    MAX_SLOTS: then every list is one expanding parameter.
    """
    counts = tuple(len(values) for values in lists.values())
    if max(counts, default=0) > MAX_SLOTS:
        return None, dict(lists)
    return counts, {'%s_%d' % (param, i): value
                    for param, values in lists.items()
                    for i, value in enumerate(values)}


def ids_of(kind, column, param, *extra, count=None):
    """One branch of a UNION ALL that turns keys of several kinds to ids.

    Rows ``('kind', key, id, *extra)`` for the rows of ``column``'s table
    whose ``column`` is in the list ``param`` (see :func:`in_list`): a
    write or a search resolves all its names and uuids in one statement.
    """
    return sa.select(
        sa.literal_column("'%s'" % kind).label('kind'),
        column.label('key'), column.table.c.id.label('id'), *extra,
    ).where(in_list(column, param, count))


def usable(inv=INV):
    """(total - reserved) * allocation_ratio: what may be allocated.

    Not rounded: the capacity test compares usage with it as it is.
    """
    return (inv.c.total - inv.c.reserved) * inv.c.allocation_ratio


def capacity(inv=INV):
    """int((total - reserved) * allocation_ratio), alike on every backend.

    CAST(... AS INTEGER) rounds on PostgreSQL and MySQL but truncates on
    SQLite; FLOOR truncates everywhere for the non-negative values the
    inventory checks allow.
    """
    return sa.cast(sa.func.floor(usable(inv)), sa.BigInteger)


def room_for(rc_id, amount, few=False):
    """Conditions on INV for ``amount`` more of ``rc_id``.

    The inventory's usage is its own ``used``. ``few``: the caller
    limits the providers otherwise (a tree, a few roots); the class test
    is then written so that no index can serve it, or planners without
    statistics (SQLite, PostgreSQL before its first ANALYZE) walk every
    inventory of the class instead of the few providers' own. ``rc_id``
    and ``amount`` may be values or bound parameters. The rule itself
    is :func:`fits`.
    """
    if not isinstance(amount, sa.ClauseElement):
        amount = sa.literal(amount, sa.Integer)
    rc = INV.c.resource_class_id + 0 if few else INV.c.resource_class_id
    return sa.and_(rc == rc_id, fits(
        amount, INV.c.used, INV.c.min_unit, INV.c.max_unit,
        INV.c.step_size, usable()))


def fits(amount, used, min_unit, max_unit, step_size, usable):
    """The capacity rule of placement, on the given columns.

    ``amount`` within min_unit and max_unit and a multiple of
    step_size, and used + amount within ``usable`` (see :func:`usable`).
    The columns may come from INV or from a subquery that read them.
    """
    return sa.and_(min_unit <= amount, max_unit >= amount,
                   amount % step_size == 0, used + amount <= usable)


def with_room(rc_id, amount):
    """RP rows that can take ``amount`` more of class ``rc_id``."""
    return RP.c.id.in_(
        sa.select(INV.c.resource_provider_id)
        .where(room_for(rc_id, amount)))


def _values(values):
    """A bound parameter as it is, or the values sorted, once each."""
    if isinstance(values, sa.BindParameter):
        return values
    return sorted(set(values))


def in_aggregates(aggregate_uuids, through_root=True):
    """RP rows in any of the aggregates, directly or through their root.

    ``aggregate_uuids``: uuids, or an expanding bound parameter.
    ``through_root=False``: direct membership only (placement's rule for
    a suffixed candidate request group).
    """
    members = sa.select(RP_AGG.c.resource_provider_id).select_from(
        RP_AGG.join(AGG, AGG.c.id == RP_AGG.c.aggregate_id)).where(
        AGG.c.uuid.in_(_values(aggregate_uuids)))
    if not through_root:
        return RP.c.id.in_(members)
    return sa.or_(RP.c.id.in_(members), RP.c.root_provider_id.in_(members))


def with_any_trait(trait_ids):
    """RP rows having at least one of the traits ``trait_ids``.

    ``trait_ids``: ids, or an expanding bound parameter.
    """
    return RP.c.id.in_(sa.select(RP_TRAIT.c.resource_provider_id).where(
        RP_TRAIT.c.trait_id.in_(_values(trait_ids))))


def in_tree_of(provider_uuid):
    """RP rows in the same tree as the provider ``provider_uuid``."""
    return RP.c.root_provider_id == sa.select(
        RP.c.root_provider_id).where(
        RP.c.uuid == provider_uuid).scalar_subquery()
