"""Why a candidate request finds no (or few) candidates: counts per step.

The steps are the search's own filters (:mod:`.statements.clauses`: the
same clause builders, bound to the same values), counted one after the
other instead of joined into one statement, so the explanation cannot
disagree with the search about what a filter lets through.

For each request group, one statement counts the providers that pass
each of its filters in turn (a SUM of CASE per step, cumulative: the
tree, required and forbidden traits, aggregates, the root's traits,
then room for each class) and the sharing providers passing them; one
more the trees that hold providers for the whole group, themselves or
through the sharing providers serving them. One more counts the trees
that hold providers for every group. Then the search itself counts the
candidates, and, when that is none, again without ``same_subtree`` and
``group_policy`` to tell which of them emptied it. For a group that no
provider passes, one statement names the providers that passed the most
steps, with the steps each failed and their free amount of each class.

Nothing is read per provider: every figure is a count the database
computes over the whole cloud. This module builds the statements and
reads their results through the callables the DB API hands in
(:func:`resobj.db.api.candidate_explain.explain`); results are plain
dicts and lists.
"""

import typing

import sqlalchemy as sa

from resobj.db.sql import resource_provider as sql
from resobj.search import request as search_request
from resobj.search.statements import clauses as cl

TREES_STEP = 'trees with providers for the group'


class Names(typing.NamedTuple):
    """What the explanation looked up before counting.

    ``rc_ids`` and ``trait_ids``: {name: id} of the names found;
    ``tree_roots``: {in_tree uuid: its root id, or None if unknown};
    ``sharing_ids``: the sharing providers serving some tree, as the
    search finds them.
    """

    rc_ids: dict
    trait_ids: dict
    tree_roots: dict
    sharing_ids: frozenset


class Request(typing.NamedTuple):
    """The groups as searched, with their filters' shape and values."""

    groups: list
    shape: tuple
    root_filter: search_request.RootFilter
    values: dict


def unknown_steps(groups, root_required, root_forbidden, names):
    """[{'step', 'passing': 0}] of each unknown name of the request."""
    class_names = search_request.class_names(groups)
    trait_names = search_request.trait_names(groups, root_required,
                                             root_forbidden)
    return ([{'step': 'known resource class %s' % name, 'passing': 0}
             for name in sorted(class_names - set(names.rc_ids))] +
            [{'step': 'known trait %s' % name, 'passing': 0}
             for name in sorted(trait_names - set(names.trait_ids))] +
            [{'step': 'known provider %s' % uuid, 'passing': 0}
             for uuid, root in sorted(names.tree_roots.items())
             if root is None])


def bound(groups, root_required, root_forbidden, names):
    """The Request of ``groups`` (all their names known), for counting."""
    groups = [search_request.as_searched(group)._replace(rc_amounts={
        names.rc_ids[name]: amount
        for name, amount in group.resources.items()}) for group in groups]
    root_filter, root_values = search_request.root_filter_and_params(
        names.trait_ids, root_required, root_forbidden)
    values = dict(search_request.params(groups, names.trait_ids,
                                        names.tree_roots), **root_values)
    if names.sharing_ids:
        values['sharing_ids'] = sorted(names.sharing_ids)
    return Request(groups, search_request.shape(groups), root_filter,
                   values)


def _filters(i, request):
    """[(step name, condition on RP)] of group ``i``'s provider filters.

    A group that may spread over a tree (the unsuffixed one) needs its
    required traits among the providers it uses, not on each: they are
    tested per tree (see _tree_condition), not here.
    """
    group = request.groups[i]
    steps = []
    if search_request.matches_nothing(group):
        steps.append(('required trait or member_of, which a resourceless '
                      'group needs', sa.false()))
    order = list(cl.GROUP_STEP_NAMES)
    found = sorted(cl.group_steps(i, request.shape[i]),
                   key=lambda step: order.index(step.kind))
    return steps + [(cl.GROUP_STEP_NAMES[step.kind](group, step.n),
                     step.clause) for step in found]


def _root_steps(root_required, root_forbidden, request):
    """[(step name, condition on RP)] of root_required, on the root."""
    return [(cl.ROOT_STEP_NAMES[step.kind](root_required, root_forbidden),
             step.clause) for step in cl.root_steps(
        sql.RP.c.root_provider_id, request.root_filter)]


def _rooms(i, request, rc_names):
    """[(step name, condition on RP)]: room for each class's amount.

    By class name; the search numbers a group's classes by class id.
    """
    rooms = [('capacity for %s:%d' % (rc_names[rc_id], amount),
              cl.has_room(i, n))
             for n, (rc_id, amount) in enumerate(
                 sorted(request.groups[i].rc_amounts.items()))]
    return sorted(rooms, key=lambda room: room[0])


def _spread_traits(i, request):
    """[(step name, condition)] of a spread group's required traits."""
    group = request.groups[i]
    if group.use_same_provider:
        return []
    return [('required %s (on one of the providers used)'
             % ' or '.join(sorted(any_of)), cl.spread_trait(i, n))
            for n, any_of in enumerate(group.required_traits)]


def _in_tree(root, *conditions):
    """EXISTS a provider of ``root``'s tree meeting ``conditions``."""
    return sa.exists().where(sql.RP.c.root_provider_id == root.c.id,
                             *conditions)


def _sharing(request):
    """RP is one of the sharing providers (false if there are none)."""
    if 'sharing_ids' not in request.values:
        return sa.false()
    return sql.RP.c.id.in_(cl.list_param('sharing_ids'))


def _served(root, request, *conditions):
    """EXISTS a sharing provider serving ``root``'s tree, meeting them."""
    if 'sharing_ids' not in request.values:
        return sa.false()
    return sa.exists().where(_sharing(request),
                             cl.serves(sql.RP.c.id, root.c.id), *conditions)


def _tree_condition(i, request, root, filters, rooms):
    """``root``'s tree holds providers for the whole group ``i``.

    One provider for everything if the group keeps to one provider;
    otherwise, for each class a provider with room, and for each
    required trait set a provider with room for one of the classes
    having one of them. Sharing providers serving the tree count. The
    root's traits (root_required) are tested on the root itself, by the
    caller: ``filters`` are the provider filters only.
    """
    group = request.groups[i]
    passing = [condition for _name, condition in filters]
    # The search's rule for a sharing provider serving another root's
    # tree in a spread group with member_of (a single-provider group's
    # filters ask that of every provider already).
    sharer_passing = passing if group.use_same_provider else (
        passing + cl.sharer_in_own_aggregates(i, request.shape[i]))

    def somewhere(*more):
        return sa.or_(_in_tree(root, *passing, *more),
                      _served(root, request, *sharer_passing, *more))
    if group.use_same_provider or not rooms:
        return somewhere(*[c for _n, c in rooms])
    conditions = [somewhere(condition) for _name, condition in rooms]
    # A required trait counts on a provider the group may use: one with
    # room for one of its classes.
    usable = sa.or_(*[condition for _name, condition in rooms])
    for _name, condition in _spread_traits(i, request):
        conditions.append(somewhere(usable, condition))
    return sa.and_(*conditions)


def _count_steps(run, request, steps, sharers=False):
    """(cumulative counts of ``steps`` after all providers, sharers).

    ``sharers``: how many sharing providers pass every step (with
    ``sharers``, else 0).
    """
    columns = [sa.func.count()]
    conditions = []
    for _name, condition in steps:
        conditions.append(condition)
        columns.append(sa.func.sum(sa.case((sa.and_(*conditions), 1),
                                           else_=0)))
    if sharers:
        sharing = sa.and_(_sharing(request), *conditions)
        columns.append(sa.func.sum(sa.case((sharing, 1), else_=0)))
    else:
        columns.append(sa.literal(0))
    row = run(sa.select(*columns).select_from(sql.RP),
              request.values).one()
    return [int(n or 0) for n in row[:-1]], int(row[-1] or 0)


def _count_trees(run, request, *conditions):
    """How many roots meet ``conditions`` (functions of a root table)."""
    root = sql.RP.alias('tree_root')
    return int(run(sa.select(sa.func.count()).where(
        root.c.parent_provider_id.is_(None),
        *[condition(root) for condition in conditions]),
        request.values).scalar())


def _root_filter(request):
    def passes(root):
        return sa.and_(sa.true(), *cl.root_clauses(root.c.id,
                                                   request.root_filter))
    return passes


def _closest(run, request, i, steps, rc_names, count):
    """The ``count`` providers that pass the most of ``steps``.

    Each as {'name', 'uuid', 'failed': [step names], 'free': {class:
    capacity - used}} (classes it has inventory of); none that pass
    every step.
    """
    rp, inv = sql.RP, sql.INV
    classes = sorted(request.groups[i].rc_amounts,
                     key=lambda rc_id: rc_names[rc_id])
    flags = [sa.case((condition, 1), else_=0)
             for _name, condition in steps]
    free = [sa.select(sql.capacity() - inv.c.used).where(
        inv.c.resource_provider_id == rp.c.id,
        inv.c.resource_class_id == rc_id).scalar_subquery()
        .label('f%d' % n)
        for n, rc_id in enumerate(classes)]
    passed = sum(flags[1:], flags[0])
    # Among those passing as many steps, the providers with inventory of
    # more of the classes first.
    stocked = sa.select(sa.func.count()).where(
        inv.c.resource_provider_id == rp.c.id,
        inv.c.resource_class_id.in_(classes)).scalar_subquery()
    rows = run(sa.select(
        rp.c.uuid, rp.c.name,
        *[flag.label('s%d' % n) for n, flag in enumerate(flags)],
        *free).where(passed < len(steps)).order_by(
        passed.desc(), stocked.desc(), rp.c.id).limit(count),
        request.values)
    found = []
    for row in rows:
        values = row._mapping
        found.append({
            'name': row.name, 'uuid': row.uuid,
            'failed': [name for n, (name, _c) in enumerate(steps)
                       if not values['s%d' % n]],
            'free': {rc_names[rc_id]: int(values['f%d' % n])
                     for n, rc_id in enumerate(classes)
                     if values['f%d' % n] is not None}})
    return found


def _first_empty(steps):
    for step in steps:
        if step['passing'] == 0:
            return step['step']
    return None


def explain_groups(run, request, root_required, root_forbidden, rc_names,
                   closest):
    """([explained group], [tree condition]) of each group of ``request``.

    ``run(statement, values)``: runs a statement, returns its result;
    ``rc_names``: {class id: name}; ``closest``: how many providers to
    name for a group that no provider passes.
    """
    explained, every_tree = [], []
    sharers = 'sharing_ids' in request.values
    for i, group in enumerate(request.groups):
        filters = _filters(i, request)
        rooted = filters + _root_steps(root_required, root_forbidden,
                                       request)
        rooms = _rooms(i, request, rc_names)
        # One provider takes a single-provider group whole: its rooms
        # are cumulative. A spread group's classes may come from
        # different providers: each room is counted after the filters
        # alone.
        cumulative = rooted + (rooms if group.use_same_provider else [])

        def tree_condition(root, i=i, filters=filters, rooms=rooms):
            return _tree_condition(i, request, root, filters, rooms)

        counts, sharing = _count_steps(run, request, cumulative, sharers)
        steps = [{'step': 'providers', 'passing': counts[0]}] + [
            {'step': name, 'passing': n}
            for (name, _c), n in zip(cumulative, counts[1:])]
        if not group.use_same_provider and rooms:
            # Each class, and each required trait set among providers
            # with room for some class, after the filters alone.
            usable = sa.or_(*[condition for _name, condition in rooms])
            for name, condition in rooms + [
                    (name, sa.and_(usable, condition)) for name, condition
                    in _spread_traits(i, request)]:
                only, _none = _count_steps(run, request,
                                           rooted + [(name, condition)])
                steps.append({'step': name, 'passing': only[-1]})
        tree_count = _count_trees(run, request, _root_filter(request),
                                  tree_condition)
        steps.append({'step': TREES_STEP, 'passing': tree_count})
        every_tree.append(tree_condition)
        found = {'suffix': group.suffix, 'steps': steps,
                 'trees': tree_count, 'sharing': sharing,
                 'first_empty': _first_empty(steps), 'closest': []}
        if found['first_empty'] not in (None, TREES_STEP):
            found['closest'] = _closest(
                run, request, i,
                rooted + rooms + _spread_traits(i, request), rc_names,
                closest)
        explained.append(found)
    return explained, every_tree


def request_steps(run, request, every_tree, count, same_subtree,
                  group_policy):
    """([{'step', 'passing'}], candidates) of the request as a whole.

    ``count(same_subtree, group_policy)``: how many candidates the
    search finds for the request with those arguments.
    """
    steps = [{'step': 'trees with providers for every group',
              'passing': _count_trees(run, request, _root_filter(request),
                                      *every_tree)}]
    found = count(same_subtree, group_policy)
    if found == 0 and (same_subtree or group_policy == 'isolate'):
        steps.append({
            'step': 'candidates without same_subtree and group_policy',
            'passing': count((), None)})
        if group_policy == 'isolate':
            steps.append({
                'step': 'candidates with group_policy=isolate',
                'passing': count((), 'isolate')})
    steps.append({'step': 'candidates', 'passing': found})
    return steps, found


def first_empty(explained, steps):
    """The first step of all that nothing passes, or None.

    As "group: step" for a group's, else the request's step.
    """
    for group in explained:
        if group['first_empty'] is not None:
            return '%s: %s' % (group['suffix'] or 'unsuffixed group',
                               group['first_empty'])
    return _first_empty(steps)


def searched_subtrees(groups, same_subtree):
    """``same_subtree`` for counting candidates of ``groups``.

    Without same_subtree a resourceless group still takes any provider
    passing its filters: one set with only itself.
    """
    bare = {g.suffix for g in groups if not g.resources}
    if bare and not same_subtree:
        return [[suffix] for suffix in sorted(bare)]
    return same_subtree
