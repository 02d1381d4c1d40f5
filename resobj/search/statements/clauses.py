"""The conditions and columns the candidate statements share.

The filters of a request are built here once, as named steps
(:class:`Step`): the search joins them into its statements, and the
explanation (:mod:`resobj.search.explain`) counts the providers passing
them one after the other. Both bind the values that
:func:`resobj.search.request.params` names.
"""

import typing

import sqlalchemy as sa

from resobj.db.models import resource_class as rc_models
from resobj.db.models import trait as trait_models
from resobj.db.sql import resource_provider as sql

RC = rc_models.ResourceClass.__table__
TRAIT = trait_models.Trait.__table__


def int_param(name):
    return sa.bindparam(name, type_=sa.Integer)


def list_param(name):
    """An expanding parameter: a list of values."""
    return sa.bindparam(name, expanding=True)


# The kinds of Step: a group's tree, its n-th member_of set, its
# forbidden aggregates, its forbidden traits, its n-th required trait
# set (of a single-provider group; a spread group's are tested per
# combination, see spread_trait), and root_required's required and
# forbidden traits.
IN_TREE, MEMBER_OF, FORBIDDEN_AGGS, FORBIDDEN_TRAITS, REQUIRED = (
    'in_tree', 'member_of', 'forbidden_aggs', 'forbidden_traits',
    'required')
ROOT_REQUIRED, ROOT_FORBIDDEN = 'root_required', 'root_forbidden'


class Step(typing.NamedTuple):
    """One filter of a request: its kind, which one (``n``), its clause."""

    kind: str
    n: int
    clause: typing.Any


def _listed(values, joiner):
    return joiner.join(sorted(values))


# How the explanation (resobj.search.explain) names a group's step of
# each kind from the group's values, in the order it lists them: its
# counts are cumulative, so the order is part of its answer, while the
# search joins the steps in any order. A new kind of step is named here,
# beside its clause.
GROUP_STEP_NAMES = {
    IN_TREE: lambda group, n: 'in_tree %s' % group.in_tree,
    REQUIRED: lambda group, n: 'required %s' % _listed(
        group.required_traits[n], ' or '),
    FORBIDDEN_TRAITS: lambda group, n: 'forbidden %s' % _listed(
        group.forbidden_traits, ', '),
    MEMBER_OF: lambda group, n: 'member_of %s' % _listed(
        group.member_of[n], ' or '),
    FORBIDDEN_AGGS: lambda group, n: 'not member_of %s' % _listed(
        group.forbidden_aggs, ', '),
}
# The same for root_required's steps, from its required and forbidden
# trait names.
ROOT_STEP_NAMES = {
    ROOT_REQUIRED: lambda required, forbidden: 'root_required %s' % _listed(
        required, ', '),
    ROOT_FORBIDDEN: lambda required, forbidden: 'root_required !%s' % (
        _listed(forbidden, ', !')),
}


def root_steps(root_id, root_filter):
    """[Step]: ``root_id`` (a root provider id column) passes root_required.

    Every required trait: the root's links among them number as many as
    they do (one statement shape whatever their number). No forbidden
    trait: the root is not among the providers having one.
    """
    links = sql.RP_TRAIT
    steps = []
    if root_filter.required:
        steps.append(Step(ROOT_REQUIRED, 0, root_id.in_(
            sa.select(links.c.resource_provider_id)
            .where(links.c.trait_id.in_(list_param('root_traits')))
            .group_by(links.c.resource_provider_id)
            .having(sa.func.count() == int_param('root_trait_count')))))
    if root_filter.forbidden:
        steps.append(Step(ROOT_FORBIDDEN, 0, root_id.not_in(
            sa.select(links.c.resource_provider_id)
            .where(links.c.trait_id.in_(list_param('root_forbidden'))))))
    return steps


def root_clauses(root_id, root_filter):
    """The clauses of :func:`root_steps`."""
    return [step.clause for step in root_steps(root_id, root_filter)]


def sharing_join(member_rp, member, sharer):
    """``member_rp`` joined to the sharers' aggregate links ``sharer``.

    The sharing rule: a sharing provider serves the trees of the
    providers in its aggregates (its own included). ``member`` and
    ``sharer`` are aliases of the aggregate links; a row pairs a
    provider ``member_rp`` with a sharing provider
    (``sharer.c.resource_provider_id``) in one of its aggregates.
    """
    return (member_rp.join(member, member.c.resource_provider_id ==
                           member_rp.c.id)
            .join(sharer, sharer.c.aggregate_id == member.c.aggregate_id))


def served_tree(root_id):
    """A SELECT of the providers of ``root_id``'s tree that are served.

    Served: in an aggregate of one of the sharing providers
    ``:sharing_ids`` (see :func:`sharing_join`).
    """
    member_rp = sql.RP.alias('served_rp')
    member = sql.RP_AGG.alias('served_member')
    sharer = sql.RP_AGG.alias('served_sharer')
    return (sa.select(member_rp.c.id)
            .select_from(sharing_join(member_rp, member, sharer))
            .where(member_rp.c.root_provider_id == root_id,
                   sharer.c.resource_provider_id.in_(
                       list_param('sharing_ids'))))


def serves(sharer_id, root_id):
    """The sharing provider ``sharer_id`` serves ``root_id``'s tree.

    The rule of :func:`sharing_join`, as a condition on two columns.
    """
    member_rp = sql.RP.alias('serves_rp')
    member = sql.RP_AGG.alias('serves_member')
    sharer = sql.RP_AGG.alias('serves_sharer')
    # Correlated to every enclosing statement: the root's table may be
    # more than one level up.
    return sa.exists().select_from(
        sharing_join(member_rp, member, sharer)).where(
        member_rp.c.root_provider_id == root_id,
        sharer.c.resource_provider_id == sharer_id).correlate_except(
        member_rp, member, sharer)


def sharer_in_own_aggregates(i, group_shape):
    """Group ``i``'s ``member_of`` sets, on a sharing provider itself.

    In a group that may spread over a tree, a sharing provider serves
    another root's tree only when it is itself in an aggregate of each
    set: its root's aggregates count in its own tree only, as for any
    provider there (placement 16.0.0, observed black-box; see
    :func:`resobj.search.index.sharers_to_check`).
    """
    return [sql.in_aggregates(list_param('agg_%d_%d' % (i, n)),
                              through_root=False)
            for n in range(group_shape.member_of)]


def group_steps(i, group_shape):
    """[Step]: group ``i``'s per-provider conditions other than capacity."""
    steps = []
    if group_shape.in_tree:
        steps.append(Step(IN_TREE, 0, sql.RP.c.root_provider_id ==
                          int_param('tree_%d' % i)))
    # As in placement, an aggregate of a root spans its tree for the
    # group that may spread over the tree; a single-provider (suffixed)
    # group's provider must be in the aggregate itself.
    through_root = not group_shape.single
    for n in range(group_shape.member_of):
        steps.append(Step(MEMBER_OF, n, sql.in_aggregates(
            list_param('agg_%d_%d' % (i, n)), through_root)))
    if group_shape.forbidden_aggs:
        steps.append(Step(FORBIDDEN_AGGS, 0, ~sql.in_aggregates(
            list_param('fagg_%d' % i), through_root)))
    if group_shape.forbidden_traits:
        # A provider with a forbidden trait can serve no part of the
        # group, whichever providers join it.
        steps.append(Step(FORBIDDEN_TRAITS, 0, ~sql.with_any_trait(
            list_param('ftrait_%d' % i))))
    # A single-provider group's provider must have the traits itself; a
    # spread group is checked on its combinations instead.
    for n in range(group_shape.required):
        steps.append(Step(REQUIRED, n, spread_trait(i, n)))
    return steps


def group_clauses(i, group_shape):
    """The clauses of :func:`group_steps`."""
    return [step.clause for step in group_steps(i, group_shape)]


def spread_trait(i, n):
    """The provider has one of group ``i``'s n-th required trait set.

    A single-provider group's provider must pass it; a spread group
    needs it on one of the providers a combination uses.
    """
    return sql.with_any_trait(list_param('rtrait_%d_%d' % (i, n)))


def has_room(i, n):
    """RP rows with room for group ``i``'s n-th class and amount.

    The capacity rule of :func:`with_room`, as a condition on RP.
    """
    return sql.RP.c.id.in_(
        sa.select(sql.INV.c.resource_provider_id).where(sql.room_for(
            int_param('rc_%d_%d' % (i, n)),
            int_param('amount_%d_%d' % (i, n)))))


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
        sa.and_(*(spread_trait(i, n)
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
    ``sql.resource_provider.room_for``) so that it starts from those providers:
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
