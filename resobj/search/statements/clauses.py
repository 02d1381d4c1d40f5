"""The conditions and columns the candidate statements share."""

import sqlalchemy as sa

from resobj.db.models import resource_class as rc_models
from resobj.db.models import trait as trait_models
from resobj.db import provider_sql as sql

RC = rc_models.ResourceClass.__table__
TRAIT = trait_models.Trait.__table__


def int_param(name):
    return sa.bindparam(name, type_=sa.Integer)


def list_param(name):
    """An expanding parameter: a list of values."""
    return sa.bindparam(name, expanding=True)


def root_clauses(root_id, root_filter):
    """``root_id`` (a root provider id column) passes ``root_required``.

    Every required trait: the root's links among them number as many as
    they do (one statement shape whatever their number). No forbidden
    trait: the root is not among the providers having one.
    """
    links = sql.RP_TRAIT
    clauses = []
    if root_filter.required:
        clauses.append(root_id.in_(
            sa.select(links.c.resource_provider_id)
            .where(links.c.trait_id.in_(list_param('root_traits')))
            .group_by(links.c.resource_provider_id)
            .having(sa.func.count() == int_param('root_trait_count'))))
    if root_filter.forbidden:
        clauses.append(root_id.not_in(
            sa.select(links.c.resource_provider_id)
            .where(links.c.trait_id.in_(list_param('root_forbidden')))))
    return clauses


def served_tree(root_id):
    """A SELECT of the providers of ``root_id``'s tree that are served.

    Served: in an aggregate of one of the sharing providers
    ``:sharing_ids`` (which serve the trees of the providers of their
    aggregates, their own included).
    """
    member_rp = sql.RP.alias('served_rp')
    member = sql.RP_AGG.alias('served_member')
    sharer = sql.RP_AGG.alias('served_sharer')
    return (sa.select(member_rp.c.id)
            .select_from(
                member_rp.join(member, member.c.resource_provider_id ==
                               member_rp.c.id)
                .join(sharer, sharer.c.aggregate_id == member.c.aggregate_id))
            .where(member_rp.c.root_provider_id == root_id,
                   sharer.c.resource_provider_id.in_(
                       list_param('sharing_ids'))))


def group_clauses(i, group_shape):
    """Group ``i``'s per-provider conditions other than capacity."""
    clauses = []
    if group_shape.in_tree:
        clauses.append(sql.RP.c.root_provider_id == int_param('tree_%d' % i))
    # As in placement, an aggregate of a root spans its tree for the
    # group that may spread over the tree; a single-provider (suffixed)
    # group's provider must be in the aggregate itself.
    through_root = not group_shape.single
    for n in range(group_shape.member_of):
        clauses.append(sql.in_aggregates(list_param('agg_%d_%d' % (i, n)),
                                         through_root))
    if group_shape.forbidden_aggs:
        clauses.append(~sql.in_aggregates(list_param('fagg_%d' % i),
                                          through_root))
    if group_shape.forbidden_traits:
        # A provider with a forbidden trait can serve no part of the
        # group, whichever providers join it.
        clauses.append(~sql.with_any_trait(list_param('ftrait_%d' % i)))
    # A single-provider group's provider must have the traits itself; a
    # spread group is checked on its combinations instead.
    for n in range(group_shape.required):
        clauses.append(sql.with_any_trait(
            list_param('rtrait_%d_%d' % (i, n))))
    return clauses


def may_join_spread_part(i, group_shape, sharing):
    """Group ``i``, spread with required traits: the provider may serve.

    A root without children that is neither a sharing provider nor in
    an aggregate with one (of ``:sharing_ids``, with ``sharing``) can
    take part in the group only alone, so it must have the group's
    required traits itself: without them it gives no request. Any other
    provider may join others that have them, which the search checks
    per combination.
    """
    rp = sql.RP
    options = [
        sa.not_(childless_root(rp.c.id, rp.c.parent_provider_id,
                               one_pass=True)),
        sa.and_(*(sql.with_any_trait(list_param('rtrait_%d_%d' % (i, n)))
                  for n in range(group_shape.spread_required)))]
    if sharing:
        sharers = list_param('sharing_ids')
        member, sharer = sql.RP_AGG.alias('member'), sql.RP_AGG.alias(
            'sharer')
        options += [rp.c.id.in_(sharers), rp.c.id.in_(
            sa.select(member.c.resource_provider_id).select_from(
                member.join(sharer,
                            sharer.c.aggregate_id == member.c.aggregate_id))
            .where(sharer.c.resource_provider_id.in_(sharers)))]
    return sa.or_(*options)


def with_room(i, n, clauses, *columns):
    """Select ``columns`` of the few providers with room for one class.

    The clauses limit the providers to a few (one root's tree, a
    window), and the class index is hidden from the planner (see
    ``provider_sql.room_for``) so that it starts from those providers:
    a planner without statistics (PostgreSQL on tables not analysed
    yet) otherwise walks every inventory of the class and keeps the few.
    """
    rc_id = int_param('rc_%d_%d' % (i, n))
    amount = int_param('amount_%d_%d' % (i, n))
    rp, inv = sql.RP, sql.INV
    return (sa.select(*columns)
            .select_from(inv.join(
                rp, rp.c.id == inv.c.resource_provider_id))
            .where(sql.room_for(rc_id, amount, few=True), *clauses))


def childless_root(provider_id, parent_id, one_pass=False):
    """The provider is a root without children: a whole tree.

    Its children are looked up by root, not by parent: in a flat cloud
    every parent is NULL, and a planner with statistics (SQLite after
    ANALYZE) then finds the parent index worthless and scans every
    provider once per root; the root index stays selective in any
    cloud (a tree's providers).

    ``one_pass``: for a statement over every provider, the roots with
    children are read once instead, in one uncorrelated subquery the
    database hashes, rather than looked up provider by provider. (A
    window's few rows keep the lookups: one pass would read the whole
    cloud.) A provider with a parent is never a root, so its root has
    children; a NULL root is left out because ``NOT IN`` a list
    holding NULL is never true.
    """
    child = sql.RP.alias('child')
    if one_pass:
        parents = sa.select(child.c.root_provider_id).where(
            child.c.parent_provider_id.is_not(None),
            child.c.root_provider_id.is_not(None))
        return sa.and_(parent_id.is_(None), provider_id.not_in(parents))
    return sa.and_(parent_id.is_(None), ~sa.exists().where(
        child.c.root_provider_id == provider_id,
        child.c.id != provider_id))


def inventory_count(provider_id):
    """Correlated scalar subquery: the provider's number of inventories."""
    return sa.select(sa.func.count()).where(
        sql.INV.c.resource_provider_id == provider_id).scalar_subquery()


def trait_names():
    """Subquery (id, names): each provider's trait names, joined by commas.

    One hash aggregate over every provider with a trait. Trait names
    are [A-Z0-9_]+ (validated on creation): a comma separates them.
    """
    rp_trait = sql.RP_TRAIT
    source = rp_trait.join(TRAIT, TRAIT.c.id == rp_trait.c.trait_id)
    return (sa.select(rp_trait.c.resource_provider_id.label('id'),
                      sa.func.aggregate_strings(TRAIT.c.name, ',')
                      .label('names'))
            .select_from(source)
            .group_by(rp_trait.c.resource_provider_id).subquery('names'))


def none_column(name, type_=sa.BigInteger):
    """A typed NULL column: UNION ALL branches agree on every type."""
    return sa.cast(sa.null(), type_).label(name)


def of_trees(select, source, ids):
    """``select`` from ``source`` (which joins RP), in ``:roots``' trees.

    ``ids``: how ``:roots`` is bound (an IdList). Ids bound as a table
    drive the join: each root's tree comes from the root index, where an
    IN test made SQLite look up and then sort every row. Otherwise an
    IN test.
    """
    roots = ids.table('roots')
    if roots is not None:
        return select.select_from(roots.join(
            source, sql.RP.c.root_provider_id == roots.c.value))
    return select.select_from(source).where(
        ids.contains(sql.RP.c.root_provider_id, 'roots'))
