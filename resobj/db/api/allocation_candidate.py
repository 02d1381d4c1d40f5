"""The allocation candidate search: runs ``resobj.search``'s statements.

Everything runs in one reader transaction and a fixed number of
statements, whatever the number of providers or candidates (see
doc/source/contributor/candidates.rst): the names to ids and the
sharing providers; with a limit, the first candidate roots; the
providers with room for each (group, class); the trait links of spread
groups and the parents of the trees, if asked; then the summaries of
the trees the requests use (:mod:`.candidate_summary`). The
statements come from :mod:`resobj.search.statements`, chosen by the
backend's strategy
(``resobj.db.backends.for_dialect(...).candidate_strategy()``). A
search is a pipeline (:func:`_search`): each reading, in a fixed order
(the rows, the sharing providers' own aggregates, the trees' parents,
the trait links), goes to a pure function of :mod:`resobj.search.index`
and then :mod:`resobj.search.combine`, which combines the rows in
Python per tree root, stopping at ``limit``.

Groups are :class:`resobj.search.request.Group` tuples; results are
plain dicts, lists and tuples of uuids and names.
"""

import collections
import contextlib
import functools
import operator
import typing

import sqlalchemy as sa

from resobj.db.api import candidate_summary
from resobj.db.api import utils
from resobj.db import backends
from resobj.db import facade
from resobj.db.sql import resource_provider as sql
from resobj import exception
from resobj.search import combine
from resobj.search import index as search_index
from resobj.search import request as search_request
from resobj.search import rows as search_rows
from resobj.search import shapes
from resobj.search.statements import anchors
from resobj.search.statements import lookups
from resobj.search.statements import rows as row_statements
from resobj.search.statements import summaries as summary_statements


def _strategy(context):
    """The candidate search strategy of the context's database backend."""
    return backends.for_dialect(
        context.session.get_bind().dialect.name).candidate_strategy()


def _names_and_sharing(context, class_names, trait_names, pairs=True):
    """({class: id}, {trait: id}, {sharer id: {root ids it serves}}).

    The traits include the sharing trait. Without ``pairs`` (a limited
    search), the sets of roots are empty: each window looks up those of
    its roots (:func:`_window_served`). Unknown names are left out (see
    :func:`_refuse_unknown`).
    """
    found = {'rc': {}, 'trait': {}}
    served = collections.defaultdict(set)
    # Fetched at once: iterating a result fetches its rows one by one,
    # and a cloud's sharing pairs are as many as the roots they serve.
    for kind, name, row_id, root_id in utils.execute(
            context, utils.prepared(lookups.names_and_sharing(pairs)),
            {'classes': sorted(class_names),
             'traits': sorted(set(trait_names) | {sql.SHARING_TRAIT}),
             'sharing_trait': sql.SHARING_TRAIT}).all():
        if kind == 'served':
            if pairs:
                served[row_id].add(root_id)
            else:
                served[row_id] = set()
        else:
            found[kind][name] = row_id
    return found['rc'], found['trait'], served


def _refuse_unknown(context, request_groups, root_required, root_forbidden,
                    rc_ids, trait_ids, served):
    """Raise for a request naming an unknown class or trait.

    ResourceClassNotFound or TraitNotFound for the first unknown name
    in placement's order (see
    :func:`resobj.search.request.lookup_order`), unless, as placement,
    something before it leaves no candidate: no root passing
    ``root_required``, a ``member_of`` set that holds no provider, or an
    earlier group without candidates of its own. Then this returns: the
    request has no candidates, not an error. Run only once a name is
    unknown: a valid request pays no statement for it. ``served``: see
    :func:`_has_candidates_alone`.
    """
    known = {search_request.CLASS: (rc_ids, exception.ResourceClassNotFound),
             search_request.TRAIT: (trait_ids, exception.TraitNotFound)}
    for kind, value in search_request.lookup_order(
            request_groups, root_required, root_forbidden):
        if kind in known:
            ids, not_found = known[kind]
            if value not in ids:
                raise not_found(name=value)
        elif kind == search_request.ROOTS:
            root_filter, values = search_request.root_filter_and_params(
                trait_ids, root_required, root_forbidden)
            if not utils.execute(context, anchors.some_root_passing(
                    root_filter), values).first():
                return
        elif kind == search_request.MEMBER_OF:
            if not utils.execute(context, lookups.aggregates_in_use(),
                                 {'aggregates': sorted(value)}).first():
                return
        elif not _has_candidates_alone(context, value, root_required,
                                       root_forbidden, rc_ids, trait_ids,
                                       served):
            return


def _has_candidates_alone(context, request_group, root_required,
                          root_forbidden, rc_ids, trait_ids, served):
    """Whether ``request_group`` (its names known) has candidates alone.

    With ``root_required``; a resourceless group has them when a
    provider that passes its filters is in a tree whose root passes
    ``root_required``, or is a sharing provider that serves such a tree
    (placement 16.0.0, observed black-box), whatever its own root.
    ``served``: {sharing provider id: the roots it serves}, or None
    where those roots were not read (a limited search's lookups).
    """
    try:
        if request_group.resources:
            return bool(get_candidates(
                context, [request_group], limit=1,
                root_required=root_required,
                root_forbidden=root_forbidden)['allocation_requests'])
        tree_roots = _tree_roots(context, {request_group.in_tree} - {None})
    except exception.ResourceProviderNotFound:
        # An unknown in_tree provider: no tree to search.
        return False
    resourceless, = _resourceless(
        context, search_request.groups_with_ids([request_group], rc_ids),
        trait_ids, tree_roots)
    ids = {rp_id for rp_ids in resourceless.providers_by_root.values()
           for rp_id in rp_ids}
    root_filter, values = search_request.root_filter_and_params(
        trait_ids, root_required, root_forbidden)
    if not ids or not any(root_filter):
        return bool(ids)
    if served is None:
        # Only a request naming an unknown name gets here: reading every
        # sharing pair costs a valid request nothing.
        _rc_ids, _trait_ids, served = _names_and_sharing(context, (), ())
    for rp_id in ids.intersection(served):
        # A root is its own root: root_passing tests it as it is.
        ids.update(served[rp_id])
    return bool(utils.execute(context, anchors.root_passing(root_filter),
                              dict(values, ids=sorted(ids))).first())


def _tree_roots(context, uuids):
    """{provider uuid: its root id}; ResourceProviderNotFound if missing."""
    if not uuids:
        return {}
    found = dict(utils.execute(context, lookups.provider_roots(),
                               {'uuids': sorted(uuids)}).all())
    for uuid in sorted(uuids):
        if uuid not in found:
            raise exception.ResourceProviderNotFound(key=uuid)
    return found


def _anchor_statement(strategy, request, after, count):
    """(statement, values) of the first ``count`` roots above ``after``."""
    sharing = bool(request.served)
    values = dict(request.params, after=after, count=count)
    if sharing:
        values['sharing_ids'] = sorted(request.served)
    return utils.prepared(anchors.anchor_roots(
        request.shape, sharing, strategy.root_walk,
        request.root_filter)), values


def _window_served(context, strategy, request, roots):
    """{sharing provider id: the roots of ``roots`` it serves}.

    Every sharing provider of the request is a key, as in the whole
    cloud's search. One statement, none without sharing providers.
    """
    if not request.served:
        return request.served
    served = {sharer: set() for sharer in request.served}
    for sharer, root_id in utils.execute(
            context,
            utils.prepared(lookups.served_in_window(strategy.window_ids)),
            {'sharing_ids': sorted(request.served),
             'roots': strategy.window_ids.value(roots)}):
        served[sharer].add(root_id)
    return served


class _Window(typing.NamedTuple):
    """The first ``count`` candidate roots above root id ``after``."""

    after: int
    count: int


def _rows_statement(strategy, request, roots=None, window=None):
    """(statement, values) of the providers with room.

    ``roots``: only those trees' providers and the sharing providers.
    ``window``: a :class:`_Window`, whose roots the statement finds
    itself (``strategy.anchored_window``, without sharing providers).
    Neither: the whole cloud.
    """
    values = request.params
    sharing = bool(request.served)
    if window is not None:
        statement = row_statements.anchored(request.shape, strategy,
                                            request.root_filter)
        values = dict(values, after=window.after, count=window.count)
    elif roots is not None:
        statement = row_statements.of_roots(request.shape, strategy, sharing)
        values = dict(values, roots=strategy.window_ids.value(roots))
    else:
        statement = row_statements.whole_cloud(
            request.shape, strategy, sharing, request.root_filter)
    if sharing and (roots is not None or any(request.root_filter) or any(
            group.spread_required for group in request.shape)):
        values = dict(values, sharing_ids=sorted(request.served))
    return utils.prepared(statement), values


@functools.lru_cache(maxsize=512)
def _layout(statement):
    return search_rows.RowLayout.of_statement(statement)


def _candidate_rows(context, strategy, request, roots=None, window=None):
    """(rows, their RowLayout) of :func:`_rows_statement`."""
    statement, values = _rows_statement(strategy, request, roots, window)
    settings = strategy.whole_cloud_settings
    if roots is None and window is None and settings:
        # The whole cloud's search reads every inventory of the classes:
        # the backend's planner settings for that (see its strategy).
        with _settings(context, *settings):
            rows = utils.execute(context, statement, values).all()
        return rows, _layout(statement)
    result = utils.execute(context, statement, values)
    return _batched(result), _layout(statement)


def _batched(result):
    for batch in result.partitions(1000):
        yield from batch


@contextlib.contextmanager
def _settings(context, apply, reset):
    """Run the block with the SQL ``apply`` run, then ``reset``.

    A plain SET, reset after the block, whatever ends it: on PostgreSQL
    a pure read runs each statement on its own (outside a transaction
    block, see resobj.db.backends.postgresql), where SET LOCAL would end
    with the SET itself. Only a transaction block that a failed
    statement aborted cannot run the reset; its rollback undoes the SET
    anyway.
    """
    utils.execute(context, sa.text(apply))
    try:
        yield
    except Exception:
        if not facade.transaction_failed(context):
            utils.execute(context, sa.text(reset))
        raise
    utils.execute(context, sa.text(reset))


def _trait_links(context, strategy, provider_ids, trait_ids):
    """{rp_id: {trait_id}} of ``trait_ids`` among ``provider_ids``."""
    links = collections.defaultdict(set)
    id_list, ids = strategy.summary_id_set(provider_ids)
    for rp_id, trait_id in utils.execute(
            context, lookups.trait_links(id_list),
            {'ids': ids, 'traits': sorted(trait_ids)}).all():
        links[rp_id].add(trait_id)
    return links


def _served_passing(context, request, roots, served=None):
    """The :class:`resobj.search.index.Sharing` under ``root_required``.

    Its ``served``: {sharing provider id: the roots it serves that
    pass}; ``root_filtered_out``: the sharing providers whose own root
    does not pass (they still serve the trees of other roots). One
    statement, and only
    for the whole cloud's search: a window's roots passed root_required
    already (see ``anchors.anchor_roots``), and the search keeps to
    them. ``served``: the window's (see :func:`_window_served`) rather
    than the request's.
    """
    if served is None:
        served = request.served
    if roots is not None or not served or not any(request.root_filter):
        return search_index.Sharing(served)
    ids = set(served).union(*served.values())
    passing = set(utils.execute(
        context, anchors.root_passing(request.root_filter),
        dict(request.params, ids=sorted(ids))).scalars().all())
    return search_index.Sharing(
        {sharer: anchors_ & passing for sharer, anchors_ in served.items()},
        frozenset(served).difference(passing))


def _own_aggregates(context, request, held_back):
    """{group index: the ids of ``held_back``'s that are in its aggregates}.

    ``held_back``: {group index: sharing provider ids}
    (:func:`resobj.search.index.sharers_to_check`). Observed in
    placement 16.0.0: in a group that may spread over a tree and has
    ``member_of`` sets, a sharing provider serves another root's tree
    only when it is itself in an aggregate of each set; its root's
    aggregates count in its own tree only, as for any provider there.
    One statement per group (only the unsuffixed group spreads).
    """
    found = {}
    for index, ids in held_back.items():
        member_of = request.groups[index].member_of
        values = {'ids': sorted(ids)}
        values.update(('agg_%d_%d' % (index, n), sorted(any_of))
                      for n, any_of in enumerate(member_of))
        found[index] = frozenset(utils.execute(
            context, lookups.sharing_in_aggregates(
                index, request.shape[index]), values).scalars().all())
    return found


def _resourceless(context, groups, trait_ids, tree_roots):
    """[ResourcelessGroup] of the resourceless ``groups``.

    One statement for all; none for a group that no provider can serve
    (see :func:`resobj.search.request.matches_nothing`). A group's
    ``in_tree`` (looked up already, in ``tree_roots``) limits nothing
    (see :func:`resobj.search.request.as_searched`).
    """
    searched = [search_request.as_searched(group) for group in groups
                if not search_request.matches_nothing(group)]
    found = {group.suffix: collections.defaultdict(list)
             for group in groups}
    if searched:
        for index, rp_id, root_id in utils.execute(
                context, lookups.resourceless_providers(
                    search_request.shape(searched)),
                search_request.params(searched, trait_ids,
                                      tree_roots)).all():
            found[searched[index].suffix][root_id].append(rp_id)
    return [
        search_request.ResourcelessGroup(
            group, {root: sorted(ids)
                    for root, ids in found[group.suffix].items()})
        for group in groups]


class _Read(typing.NamedTuple):
    """One search's combination input, and the trees it read.

    ``search``: a :class:`resobj.search.combine.Search`; ``trees``:
    {root id: [row]} of the anchors' trees' providers, read for their
    parents (``same_subtree`` only), which the summaries use again.
    """

    search: combine.Search
    trees: dict


def _search(context, strategy, request, roots=None, window=None,
            served=None):
    """The :class:`_Read` of the candidate rows (see :func:`_rows_statement`).

    Reads, in this order, each only when the request needs it: the
    rows; the own aggregates of the sharing providers held back; the
    parents of the anchors' trees; the trait links of the providers a
    combination may use. ``served``: see :func:`_served_passing`.
    """
    plan = search_index.plan(request)
    sharing = _served_passing(context, request, roots, served)
    rows, layout = _candidate_rows(context, strategy, request, roots,
                                   window)
    indexed = search_index.index_rows(plan, rows, layout, sharing, roots)
    held_back = search_index.sharers_to_check(indexed)
    if held_back:
        indexed = search_index.serve_other_trees(
            indexed, _own_aggregates(context, request, held_back))
    trees, parents = {}, {}
    if request.subtrees:
        # The trees of the roots that may anchor a request (the roots of
        # the resourceless groups' providers are among them): their
        # parents for the combination, and the rows the summaries of
        # those trees need, read once.
        anchored = search_index.anchors(indexed)
        if anchored:
            trees = candidate_summary.tree_providers(context, strategy,
                                                     anchored)
            parents = {row.id: row.parent_provider_id
                       for rows in trees.values() for row in rows}
    links = {}
    spread_traits = request.spread_traits()
    combined = search_index.providers_to_combine(indexed) \
        if spread_traits else ()
    if combined:
        links = _trait_links(context, strategy, combined, spread_traits)
    return _Read(combine.Search(plan, indexed, parents, links), trees)


def _window_search(context, strategy, request, window):
    """(_Read, roots) of the candidate roots of ``window``.

    ``roots``: those roots, in id order (fewer than ``window.count``
    when no more are left; _Read None when there are none).
    """
    if strategy.anchored_window and not request.served:
        read = _search(context, strategy, request, window=window)
        # The roots of the window's rows (every row's provider has
        # figures), not of the resourceless groups' providers, which
        # are read for every root: the next window starts after these.
        indexed = read.search.indexed
        return read, sorted({indexed.root_of[rp]
                             for rp in indexed.figures})
    roots = utils.execute(context, *_anchor_statement(
        strategy, request, window.after, window.count)).scalars().all()
    if not roots:
        return None, roots
    served = _window_served(context, strategy, request, roots)
    return _search(context, strategy, request, roots, served=served), roots


def _request(context, groups, root_required, root_forbidden, same_subtree,
             limited=False):
    """The SearchRequest of ``groups``, names looked up.

    None for a request that has no candidates, although it names an
    unknown class or trait (see :func:`_refuse_unknown`). ``limited``: for a
    search by windows, whose ``served`` names the sharing providers only
    (see :func:`_names_and_sharing`).
    """
    class_names = search_request.class_names(groups)
    trait_names = search_request.trait_names(groups, root_required,
                                             root_forbidden)
    rc_ids, trait_ids, served = _names_and_sharing(
        context, class_names, trait_names, pairs=not limited)
    if not (class_names.issubset(rc_ids) and
            trait_names.issubset(trait_ids)):
        _refuse_unknown(context, groups, root_required, root_forbidden,
                        rc_ids, trait_ids, None if limited else served)
        return None
    # The search's own order, whatever the order of the lookups.
    groups = sorted(groups, key=operator.attrgetter('suffix'))
    tree_roots = _tree_roots(context, {g.in_tree for g in groups
                                       if g.in_tree is not None})
    groups = search_request.groups_with_ids(groups, rc_ids)
    resourced = [g for g in groups if g.resources]
    index = {g.suffix: n for n, g in enumerate(groups)}
    return search_request.search_request(
        resourced, trait_ids=trait_ids, tree_roots=tree_roots,
        names={rc_id: name for name, rc_id in rc_ids.items()},
        served=served, root_required=root_required,
        root_forbidden=root_forbidden,
        resourceless=_resourceless(context, groups[len(resourced):],
                                   trait_ids, tree_roots),
        subtrees=[frozenset(index[suffix] for suffix in suffixes)
                  for suffixes in same_subtree])


@facade.reader
def get_candidates(context, groups, limit=None, group_policy=None,
                   allow_nested=True, root_required=frozenset(),
                   root_forbidden=frozenset(), same_subtree=()):
    """Allocation requests that satisfy every group, and their summaries.

    ``groups``: :class:`resobj.search.request.Group` tuples (checked),
    in the order their names are looked up (see
    :func:`resobj.search.request.lookup_order`); the search itself takes
    them in suffix order. ``group_policy='isolate'``: no two
    use_same_provider groups on one provider. ``allow_nested=False``
    drops requests using two providers of one tree (placement before
    microversion 1.29), and then summarises only the providers used.
    ``root_required`` / ``root_forbidden``: trait names the root of each
    request's (non-sharing) tree must have / must not have; sharing
    providers serve such trees whatever their own root.
    A group with no ``resources`` (a resourceless group, suffixed)
    allocates nothing: one provider of the tree that passes its traits,
    aggregates and ``in_tree`` is mapped to it. ``same_subtree``: sets
    of group suffixes; in each set, one of the providers the groups use
    is an ancestor of (or is) every other (placement 1.36).

    Returns {'allocation_requests': [({rp_uuid: {class: amount}},
    {suffix: [rp_uuid]})], 'provider_summaries':
    {rp_uuid: {'resources': {class: {'capacity', 'used'}}, 'traits': [...],
    'parent_provider_uuid', 'root_provider_uuid'}}}, requests in root id
    order, at most ``limit`` of them. An unknown class raises
    ResourceClassNotFound, an unknown trait TraitNotFound, unless a
    ``member_of`` set that holds no provider, or a group without
    candidates of its own, comes first (then there is no candidate, see
    :func:`_refuse_unknown`); an unknown ``in_tree`` provider
    ResourceProviderNotFound.
    """
    strategy = _strategy(context)
    limit = search_request.bounded_limit(limit)
    request = _request(context, groups, root_required, root_forbidden,
                       same_subtree, limited=limit is not None)
    if request is None:
        return {'allocation_requests': [], 'provider_summaries': {}}
    isolate = group_policy == 'isolate'
    seen = set()
    if limit is None:
        read = _search(context, strategy, request)
        indexed = read.search.indexed
        whole_cloud = combine.requests(read.search, None, isolate,
                                       allow_nested, seen)
        found, used_roots = whole_cloud.requests, whole_cloud.used_roots
        mapped_outside = whole_cloud.mapped_outside
        figures, childless_roots = indexed.figures, indexed.childless_roots
        trees = read.trees
    else:
        # Tree by tree in root id order: a window of candidate roots, the
        # rows of those trees only, and a wider window only if the first
        # did not give ``limit`` requests (some roots pass the per-class
        # test yet give no request).
        found, used_roots, figures, childless_roots, trees = (
            [], set(), {}, {}, {})
        mapped_outside = set()
        window = _Window(0, limit)
        while len(found) < limit:
            read, roots = _window_search(context, strategy, request,
                                         window)
            if not roots:
                break
            in_window = combine.requests(read.search, limit - len(found),
                                         isolate, allow_nested, seen)
            found += in_window.requests
            used_roots |= in_window.used_roots
            mapped_outside |= in_window.mapped_outside
            figures.update(read.search.indexed.figures)
            childless_roots.update(read.search.indexed.childless_roots)
            trees.update(read.trees)
            if len(roots) < window.count:
                break
            window = _Window(roots[-1], min(window.count * 2,
                                            search_request.MAX_LIMIT))
    if not found:
        return {'allocation_requests': [], 'provider_summaries': {}}
    summaries, uuids = candidate_summary.summaries(
        context, strategy, used_roots, figures, childless_roots, trees)
    mapped_outside.difference_update(uuids)
    if mapped_outside:
        # Providers a resourceless group maps to outside the summarised
        # trees: named in the requests, not summarised.
        uuids.update(utils.execute(context, lookups.provider_uuids(),
                                   {'ids': sorted(mapped_outside)}).all())
    whole = dict(sorted((request.names[rc_id], amount) for rc_id, amount
                        in request.groups[0].rc_amounts.items()))
    found = shapes.as_returned(found, uuids, request.names, whole)
    if not allow_nested:
        # Before placement 1.29 the summaries are those of the providers
        # the requests use, not of their whole trees.
        summaries = shapes.used_only(found, summaries)
    return {'allocation_requests': found, 'provider_summaries': summaries}


# The searches whose statements warm_statements compiles: one unsuffixed
# group of one to MAX_WARM_CLASSES classes (VCPU, MEMORY_MB and DISK_GB
# for a flavor, one more for a GPU or PCPUs), without or with forbidden
# traits (nova asks for !COMPUTE_STATUS_DISABLED); each with and without
# a limit, and with and without sharing providers in the cloud.
MAX_WARM_CLASSES = 4


def _usual_group(rc_ids, forbidden):
    """An unsuffixed group of ``rc_ids``, 1 of each, forbidding traits."""
    return search_request.Group(
        suffix='', resources={}, required_traits=[],
        forbidden_traits=frozenset(forbidden), member_of=[],
        forbidden_aggs=frozenset(), in_tree=None, use_same_provider=False,
        rc_amounts={rc_id: 1 for rc_id in rc_ids})


def _usual_requests():
    """SearchRequests of the usual shapes, with made-up ids and values."""
    for classes in range(1, MAX_WARM_CLASSES + 1):
        for forbidden in ((), ('forbidden',)):
            group = _usual_group(range(classes), forbidden)
            names = {rc_id: str(rc_id) for rc_id in range(classes)}
            for served in ({}, {1: {1}}):
                yield search_request.search_request(
                    [group], trait_ids={'forbidden': 1}, tree_roots={},
                    names=names, served=served)


# What warm_connection runs: the classes of a flavor (one, two or all
# three) and the trait nova forbids on every request, each search with
# and without a limit.
WARM_CLASSES = ('DISK_GB', 'MEMORY_MB', 'VCPU')
WARM_FORBIDDEN = 'COMPUTE_STATUS_DISABLED'


@facade.reader
def warm_connection(context):
    """Run the usual searches' statements once on this connection.

    PostgreSQL prepares and plans a statement on the first run on each
    connection (see the statements marked by ``utils.prepared``), so a
    worker's first searches are much slower than the next ones. Run
    once per worker before it serves, this leaves the connection it
    used, the one a worker serving one request at a time uses again,
    with those statements ready. The searches are for class ids no
    inventory has, so each finds nothing, but reads the cloud once: the
    whole-cloud searches every inventory, the limited ones every root.
    Returns the number of searches run.
    """
    strategy = _strategy(context)
    searches = 0
    for classes in range(1, len(WARM_CLASSES) + 1):
        for forbidden in ((), (WARM_FORBIDDEN,)):
            names = WARM_CLASSES[:classes]
            # Run for each set of names too: its statement is one per
            # number of classes and traits.
            _rc_ids, trait_ids, served = _names_and_sharing(
                context, set(names), set(forbidden))
            # And as a limited search looks them up.
            _names_and_sharing(context, set(names), set(forbidden),
                               pairs=False)
            # Negative ids: no class has one.
            fake = {-1 - n: name for n, name in enumerate(names)}
            request = search_request.search_request(
                [_usual_group(fake, forbidden)], trait_ids=trait_ids,
                tree_roots={}, names=fake, served=served)
            _search(context, strategy, request)
            _window_search(context, strategy, request, _Window(0, 1))
            # The window finds no root to ask about: ask about none.
            _window_served(context, strategy, request, [0])
            searches += 2
    return searches


@facade.reader
def warm_statements(context):
    """Build and compile the usual searches' statements, running none.

    The first search of a shape in a process builds its statements and
    has SQLAlchemy compile them, which costs more than the search itself
    on a small cloud. Called before a service serves (and, for
    resobj-api, before it forks its workers, which inherit the cache),
    so that no request of a usual shape (see MAX_WARM_CLASSES) pays it.
    Returns the number of statements compiled (0 if the engine caches
    none).
    """
    strategy = _strategy(context)
    statements = [(utils.prepared(lookups.names_and_sharing(pairs)),
                   {'classes': (), 'traits': (), 'sharing_trait': ''})
                  for pairs in (True, False)]
    statements.append((
        utils.prepared(lookups.served_in_window(strategy.window_ids)),
        {'sharing_ids': [1], 'roots': strategy.window_ids.value([1])}))
    for request in _usual_requests():
        statements.append(_rows_statement(strategy, request))
        if strategy.anchored_window and not request.served:
            statements.append(_rows_statement(strategy, request,
                                              window=_Window(0, 1)))
        else:
            statements += [_rows_statement(strategy, request, roots=[1]),
                           _anchor_statement(strategy, request, 0, 1)]
    id_list, roots = strategy.summary_id_set([1])
    with_traits = strategy.summary_traits_inline
    statements += [
        (utils.prepared(summary_statements.providers(id_list, with_traits)),
         {'roots': roots}),
        (utils.prepared(summary_statements.inventories(id_list)),
         {'ids': roots})]
    if not with_traits:
        statements.append((utils.prepared(summary_statements.traits(id_list)),
                           {'roots': roots}))
    compiled = 0
    for statement, values in statements:
        compiled += utils.compile_into_cache(context, statement, values)
    return compiled
