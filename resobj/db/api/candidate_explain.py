"""Why a candidate request finds no (or few) candidates: counts per step.

For each request group, one statement counts the providers that pass
each of its filters in turn (a SUM of CASE per step, cumulative: the
tree, required and forbidden traits, aggregates, the root's traits,
then room for each class) and the sharing providers passing them; one
more the trees that hold providers for the whole group, themselves or
through the sharing providers serving them. One more counts the trees
that hold providers for every group. Then the search itself
(``allocation_candidate.get_candidates``) counts the candidates, and,
when that is none, again without ``same_subtree`` and ``group_policy``
to tell which of them emptied it. For a group that no provider
passes, one statement names the providers that passed the most steps,
with the steps each failed and their free amount of each class.

Nothing is read per provider: every figure is a count the database
computes over the whole cloud. Results are plain dicts and lists.
"""

import sqlalchemy as sa

from resobj.db.api import allocation_candidate as ac_db
from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import resource_class as rc_models
from resobj.db.models import trait as trait_models
from resobj.db import provider_sql as sql
from resobj.search import request as search_request

RC = rc_models.ResourceClass.__table__
TRAIT = trait_models.Trait.__table__


def _ids(context, table, names):
    """{name: id} of the ``names`` found in ``table`` (classes, traits)."""
    if not names:
        return {}
    return dict(utils.execute(context, sa.select(
        table.c.name, table.c.id).where(
        table.c.name.in_(sorted(names)))).all())


def _root_of(context, uuid):
    return utils.execute(context, sa.select(sql.RP.c.root_provider_id).where(
        sql.RP.c.uuid == uuid)).scalar()


def _has_traits(column, trait_ids):
    """``column`` (a provider id) has every trait of ``trait_ids``."""
    links = sql.RP_TRAIT
    return column.in_(
        sa.select(links.c.resource_provider_id)
        .where(links.c.trait_id.in_(sorted(trait_ids)))
        .group_by(links.c.resource_provider_id)
        .having(sa.func.count() == len(trait_ids)))


def _has_any(column, trait_ids):
    return column.in_(sa.select(sql.RP_TRAIT.c.resource_provider_id).where(
        sql.RP_TRAIT.c.trait_id.in_(sorted(trait_ids))))


def _filters(group, trait_ids, tree_root):
    """[(step name, condition on RP)] of a group's provider filters.

    A group that may spread over a tree (the unsuffixed one) needs its
    required traits among the providers it uses, not on each: they are
    tested per tree (see _tree_condition), not here.
    """
    single = group.use_same_provider
    steps = []
    if search_request.matches_nothing(group):
        steps.append(('required trait or member_of, which a resourceless '
                      'group needs', sa.false()))
    if group.in_tree is not None:
        steps.append(('in_tree %s' % group.in_tree,
                      sql.RP.c.root_provider_id == tree_root))
    if single:
        for any_of in group.required_traits:
            steps.append(('required %s' % ' or '.join(sorted(any_of)),
                          _has_any(sql.RP.c.id,
                                   {trait_ids[n] for n in any_of})))
    if group.forbidden_traits:
        steps.append(('forbidden %s' % ', '.join(
            sorted(group.forbidden_traits)), ~_has_any(
            sql.RP.c.id, {trait_ids[n] for n in group.forbidden_traits})))
    for any_of in group.member_of:
        steps.append(('member_of %s' % ' or '.join(sorted(any_of)),
                      sql.in_aggregates(any_of, not single)))
    if group.forbidden_aggs:
        steps.append(('not member_of %s' % ', '.join(
            sorted(group.forbidden_aggs)),
            ~sql.in_aggregates(group.forbidden_aggs, not single)))
    return steps


def _root_steps(trait_ids, root_required, root_forbidden):
    """[(step name, condition on RP)] of root_required, on the root."""
    steps = []
    if root_required:
        steps.append(('root_required %s' % ', '.join(sorted(root_required)),
                      _has_traits(sql.RP.c.root_provider_id,
                                  {trait_ids[n] for n in root_required})))
    if root_forbidden:
        steps.append(('root_required !%s' % ', !'.join(
            sorted(root_forbidden)), ~_has_any(
            sql.RP.c.root_provider_id,
            {trait_ids[n] for n in root_forbidden})))
    return steps


def _rooms(group, rc_ids):
    """[(step name, condition on RP)]: room for each class's amount."""
    return [('capacity for %s:%d' % (name, amount),
             sql.with_room(rc_ids[name], amount))
            for name, amount in sorted(group.resources.items())]


def _in_tree(root, *conditions):
    """EXISTS a provider of ``root``'s tree meeting ``conditions``."""
    member = sql.RP
    return sa.exists().where(member.c.root_provider_id == root.c.id,
                             *conditions)


def _served(root, sharing_ids, *conditions):
    """EXISTS a sharing provider serving ``root``'s tree, meeting them.

    A provider with the sharing trait serves the trees of the providers
    in one of its aggregates.
    """
    if not sharing_ids:
        return sa.false()
    sharer_agg = sql.RP_AGG.alias('sharer_agg')
    member_agg = sql.RP_AGG.alias('member_agg')
    member = sql.RP.alias('member')
    return sa.exists().select_from(
        sql.RP.join(sharer_agg,
                    sharer_agg.c.resource_provider_id == sql.RP.c.id)
        .join(member_agg,
              member_agg.c.aggregate_id == sharer_agg.c.aggregate_id)
        .join(member, member.c.id == member_agg.c.resource_provider_id)
    ).where(member.c.root_provider_id == root.c.id,
            _has_any(sql.RP.c.id, sharing_ids), *conditions)


def _somewhere(root, sharing_ids, conditions, sharer_conditions):
    """A provider of the tree, or a sharing one serving it, meets them.

    ``conditions`` for the tree's own providers, ``sharer_conditions``
    for the sharing providers serving it.
    """
    return sa.or_(_in_tree(root, *conditions),
                  _served(root, sharing_ids, *sharer_conditions))


def _tree_condition(group, root, filters, rooms, trait_ids, sharing_ids):
    """``root``'s tree holds providers for the whole group.

    One provider for everything if the group keeps to one provider;
    otherwise, for each class a provider with room, and for each
    required trait set a provider with room for one of the classes
    having one of them. Sharing providers serving the tree count. The
    root's traits (root_required) are tested on the root itself, by the
    caller: ``filters`` are the provider filters only.
    """
    passing = [condition for _name, condition in filters]
    # A sharing provider serves another root's tree in a spread group
    # only when it is itself in each member_of set (placement's rule, see
    # allocation_candidate._own_aggregates); a single-provider
    # group's filters ask that of every provider already.
    sharer_passing = passing if group.use_same_provider else passing + [
        sql.in_aggregates(any_of, through_root=False)
        for any_of in group.member_of]

    def somewhere(*more):
        return _somewhere(root, sharing_ids, passing + list(more),
                          sharer_passing + list(more))
    if group.use_same_provider or not rooms:
        return somewhere(*[c for _n, c in rooms])
    conditions = [somewhere(condition) for _name, condition in rooms]
    # A required trait counts on a provider the group may use: one with
    # room for one of its classes.
    usable = sa.or_(*[condition for _name, condition in rooms])
    for _name, condition in _spread_traits(group, trait_ids):
        conditions.append(somewhere(usable, condition))
    return sa.and_(*conditions)


def _spread_traits(group, trait_ids):
    """[(step name, condition)] of a spread group's required traits."""
    if group.use_same_provider:
        return []
    return [('required %s (on one of the providers used)'
             % ' or '.join(sorted(any_of)),
             _has_any(sql.RP.c.id, {trait_ids[n] for n in any_of}))
            for any_of in group.required_traits]


def _count_steps(context, steps, sharing_ids=()):
    """(cumulative counts of ``steps`` after all providers, sharers).

    ``sharers``: how many providers with the sharing trait
    (``sharing_ids``) pass every step; 0 without ``sharing_ids``.
    """
    columns = [sa.func.count()]
    conditions = []
    for _name, condition in steps:
        conditions.append(condition)
        columns.append(sa.func.sum(sa.case((sa.and_(*conditions), 1),
                                           else_=0)))
    if sharing_ids:
        sharing = sa.and_(_has_any(sql.RP.c.id, sharing_ids), *conditions)
        columns.append(sa.func.sum(sa.case((sharing, 1), else_=0)))
    else:
        columns.append(sa.literal(0))
    row = utils.execute(context, sa.select(*columns).select_from(
        sql.RP)).one()
    return [int(n or 0) for n in row[:-1]], int(row[-1] or 0)


def _count_trees(context, *conditions):
    """How many roots meet ``conditions`` (functions of a root table)."""
    root = sql.RP.alias('tree_root')
    return int(utils.execute(context, sa.select(sa.func.count()).where(
        root.c.parent_provider_id.is_(None),
        *[condition(root) for condition in conditions])).scalar())


def _closest(context, steps, rc_ids, group, count):
    """The ``count`` providers that pass the most of ``steps``.

    Each as {'name', 'uuid', 'failed': [step names], 'free': {class:
    capacity - used}} (classes it has inventory of); none that pass
    every step.
    """
    rp, inv = sql.RP, sql.INV
    flags = [sa.case((condition, 1), else_=0)
             for _name, condition in steps]
    free = [sa.select(sql.capacity() - inv.c.used).where(
        inv.c.resource_provider_id == rp.c.id,
        inv.c.resource_class_id == rc_ids[name]).scalar_subquery()
        .label('f%d' % n)
        for n, name in enumerate(sorted(group.resources))]
    passed = sum(flags[1:], flags[0])
    # Among those passing as many steps, the providers with inventory of
    # more of the classes first.
    stocked = sa.select(sa.func.count()).where(
        inv.c.resource_provider_id == rp.c.id,
        inv.c.resource_class_id.in_(
            sorted(rc_ids[name] for name in group.resources))
    ).scalar_subquery()
    rows = utils.execute(context, sa.select(
        rp.c.uuid, rp.c.name,
        *[flag.label('s%d' % n) for n, flag in enumerate(flags)],
        *free).where(passed < len(steps)).order_by(
        passed.desc(), stocked.desc(), rp.c.id).limit(count))
    found = []
    for row in rows:
        values = row._mapping
        found.append({
            'name': row.name, 'uuid': row.uuid,
            'failed': [name for n, (name, _c) in enumerate(steps)
                       if not values['s%d' % n]],
            'free': {name: int(values['f%d' % n])
                     for n, name in enumerate(sorted(group.resources))
                     if values['f%d' % n] is not None}})
    return found


def _first_empty(steps):
    for step in steps:
        if step['passing'] == 0:
            return step['step']
    return None


def _unknown(kind, names, found):
    missing = sorted(set(names) - set(found))
    return [{'step': 'known %s %s' % (kind, name), 'passing': 0}
            for name in missing]


@facade.reader
def explain(context, groups, root_required=frozenset(),
            root_forbidden=frozenset(), same_subtree=(), group_policy=None,
            closest=3):
    """Where the providers of a candidate request drop out.

    ``groups`` and the other arguments as for
    ``allocation_candidate.get_candidates``; ``closest``: how many
    providers to name for a group that no provider passes. Returns
    {'groups': [{'suffix', 'steps': [{'step', 'passing'}], 'trees',
    'sharing', 'first_empty', 'closest'}], 'steps': [{'step',
    'passing'}] (the request's, from the trees to the candidates),
    'first_empty': the first step of all (as "group: step", or the
    request's step) that no provider, tree or candidate passes, or None,
    'candidates': how many the search finds}. Unknown class, trait or
    in_tree names are steps no provider passes, not errors.
    """
    class_names = set().union(*(g.resources for g in groups))
    trait_names = set(root_required).union(root_forbidden, *(
        set(g.forbidden_traits).union(*g.required_traits)
        for g in groups))
    rc_ids = _ids(context, RC, class_names)
    trait_ids = _ids(context, TRAIT, trait_names | {sql.SHARING_TRAIT})
    unknown = (_unknown('resource class', class_names, rc_ids) +
               _unknown('trait', trait_names, trait_ids))
    trees = {g.in_tree: _root_of(context, g.in_tree)
             for g in groups if g.in_tree is not None}
    unknown += [{'step': 'known provider %s' % uuid, 'passing': 0}
                for uuid, root in sorted(trees.items()) if root is None]
    if unknown:
        return {'groups': [], 'steps': unknown,
                'first_empty': unknown[0]['step'], 'candidates': 0}
    sharing = ({trait_ids[sql.SHARING_TRAIT]}
               if sql.SHARING_TRAIT in trait_ids else set())

    def root_filters(root):
        clauses = [sa.true()]
        if root_required:
            clauses.append(_has_traits(
                root.c.id, {trait_ids[n] for n in root_required}))
        if root_forbidden:
            clauses.append(~_has_any(
                root.c.id, {trait_ids[n] for n in root_forbidden}))
        return sa.and_(*clauses)

    explained, every_tree = [], []
    groups = [search_request.as_searched(group) for group in groups]
    for group in groups:
        filters = _filters(group, trait_ids, trees.get(group.in_tree))
        rooted = filters + _root_steps(trait_ids, root_required,
                                       root_forbidden)
        rooms = _rooms(group, rc_ids)
        # One provider takes a single-provider group whole: its rooms
        # are cumulative. A spread group's classes may come from
        # different providers: each room is counted after the filters
        # alone.
        cumulative = rooted + (rooms if group.use_same_provider else [])

        def tree_condition(root, group=group, filters=filters,
                           rooms=rooms):
            return _tree_condition(group, root, filters, rooms, trait_ids,
                                   sharing)

        counts, sharers = _count_steps(context, cumulative, sharing)
        steps = [{'step': 'providers', 'passing': counts[0]}] + [
            {'step': name, 'passing': n}
            for (name, _c), n in zip(cumulative, counts[1:])]
        if not group.use_same_provider and rooms:
            # Each class, and each required trait set among providers
            # with room for some class, after the filters alone.
            usable = sa.or_(*[condition for _name, condition in rooms])
            for name, condition in rooms + [
                    (name, sa.and_(usable, condition)) for name, condition
                    in _spread_traits(group, trait_ids)]:
                only, _none = _count_steps(context,
                                           rooted + [(name, condition)])
                steps.append({'step': name, 'passing': only[-1]})
        tree_count = _count_trees(context, root_filters, tree_condition)
        steps.append({'step': 'trees with providers for the group',
                      'passing': tree_count})
        every_tree.append(tree_condition)
        found = {'suffix': group.suffix, 'steps': steps,
                 'trees': tree_count, 'sharing': sharers,
                 'first_empty': _first_empty(steps), 'closest': []}
        if found['first_empty'] is not None and found['first_empty'] != \
                'trees with providers for the group':
            found['closest'] = _closest(
                context, rooted + rooms + _spread_traits(group, trait_ids),
                rc_ids, group, closest)
        explained.append(found)
    request_steps = [{'step': 'trees with providers for every group',
                      'passing': _count_trees(context, root_filters,
                                              *every_tree)}]
    found = _search_count(context, groups, root_required, root_forbidden,
                          same_subtree, group_policy)
    if found == 0 and (same_subtree or group_policy == 'isolate'):
        request_steps.append({
            'step': 'candidates without same_subtree and group_policy',
            'passing': _search_count(context, groups, root_required,
                                     root_forbidden, (), None)})
        if group_policy == 'isolate':
            request_steps.append({
                'step': 'candidates with group_policy=isolate',
                'passing': _search_count(context, groups, root_required,
                                         root_forbidden, (), 'isolate')})
    request_steps.append({'step': 'candidates', 'passing': found})
    first = None
    for group in explained:
        if group['first_empty'] is not None:
            first = '%s: %s' % (group['suffix'] or 'unsuffixed group',
                                group['first_empty'])
            break
    if first is None:
        first = _first_empty(request_steps)
    return {'groups': explained, 'steps': request_steps,
            'first_empty': first, 'candidates': found}


def _search_count(context, groups, root_required, root_forbidden,
                  same_subtree, group_policy):
    """How many candidates the search finds (sharing providers too)."""
    if not any(g.resources for g in groups):
        return 0
    bare = {g.suffix for g in groups if not g.resources}
    if bare and not same_subtree:
        # Without same_subtree a resourceless group still takes any
        # provider passing its filters: one set with only itself.
        same_subtree = [[suffix] for suffix in sorted(bare)]
    found = ac_db.get_candidates(
        context, groups, group_policy=group_policy,
        root_required=root_required, root_forbidden=root_forbidden,
        same_subtree=same_subtree)
    return len(found['allocation_requests'])
