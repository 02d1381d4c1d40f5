"""The allocation candidate search: which providers can take a request.

Everything runs in one reader transaction and a fixed number of
statements, whatever the number of providers or candidates:

1. one statement for the requested class and trait names to ids (with
   the sharing trait) and the roots each sharing provider serves (a
   handful of rows); one more for the roots of ``in_tree`` providers,
   if any; with ``root_required`` and sharing providers, one more for
   which of their roots and of the roots they serve pass it;
2. (with a limit) the first candidate roots, see below; on PostgreSQL
   without sharing providers, within the statement of 3;
3. the providers with room for the amount of each (group, class) pair,
   already filtered by the group's aggregates, tree and per-provider
   traits and by their root's traits (``root_required``), with their
   root, capacity, usage and max_unit, one row per provider and group:
   on SQLite one pass per provider; elsewhere one pass over the
   inventories per group for the whole cloud, in a window on
   PostgreSQL (without sharing providers) one pass over the window's
   inventories per group, from the roots of 2, and in other windows one
   UNION ALL branch per pair, merged. On SQLite and PostgreSQL each row
   also has the provider's uuid and, for a root without children, its
   number of inventories and traits (see
   ``candidate_sql.candidate_rows``);
4. when a group may spread over providers and requires traits, which of
   the candidate providers have them;
5. once the requests are chosen, the summaries of the trees they use:
   their providers with a count of their inventories, the inventories
   the rows of 3 did not hold (only if some provider has more: not in a
   flat cloud), and the traits (on PostgreSQL with the providers);
   none of them for the childless roots the rows of 3 described whole.

Between 4 and 5 the candidates are combined in Python
(``resobj.db.candidate_search``), per tree root ("anchor") in root id
order, stopping at ``limit``: only the requests returned are built, and
only their trees are summarised. With a limit,
step 2 asks for the first candidate roots (EXISTS tests the database
stops after ``limit`` roots) and step 3 reads those trees only; a wider
window follows only if those roots gave too few requests.

Group specs are plain dicts (see :func:`get_candidates`); results are
plain dicts, lists and tuples of uuids and names.
"""

import collections
import contextlib

import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import candidate_search
from resobj.db import candidate_sql as csql
from resobj.db import facade
from resobj.db import provider_sql as sql
from resobj import exception


def _names_and_sharing(context, class_names, trait_names):
    """({class: id}, {trait: id}, {sharer id: {root ids it serves}}).

    One statement (``candidate_sql.names_and_sharing``). The traits
    include the sharing trait. Unknown classes raise
    ResourceClassNotFound, then unknown traits TraitNotFound, each
    naming the first.
    """
    found = {'rc': {}, 'trait': {}}
    served = collections.defaultdict(set)
    for kind, name, row_id, root_id in utils.execute(
            context, csql.names_and_sharing(),
            {'classes': sorted(class_names),
             'traits': sorted(set(trait_names) | {sql.SHARING_TRAIT}),
             'sharing_trait': sql.SHARING_TRAIT}):
        if kind == 'served':
            served[row_id].add(root_id)
        else:
            found[kind][name] = row_id
    for name in sorted(set(class_names) - set(found['rc'])):
        raise exception.ResourceClassNotFound(name=name)
    for name in sorted(set(trait_names) - set(found['trait'])):
        raise exception.TraitNotFound(name=name)
    return found['rc'], found['trait'], served


def _tree_roots(context, uuids):
    """{provider uuid: its root id}; ResourceProviderNotFound if missing."""
    if not uuids:
        return {}
    found = dict(utils.execute(
        context,
        sa.select(sql.RP.c.uuid, sql.RP.c.root_provider_id).where(
            sql.RP.c.uuid.in_(sorted(uuids)))).all())
    for uuid in sorted(uuids):
        if uuid not in found:
            raise exception.ResourceProviderNotFound(key=uuid)
    return found


def _id_set(context, ids):
    """(style, bound value) of an id set, see candidate_sql.id_style."""
    style = csql.id_style(context.session.get_bind().dialect.name, ids)
    return style, csql.id_value(style, ids)


def _anchor_statement(request, after, count):
    """(statement, values) of the first ``count`` roots above ``after``."""
    served_roots = set().union(*request.served.values())
    values = dict(request.params, after=after, count=count)
    if served_roots:
        values['served_roots'] = sorted(served_roots)
    return csql.anchor_roots(request.shape, bool(served_roots),
                             request.blind, request.root_filter), values


def _anchor_roots(context, request, after, count):
    """The first ``count`` candidate root ids above ``after``."""
    return utils.execute(
        context, *_anchor_statement(request, after, count)).scalars().all()


def _rows_statement(request, roots=None, window=None):
    """(statement, values) of :func:`candidate_sql.candidate_rows`.

    ``roots``: only those trees' providers and the sharing providers.
    ``window``: (after, count), only the trees of the first ``count``
    candidate roots above ``after``, found by the same statement (see
    ``_Request.anchored``).
    """
    values = request.params
    sharing = bool(request.served)
    windowed = False
    if window is not None:
        windowed = 'anchored'
        values = dict(values, after=window[0], count=window[1])
    elif roots is not None:
        # On PostgreSQL one array, not a parameter per root: past 50
        # parameters psycopg no longer caches a statement's conversion
        # to its own placeholders, and SQLAlchemy renders the expanded
        # list into the SQL on every call.
        windowed = 'array' if request.dialect == 'postgresql' else 'bound'
        values = dict(values, roots=csql.id_value(windowed, roots))
    if sharing and (roots is not None or any(request.root_filter)):
        values = dict(values, sharing_ids=sorted(request.served))
    # The rows describe the roots without children on PostgreSQL too
    # (see candidate_sql.candidate_rows), as every search's do on
    # SQLite; MySQL's trees are summarised by their own statements.
    return csql.candidate_rows(
        request.shape, windowed, sharing, request.blind,
        request.root_filter, lone=request.dialect == 'postgresql'), values


def _candidate_rows(context, request, roots=None, window=None):
    """The rows of :func:`candidate_sql.candidate_rows`, in batches.

    ``roots`` and ``window``: see :func:`_rows_statement`.
    """
    statement, values = _rows_statement(request, roots, window)
    if roots is None and window is None and request.dialect == 'postgresql':
        # The whole cloud's search reads every inventory of the classes,
        # where hash joins are always right. PostgreSQL cannot estimate
        # how many inventories pass the capacity test (an expression over
        # several columns and a usage sum), guesses a handful, and then
        # nests loops that compare every provider with every inventory:
        # 100+ ms instead of 5 for 1,000 providers.
        with _without_nested_loops(context):
            rows = utils.execute(context, statement, values).all()
        yield from rows
        return
    result = utils.execute(context, statement, values)
    for batch in result.partitions(1000):
        yield from batch


@contextlib.contextmanager
def _without_nested_loops(context):
    """PostgreSQL plans the statements of the block without nested loops.

    A plain SET, reset after the block, whatever ends it: a pure read
    runs each statement on its own
    (facade.read_without_transaction_block), where SET LOCAL would end
    with the SET itself. Only a transaction block that a failed
    statement aborted cannot run the reset; its rollback undoes the SET
    anyway.
    """
    utils.execute(context, sa.text('SET enable_nestloop = off'))
    try:
        yield
    except Exception:
        if not facade.transaction_failed(context):
            utils.execute(context, sa.text('RESET enable_nestloop'))
        raise
    utils.execute(context, sa.text('RESET enable_nestloop'))


def _trait_links(context, provider_ids, trait_ids):
    """{rp_id: {trait_id}} of ``trait_ids`` among ``provider_ids``."""
    links = collections.defaultdict(set)
    style, ids = _id_set(context, provider_ids)
    for rp_id, trait_id in utils.execute(
            context, csql.trait_links(style),
            {'ids': ids, 'traits': sorted(trait_ids)}):
        links[rp_id].add(trait_id)
    return links


def _summaries(context, root_ids, known, lone):
    """Summaries of every provider in the trees of ``root_ids``.

    The providers and their inventory counts, then only the inventories
    that ``known`` (the candidate rows' {rp_id: {class name:
    {'capacity', 'used'}}}, whose dicts become the summaries' own) does
    not hold, then
    the traits. ``lone``: {root id: (uuid, inventories, trait names
    joined by commas or None)} of roots without children, from the
    candidate rows: such a tree whose inventories ``known`` holds all
    of is not read again (a flat cloud's every tree, on SQLite, whose
    summaries then take no statement at all). Returns ({uuid: summary dict},
    {rp_id: uuid}): the second names every provider of those trees,
    hence every provider of the requests (see :func:`_as_returned`).
    """
    summaries, traits_of, uuids, rest = {}, {}, {}, []
    for root_id in root_ids:
        found = lone.get(root_id)
        resources = known.get(root_id)
        if found is None or resources is None or \
                len(resources) != found[1]:
            rest.append(root_id)
            continue
        uuid = uuids[root_id] = found[0]
        summaries[uuid] = {
            'resources': resources,
            'traits': sorted(found[2].split(',')) if found[2] else [],
            'parent_provider_uuid': None, 'root_provider_uuid': uuid}
    if not rest:
        return summaries, uuids
    style, roots = _id_set(context, rest)
    values = {'roots': roots}
    rows = utils.execute(context, csql.summary_providers(style),
                         values).all()
    uuids.update((row[0], row[1]) for row in rows)
    missing = []
    for rp_id, uuid, parent_id, root_id, count, *names in rows:
        resources = known.get(rp_id)
        if resources is None:
            resources = {}
        if len(resources) != count:
            missing.append(rp_id)
        # Rows with the trait names (candidate_sql.summary_has_traits)
        # have a sixth column.
        traits_of[rp_id] = traits = (
            sorted(names[0].split(',')) if names and names[0] else [])
        summaries[uuid] = {
            'resources': resources, 'traits': traits,
            'parent_provider_uuid': uuids.get(parent_id),
            'root_provider_uuid': uuids[root_id]}
    if missing:
        read = {rp_id: {} for rp_id in missing}
        missing_style, ids = _id_set(context, missing)
        for rp_id, name, capacity, used in utils.execute(
                context, csql.summary_inventories(missing_style),
                {'ids': ids}).all():
            read[rp_id][name] = {'capacity': int(capacity),
                                 'used': int(used)}
        for rp_id, resources in read.items():
            summaries[uuids[rp_id]]['resources'] = resources
    if not csql.summary_has_traits(style):
        for rp_id, name in utils.execute(
                context, csql.summary_traits(style), values).all():
            traits_of[rp_id].append(name)
    return summaries, uuids


def _as_returned(found, uuid, names, whole):
    """The requests ``found`` with uuids and class names.

    ``found``: :meth:`candidate_search.Search.requests` results;
    ``uuid``: {rp_id: uuid}; ``whole``: {class name: amount} of the only
    group, in name order. Returns [({rp_uuid: {class: amount}}, {suffix:
    [rp_uuid]})], providers in uuid order, each one's classes by name.

    The candidate rows carry provider ids only (a uuid per row and class
    was a third of the values SQLite converted); the summaries read
    every uuid once. The requests one provider takes whole share the one
    dict ``whole`` (a thousand copies were a quarter of this function's
    time): read-only, as every part of the answer.
    """
    returned = []
    for first, second in found:
        if type(second) is int:
            # (suffix, rp): one provider takes the only group whole, its
            # resources those of the group, in name order already.
            rp_uuid = uuid[second]
            returned.append(({rp_uuid: whole}, {first: [rp_uuid]}))
            continue
        items, mappings = first, second
        # Every provider of the items is in one group's providers.
        by_suffix = {suffix: [uuid[rp] for rp in providers]
                     for suffix, providers in mappings}
        allocations = {}
        for rp_uuid, name, amount in sorted(
                (uuid[rp], names[rc_id], amount)
                for rp, rc_id, amount in items):
            resources = allocations.get(rp_uuid)
            if resources is None:
                allocations[rp_uuid] = {name: amount}
            else:
                resources[name] = amount
        returned.append((allocations, by_suffix))
    return returned


class _Request:
    """One request's groups, values and shared facts."""

    __slots__ = ('groups', 'trait_ids', 'names', 'served', 'shape',
                 'params', 'dialect', 'blind', 'root_filter', 'anchored',
                 'bare', 'subtrees')

    def __init__(self, context, groups, trait_ids, tree_roots, names,
                 served, root_required=(), root_forbidden=(), bare=(),
                 subtrees=()):
        # ``groups``: those with resources; ``bare``: see _resourceless;
        # ``subtrees``: each same_subtree set as indexes into groups
        # then bare (the order of candidate_search.Search's groups).
        self.bare = bare
        self.subtrees = subtrees
        self.dialect = context.session.get_bind().dialect.name
        # SQLite's planner has no statistics: see candidate_sql._with_room.
        self.blind = self.dialect == 'sqlite'
        self.groups = groups
        self.trait_ids = trait_ids
        self.names = names
        self.served = served
        self.shape = csql.shape(groups)
        required = {trait_ids[name] for name in root_required}
        forbidden = {trait_ids[name] for name in root_forbidden}
        self.root_filter = csql.root_shape(required, forbidden)
        self.params = dict(csql.params(groups, trait_ids, tree_roots),
                           **csql.root_params(required, forbidden))
        # A window's roots and its rows in one statement: without
        # sharing providers every root found has a row, so the rows name
        # them all (see candidate_sql.candidate_rows). A second
        # statement cost a round trip and its execution, 0.2 of 2.2 ms
        # on PostgreSQL for 50 roots.
        self.anchored = self.dialect == 'postgresql' and not served


def _served_passing(context, request, roots):
    """(served, homeless): the sharing providers under ``root_required``.

    ``served``: {sharing provider id: the roots it serves that pass};
    ``homeless``: the sharing providers whose own root does not pass
    (they still serve the trees of other roots). One statement, and only
    for the whole cloud's search: a window's roots passed root_required
    already (see candidate_sql.anchor_roots), and the search keeps to
    them.
    """
    served = request.served
    if roots is not None or not served or not any(request.root_filter):
        return served, frozenset()
    ids = set(served).union(*served.values())
    passing = set(utils.execute(
        context, csql.root_passing(request.root_filter),
        dict(request.params, ids=sorted(ids))).scalars().all())
    return ({sharer: anchors & passing for sharer, anchors in served.items()},
            frozenset(served).difference(passing))


def _resourceless(context, groups, trait_ids, tree_roots):
    """[(group, {root id: [rp_id, ...]})] of the resourceless ``groups``.

    One statement (``candidate_sql.resourceless_providers``) for all.
    """
    if not groups:
        return []
    found = [collections.defaultdict(list) for _group in groups]
    for index, rp_id, root_id in utils.execute(
            context, csql.resourceless_providers(csql.shape(groups)),
            csql.params(groups, trait_ids, tree_roots)):
        found[index][root_id].append(rp_id)
    return [(group, {root: sorted(ids) for root, ids in by_root.items()})
            for group, by_root in zip(groups, found)]


def _tree_parents(context, root_ids):
    """{rp_id: parent id} of every provider of the trees of ``root_ids``."""
    if not root_ids:
        return {}
    style, roots = _id_set(context, root_ids)
    return dict(utils.execute(context, csql.tree_parents(style),
                              {'roots': roots}).all())


def _search(context, request, roots=None, window=None):
    """A Search over the candidate rows (see :func:`_rows_statement`)."""
    served, homeless = _served_passing(context, request, roots)
    search = candidate_search.Search(
        request.groups, _candidate_rows(context, request, roots, window),
        served, request.names, roots, homeless, request.bare,
        request.subtrees)
    if request.subtrees:
        # The trees of the roots that may anchor a request: the roots of
        # the resourceless groups' providers are among them.
        search.parent = _tree_parents(context, set(search.anchors()))
    spread_traits = {request.trait_ids[name] for g in request.groups
                     if not g['use_same_provider']
                     for any_of in g['required_traits'] for name in any_of}
    if spread_traits and search.root:
        search.require_traits(request.trait_ids, _trait_links(
            context, search.root, spread_traits))
    return search


def _window_search(context, request, after, count):
    """(Search, roots) of the first ``count`` candidate roots above ``after``.

    ``roots``: those roots, in id order (fewer than ``count`` when no
    more are left; Search None when there are none).
    """
    if request.anchored:
        search = _search(context, request, window=(after, count))
        return search, sorted(set(search.root.values()))
    roots = _anchor_roots(context, request, after, count)
    if not roots:
        return None, roots
    return _search(context, request, roots), roots


@facade.reader
def get_candidates(context, groups, limit=None, group_policy=None,
                   allow_nested=True, root_required=frozenset(),
                   root_forbidden=frozenset(), same_subtree=()):
    """Allocation requests that satisfy every group, and their summaries.

    ``groups``: dicts with ``suffix``, ``resources`` ({class name:
    amount}), ``required_traits`` (list of sets of names: each set needs
    one), ``forbidden_traits``, ``member_of`` (list of sets of aggregate
    uuids: the provider or its root in one of each; the provider itself
    if ``use_same_provider``), ``forbidden_aggs`` (likewise),
    ``in_tree`` (a provider uuid or None) and
    ``use_same_provider`` (one provider takes the whole group; otherwise
    the group may spread over one tree's providers and the sharing
    providers serving that tree). ``group_policy='isolate'``: no two
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
    order, at most ``limit`` of them. Unknown classes raise
    ResourceClassNotFound, unknown traits TraitNotFound, an unknown
    ``in_tree`` provider ResourceProviderNotFound.
    """
    rc_ids, trait_ids, served = _names_and_sharing(
        context, set().union(*(g['resources'] for g in groups)),
        set(root_required).union(root_forbidden, *(
            set(g['forbidden_traits']).union(*g['required_traits'])
            for g in groups)))
    tree_roots = _tree_roots(context, {g['in_tree'] for g in groups
                                       if g['in_tree'] is not None})
    groups = [dict(g, rc_amounts={rc_ids[name]: amount for name, amount
                                  in g['resources'].items()})
              for g in groups]
    # The groups with resources first (the candidate rows' groups), then
    # the resourceless ones.
    groups = ([g for g in groups if g['resources']] +
              [g for g in groups if not g['resources']])
    resourced = [g for g in groups if g['resources']]
    index = {g['suffix']: n for n, g in enumerate(groups)}
    request = _Request(
        context, resourced, trait_ids, tree_roots,
        {rc_id: name for name, rc_id in rc_ids.items()}, served,
        root_required, root_forbidden,
        _resourceless(context, groups[len(resourced):], trait_ids,
                      tree_roots),
        [frozenset(index[suffix] for suffix in suffixes)
         for suffixes in same_subtree])
    isolate = group_policy == 'isolate'
    seen = set()
    if limit is not None and limit > csql.MAX_LIMIT:
        # More than any database holds, and more than its LIMIT binds.
        limit = None
    if limit is None:
        search = _search(context, request)
        found = search.requests(None, isolate, allow_nested, seen)
        used_roots, known, lone = search.used_roots, search.known, search.lone
    else:
        # Tree by tree in root id order: a window of candidate roots, the
        # rows of those trees only, and a wider window only if the first
        # did not give ``limit`` requests (some roots pass the per-class
        # test yet give no request).
        found, used_roots, known, lone = [], set(), {}, {}
        after, count = 0, limit
        while len(found) < limit:
            search, roots = _window_search(context, request, after, count)
            if not roots:
                break
            found += search.requests(limit - len(found), isolate,
                                     allow_nested, seen)
            used_roots |= search.used_roots
            known.update(search.known)
            lone.update(search.lone)
            if len(roots) < count:
                break
            after, count = roots[-1], min(count * 2, csql.MAX_LIMIT)
    if not found:
        return {'allocation_requests': [], 'provider_summaries': {}}
    summaries, uuids = _summaries(context, used_roots, known, lone)
    whole = dict(sorted((request.names[rc_id], amount) for rc_id, amount
                        in resourced[0]['rc_amounts'].items()))
    found = _as_returned(found, uuids, request.names, whole)
    if not allow_nested:
        # Before placement 1.29 the summaries are those of the providers
        # the requests use, not of their whole trees.
        used = {uuid for _allocations, mappings in found
                for chosen in mappings.values() for uuid in chosen}
        summaries = {uuid: summary for uuid, summary in summaries.items()
                     if uuid in used}
    return {'allocation_requests': found, 'provider_summaries': summaries}


# The searches whose statements warm_statements compiles: one unsuffixed
# group of one to MAX_WARM_CLASSES classes (VCPU, MEMORY_MB and DISK_GB
# for a flavor, one more for a GPU or PCPUs), without or with forbidden
# traits (nova asks for !COMPUTE_STATUS_DISABLED); each with and without
# a limit, and with and without sharing providers in the cloud.
MAX_WARM_CLASSES = 4


def _usual_group(rc_ids, forbidden):
    """An unsuffixed group of ``rc_ids``, 1 of each, forbidding traits."""
    return {'suffix': '', 'required_traits': [],
            'forbidden_traits': frozenset(forbidden), 'member_of': [],
            'forbidden_aggs': frozenset(), 'in_tree': None,
            'use_same_provider': False,
            'rc_amounts': {rc_id: 1 for rc_id in rc_ids}}


def _usual_requests(context):
    """_Requests of the usual shapes, with made-up ids and values."""
    for classes in range(1, MAX_WARM_CLASSES + 1):
        for forbidden in ((), ('forbidden',)):
            group = _usual_group(range(classes), forbidden)
            names = {rc_id: str(rc_id) for rc_id in range(classes)}
            for served in ({}, {1: {1}}):
                yield _Request(context, [group], {'forbidden': 1}, {},
                               names, served)


# What warm_connection runs: the classes of a flavor (one, two or all
# three) and the trait nova forbids on every request, each search with
# and without a limit.
WARM_CLASSES = ('DISK_GB', 'MEMORY_MB', 'VCPU')
WARM_FORBIDDEN = 'COMPUTE_STATUS_DISABLED'


@facade.reader
def warm_connection(context):
    """Run the usual searches' statements once on this connection.

    PostgreSQL prepares and plans a statement on the first run on each
    connection (see ``facade.prepare_marked_statements_at_once``): a
    worker's first ``limit=50`` search took 12.8 ms against 2.4 for the
    next ones, its first whole-cloud search 18.6 against 6.9, on the
    benchmark's 1,000 providers. Run once per worker before it serves,
    this leaves the connection it used (the pool hands out the one
    returned last) with those statements ready. The searches are for
    class ids no inventory has, so each finds nothing, but reads the
    cloud once: the whole-cloud searches every inventory, the limited
    ones every root. Returns the number of searches run.
    """
    searches = 0
    for classes in range(1, len(WARM_CLASSES) + 1):
        for forbidden in ((), (WARM_FORBIDDEN,)):
            names = WARM_CLASSES[:classes]
            # Run for each set of names too: its statement is one per
            # number of classes and traits.
            _rc_ids, trait_ids, served = _names_and_sharing(
                context, set(names), set(forbidden))
            # Negative ids: no class has one.
            fake = {-1 - n: name for n, name in enumerate(names)}
            request = _Request(context, [_usual_group(fake, forbidden)],
                               trait_ids, {}, fake, served)
            _search(context, request)
            _window_search(context, request, 0, 1)
            searches += 2
    return searches


@facade.reader
def warm_statements(context):
    """Build and compile the usual searches' statements, running none.

    The first search of a shape in a process builds its statements and
    has SQLAlchemy compile them: 10-25 ms, more than the search itself
    on a small cloud. Called before a service serves (and, for
    resobj-api, before it forks its workers, which inherit the cache),
    so that no request of a usual shape (see MAX_WARM_CLASSES) pays it.
    Returns the number of statements compiled (0 if the engine caches
    none).
    """
    statements = [(csql.names_and_sharing(),
                   {'classes': (), 'traits': (), 'sharing_trait': ''})]
    for request in _usual_requests(context):
        statements.append(_rows_statement(request))
        if request.anchored:
            statements.append(_rows_statement(request, window=(0, 1)))
        else:
            statements += [_rows_statement(request, roots=[1]),
                           _anchor_statement(request, 0, 1)]
    style, roots = _id_set(context, [1])
    statements += [(csql.summary_providers(style), {'roots': roots}),
                   (csql.summary_inventories(style), {'ids': roots})]
    if not csql.summary_has_traits(style):
        statements.append((csql.summary_traits(style), {'roots': roots}))
    compiled = 0
    for statement, values in statements:
        compiled += utils.compile_into_cache(context, statement, values)
    return compiled
