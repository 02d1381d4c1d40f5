"""The candidate rows of one search, indexed by anchor root.

Stages 1 to 3 of the combination's pipeline (see
:mod:`resobj.search.combine`): the request's :class:`Plan`, the rows
indexed by :func:`index_rows`, the held-back sharing providers applied
by :func:`serve_other_trees`. Pure functions over named, immutable
data: nothing here reads the database.
"""

import typing

from resobj.search import rows as rows_module


class Plan(typing.NamedTuple):
    """One request's groups, as the combination takes them.

    ``groups``: those with resources (a row's ``grp`` column indexes
    them), then the resourceless ones; ``amounts``: per group, its
    ((class id, amount), ...) in class id order, and ``class_ids`` /
    ``counts`` the same as two columns; ``required``: per group, the
    trait id sets of which a spread group's providers together need one
    of each (empty for a single-provider group, whose providers the SQL
    filtered, and for a resourceless one); ``resourceless_providers``:
    {group index: {root id: [rp_id, ...]}} of the resourceless groups,
    their providers under their own roots; ``subtrees``: each
    ``same_subtree`` set as sorted group indexes; ``names``: {class id:
    name}.
    """

    groups: tuple
    amounts: tuple
    class_ids: tuple
    counts: tuple
    required: tuple
    resourceless_providers: dict
    subtrees: tuple
    names: dict


def plan(request):
    """The :class:`Plan` of a :class:`resobj.search.request.SearchRequest`."""
    groups = tuple(request.groups) + tuple(
        resourceless.group for resourceless in request.resourceless)
    first_resourceless = len(request.groups)
    amounts = tuple(tuple(sorted(group.rc_amounts.items()))
                    for group in groups)
    trait_ids = request.trait_ids
    return Plan(
        groups=groups,
        amounts=amounts,
        class_ids=tuple(tuple(rc_id for rc_id, _n in a) for a in amounts),
        counts=tuple(tuple(n for _rc_id, n in a) for a in amounts),
        required=tuple(
            () if group.use_same_provider or index >= first_resourceless
            else tuple(frozenset(trait_ids[name] for name in any_of)
                       for any_of in group.required_traits)
            for index, group in enumerate(groups)),
        resourceless_providers={
            first_resourceless + n: resourceless.providers_by_root
            for n, resourceless in enumerate(request.resourceless)},
        subtrees=tuple(tuple(sorted(s)) for s in request.subtrees),
        names=request.names)


class Sharing(typing.NamedTuple):
    """The sharing providers of one search.

    ``served``: {sharing provider id: the root ids it serves (those that
    pass ``root_required``)}; ``root_filtered_out``: the sharing
    providers whose own root fails ``root_required``: they serve the
    trees of other roots, not their own.
    """

    served: dict
    root_filtered_out: frozenset = frozenset()


class HeldBack(typing.NamedTuple):
    """A sharing provider under a root, waiting for its own aggregates.

    In group ``group``, which may spread and has ``member_of`` sets, it
    serves the roots ``serves`` (besides its own tree, ``own_root``'s)
    only if it is itself in those aggregates (see
    :func:`sharers_to_check`). ``classes``: the positions, in the plan's
    amounts, of the group's classes it has room for.
    """

    group: int
    provider: int
    own_root: int
    serves: frozenset
    classes: tuple


class Indexed(typing.NamedTuple):
    """The candidate rows of one search, indexed by anchor root.

    ``options``: per group, per class in the order of the plan's
    amounts, {anchor root id: [rp_id, ...]}, the providers with room;
    ``resourceless_options``: {group index: {anchor root id: [rp_id,
    ...]}} of the resourceless groups, sharing providers included;
    ``root_of``: {rp_id: its root id}; ``figures``: {rp_id: {class
    name: {'capacity', 'used'}}}, which the summaries take as they are;
    ``max_unit``: {(rp_id, class id): max_unit}, kept only when several
    groups may put two amounts on one provider and class;
    ``childless_roots``: {root id: its (uuid, inventories, traits), in
    :class:`resobj.search.rows.LoneRoot`'s order}, where the rows
    describe them;
    ``whole_roots``: the childless roots, served by no sharing provider,
    that take the only group whole (in no ``options``);
    ``settled_roots``: those and the childless roots that give no
    request, which no combination uses; ``held_back``: the
    :class:`HeldBack` sharing providers; ``sharing``: a
    :class:`Sharing`; ``window``: the only roots that may anchor (a
    window's), or None.
    """

    options: tuple
    resourceless_options: dict
    root_of: dict
    figures: dict
    max_unit: dict
    childless_roots: dict
    whole_roots: frozenset
    settled_roots: frozenset
    held_back: tuple
    sharing: Sharing
    window: typing.Optional[frozenset]


class _ClassColumns(typing.NamedTuple):
    """Where one class of one group is in a row, and its options."""

    capacity_at: int
    used_at: int
    max_unit_at: int
    rc_id: int
    name: str
    # {anchor root id: [rp_id, ...]}, filled as the rows are read.
    options: dict


def _add(by_anchor, anchor, rp_id):
    """Record ``rp_id`` as an option of ``anchor``."""
    found = by_anchor.get(anchor)
    if found is None:
        by_anchor[anchor] = [rp_id]
    else:
        found.append(rp_id)


def meets(required, traits):
    """Whether ``traits`` hold one of each set of ``required``."""
    for any_of in required:
        if any_of.isdisjoint(traits):
            return False
    return True


def _has_names(joined, required):
    """Whether trait names ``joined`` by commas meet ``required``.

    ``required``: sets of names, one of each needed.
    """
    return meets(required, joined.split(',') if joined else ())


def _resourceless_options(by_root, served):
    """A resourceless group's {root id: [rp_id, ...]}, sharing too.

    ``by_root``: its providers under their own roots. A sharing provider
    among them is also an option of every root it serves, as it is for
    a group with resources: placement maps such a group to a sharing
    provider in another tree, even one without inventory.
    """
    if not served:
        return by_root
    found = {root_id: list(providers) for root_id, providers
             in by_root.items()}
    for root_id, providers in by_root.items():
        for rp_id in providers:
            for anchor in served.get(rp_id, ()):
                if anchor != root_id:
                    _add(found, anchor, rp_id)
    return {root_id: sorted(providers) for root_id, providers
            in found.items()}


def index_rows(plan, rows, layout, sharing, window=None):
    """The :class:`Indexed` candidate ``rows`` of ``plan``'s groups.

    ``rows``: read through ``layout`` (a
    :class:`resobj.search.rows.RowLayout`); ``sharing``: a
    :class:`Sharing`; ``window``: only these roots may anchor.

    A sharing provider that is not a root and serves other roots' trees
    in a group that may spread and has ``member_of`` sets is left out of
    those trees, and held back (see :func:`sharers_to_check`).
    """
    groups, names = plan.groups, plan.names
    served, root_filtered_out = sharing.served, sharing.root_filtered_out
    options = tuple(tuple({} for _class in amounts)
                    for amounts in plan.amounts)
    # Per group, per class: where its figures are in a row, and its
    # options, read at once for each row.
    columns = [
        [_ClassColumns(layout.slots[n].capacity, layout.slots[n].used,
                       layout.slots[n].max_unit, rc_id, names[rc_id],
                       options[group][n])
         for n, (rc_id, _amount) in enumerate(amounts)]
        for group, amounts in enumerate(plan.amounts)]
    at_group, at_provider, at_root = (layout.group, layout.provider,
                                      layout.root)
    # Where a childless root's LoneRoot columns are, when the rows
    # describe them: their slice, a plain tuple in LoneRoot's order, is
    # kept as it is (one per root of a flat cloud, where building a
    # LoneRoot of each costs more than the rest of the row's reading).
    lone_at = layout.lone
    lone_end = None if lone_at is None else lone_at + len(
        rows_module.LoneRoot._fields)
    traits_at = None if lone_at is None else lone_at + \
        rows_module.LoneRoot._fields.index('traits')
    root_of, figures, max_unit, childless = {}, {}, {}, {}
    keep_max_unit = len(groups) > 1
    whole_roots, settled = set(), set()
    # One group: a childless root that no sharing provider serves takes
    # the group whole, with room for every class (and the traits of a
    # spread group, which its row names), or gives no request; it is
    # in none of the per-class options.
    one_group = len(groups) == 1
    sharing_or_served = (set(served).union(*served.values()) if served
                         else ())
    first = groups[0]
    root_traits = () if first.use_same_provider else first.required_traits
    every_class = len(columns[0])
    # Per group: whether a sharing provider's own aggregates decide if
    # it serves other roots' trees (placement's rule for a group that
    # may spread, with member_of sets); the rows passed the sets through
    # the provider's root, which is the same test for a root only.
    own_aggregates = [not group.use_same_provider and bool(group.member_of)
                      for group in groups]
    held_back = []
    for row in rows:
        rp_id, root_id, group = row[at_provider], row[at_root], \
            row[at_group]
        root_of[rp_id] = root_id
        classes = figures.get(rp_id)
        if classes is None:
            classes = figures[rp_id] = {}
        is_childless = lone_at is not None and row[lone_at + 1] is not None
        if is_childless:
            childless[rp_id] = row[lone_at:lone_end]
        group_columns = columns[group]
        for column in group_columns:
            capacity = row[column.capacity_at]
            if capacity is not None:
                classes[column.name] = {'capacity': capacity,
                                        'used': row[column.used_at]}
        # A root that takes the group whole, or gives no request, needs
        # its figures only (every root of a flat cloud).
        if is_childless and one_group and rp_id not in sharing_or_served:
            settled.add(rp_id)
            if len(classes) == every_class and (
                    not root_traits or _has_names(row[traits_at],
                                                  root_traits)):
                whole_roots.add(rp_id)
            continue
        in_own_tree = rp_id not in root_filtered_out
        serves = served.get(rp_id, ()) if served else ()
        if serves and rp_id != root_id and own_aggregates[group]:
            held_back.append(HeldBack(
                group, rp_id, root_id, serves,
                tuple(n for n, column in enumerate(group_columns)
                      if row[column.capacity_at] is not None)))
            serves = ()
        for column in group_columns:
            if row[column.capacity_at] is None:
                continue
            if keep_max_unit:
                max_unit[rp_id, column.rc_id] = row[column.max_unit_at]
            if in_own_tree:
                _add(column.options, root_id, rp_id)
            for anchor in serves:
                if anchor != root_id:
                    _add(column.options, anchor, rp_id)
    resourceless = {}
    for index, by_root in plan.resourceless_providers.items():
        resourceless[index] = _resourceless_options(by_root, served)
        for root_id, providers in by_root.items():
            for rp_id in providers:
                root_of[rp_id] = root_id
    return Indexed(
        options=options, resourceless_options=resourceless,
        root_of=root_of, figures=figures, max_unit=max_unit,
        childless_roots=childless, whole_roots=frozenset(whole_roots),
        settled_roots=frozenset(settled), held_back=tuple(held_back),
        sharing=sharing,
        window=None if window is None else frozenset(window))


def sharers_to_check(indexed):
    """{group index: ids of the sharing providers held back}.

    Observed in placement 16.0.0: in a group that may spread over a
    tree and has ``member_of`` sets, a sharing provider serves another
    root's tree only when it is itself in an aggregate of each set; its
    root's aggregates count in its own tree only. The DB API reads which
    of these are, for :func:`serve_other_trees`.
    """
    found = {}
    for held in indexed.held_back:
        found.setdefault(held.group, set()).add(held.provider)
    return found


def serve_other_trees(indexed, in_own_aggregates):
    """``indexed`` with the held-back providers that may serve serving.

    ``in_own_aggregates``: {group index: ids of the held-back providers
    in that group's every member_of set by their own aggregates}.
    """
    options = list(indexed.options)
    copied = set()
    for held in indexed.held_back:
        if held.provider not in in_own_aggregates.get(held.group, ()):
            continue
        if held.group not in copied:
            options[held.group] = tuple(
                {anchor: list(providers)
                 for anchor, providers in by_anchor.items()}
                for by_anchor in options[held.group])
            copied.add(held.group)
        for position in held.classes:
            by_anchor = options[held.group][position]
            for anchor in held.serves:
                if anchor != held.own_root:
                    _add(by_anchor, anchor, held.provider)
    return indexed._replace(options=tuple(options), held_back=())


def anchors(indexed):
    """The roots every group can be satisfied from, in id order."""
    found = indexed.window
    for by_class in indexed.options:
        for by_anchor in by_class:
            roots = by_anchor.keys()
            found = set(roots) if found is None else found & roots
    for by_root in indexed.resourceless_options.values():
        found = found & by_root.keys()
    # The roots that take the group whole are in no options.
    whole = indexed.whole_roots
    return sorted(found.union(whole) if whole else found)


def providers_to_combine(indexed):
    """The providers a combination may use: their trait links decide.

    The roots that take the group whole, or give no request, were
    checked on their rows' traits.
    """
    settled = indexed.settled_roots
    return [rp for rp in indexed.root_of if rp not in settled]
