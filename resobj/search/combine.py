"""The combination of the candidate rows into allocation requests.

A pipeline of pure functions over named, immutable data. The DB API
reads what one search needs in a fixed order and hands each reading to
the next function here; nothing here reads the database:

1. :func:`resobj.search.index.plan`: the request's groups as the
   combination takes them.
2. The candidate rows (:mod:`resobj.search.statements.rows`), indexed by
   :func:`resobj.search.index.index_rows` into
   :class:`resobj.search.index.Indexed`: per group and class, the
   providers with room under each tree root ("anchor").
3. The own aggregates of the sharing providers
   :func:`resobj.search.index.sharers_to_check` names, which
   :func:`resobj.search.index.serve_other_trees` applies (a new Indexed).
4. The parents of the trees of the
   :func:`resobj.search.index.anchors` (``same_subtree`` only) and the
   trait links of :func:`resobj.search.index.providers_to_combine`
   (spread groups that require traits): with the plan and the index, a
   :class:`Search`.
5. :func:`requests`: the allocation requests of a Search, as
   :mod:`resobj.search.shapes` requests of ids, in :class:`Found`.
"""

import itertools
import typing

from resobj.search import index
from resobj.search import shapes


class Search(typing.NamedTuple):
    """Everything the combination of one search needs.

    ``parents``: {rp_id: parent id} of the anchors' trees (read for
    ``same_subtree`` only); ``trait_links``: {rp_id: {trait id}} of the
    providers a combination may use (read when a spread group requires
    traits).
    """

    plan: index.Plan
    indexed: index.Indexed
    parents: dict
    trait_links: dict


class Found(typing.NamedTuple):
    """The requests of a search, and what their summaries need.

    ``requests``: :class:`shapes.WholeRequest` and
    :class:`shapes.Combination`; ``used_roots``: the roots of the
    providers they allocate from, whose trees are summarised;
    ``mapped_outside``: the providers a resourceless group maps to
    outside those trees (sharing providers), named but not summarised.
    """

    requests: list
    used_roots: set
    mapped_outside: set


class _Part(typing.NamedTuple):
    """One group's share of a candidate.

    ``items``: ((rp_id, class id, amount), ...); ``providers``: those it
    uses, sorted.
    """

    items: tuple
    providers: tuple


def _parts(search, group_at, anchor):
    """Every way group ``group_at`` can be served from ``anchor``."""
    resourceless = search.indexed.resourceless_options.get(group_at)
    if resourceless is not None:
        # Any of its providers in the tree, allocating nothing.
        return [_Part((), (rp,)) for rp in resourceless.get(anchor, ())]
    chosen = [by_anchor.get(anchor)
              for by_anchor in search.indexed.options[group_at]]
    if None in chosen:
        return ()
    same = search.plan.groups[group_at].use_same_provider
    if all(len(options) == 1 for options in chosen):
        # One provider per class (every flat cloud): one way at most.
        chosen = [options[0] for options in chosen]
        first = chosen[0]
        providers = ((first,) if chosen.count(first) == len(chosen)
                     else tuple(sorted(set(chosen))))
        if (same and len(providers) > 1) or not _has_required(
                search, group_at, providers):
            return ()
        return [_Part(_items(search.plan, group_at, chosen), providers)]
    choices = [sorted(options) for options in chosen]
    if same:
        common = set(choices[0]).intersection(*choices[1:])
        classes = len(choices)
        return [_Part(_items(search.plan, group_at, (rp,) * classes), (rp,))
                for rp in sorted(common)]
    parts = []
    for chosen in itertools.product(*choices):
        providers = tuple(sorted(set(chosen)))
        if _has_required(search, group_at, providers):
            parts.append(_Part(_items(search.plan, group_at, chosen),
                               providers))
    return parts


def _items(plan, group_at, chosen):
    """((rp_id, rc_id, amount), ...) of group ``group_at`` on ``chosen``.

    ``chosen``: one provider per class, in the order of the amounts.
    """
    return tuple(zip(chosen, plan.class_ids[group_at], plan.counts[group_at]))


def _has_required(search, group_at, providers):
    """Whether ``providers`` together have group ``group_at``'s traits."""
    required = search.plan.required[group_at]
    if not required:
        return True
    links = search.trait_links
    if len(providers) == 1:
        # One provider, the usual case: its own set, not a copy.
        traits = links.get(providers[0], ())
    else:
        traits = set().union(*(links.get(rp, ()) for rp in providers))
    return index.meets(required, traits)


def in_one_subtree(parents, providers):
    """Whether one of ``providers`` is an ancestor of all the others.

    ``parents``: {rp_id: parent id}. Placement's ``same_subtree``: a
    provider counts as its own ancestor, so one provider alone always
    passes.
    """
    if len(providers) == 1:
        return True
    for top in providers:
        for rp in providers:
            while rp is not None and rp != top:
                rp = parents.get(rp)
            if rp is None:
                break
        else:
            return True
    return False


def _merge(search, parts, isolate, allow_nested):
    """One request from one part per group, or None if it is invalid.

    For two groups or more (one group goes through
    :func:`_one_group_requests`). Returns (((rp_id, rc_id, amount),
    ...), ((suffix, providers), ...)).
    """
    groups, indexed = search.plan.groups, search.indexed
    if isolate:
        single = [part.providers[0] for group, part in zip(groups, parts)
                  if group.use_same_provider]
        if len(set(single)) != len(single):
            return None
    for subtree in search.plan.subtrees:
        providers = set()
        for group_at in subtree:
            providers.update(parts[group_at].providers)
        if not in_one_subtree(search.parents, providers):
            return None
    totals = {}
    shared = []
    for part in parts:
        for rp, rc_id, amount in part.items:
            key = (rp, rc_id)
            if key in totals:
                shared.append(key)
                totals[key] += amount
            else:
                totals[key] = amount
    # Several groups on one (provider, class): each fitted alone, so
    # check the sum.
    names = search.plan.names
    for rp, rc_id in shared:
        amount = totals[rp, rc_id]
        figures = indexed.figures[rp][names[rc_id]]
        if figures['used'] + amount > figures['capacity'] or \
                amount > indexed.max_unit[rp, rc_id]:
            return None
    items = tuple((rp, rc_id, amount)
                  for (rp, rc_id), amount in totals.items())
    if not allow_nested:
        used = {rp for rp, _rc, _amount in items}
        if len({indexed.root_of[rp] for rp in used}) != len(used):
            return None
    return items, tuple((group.suffix, part.providers)
                        for group, part in zip(groups, parts))


def requests(search, limit, isolate, allow_nested, seen):
    """:class:`Found`: up to ``limit`` requests not in ``seen``.

    Anchor by anchor. Each is a :class:`shapes.Combination` of a
    :func:`_merge` result, or a :class:`shapes.WholeRequest` when one
    provider takes the only group whole; see :func:`shapes.as_returned`.
    ``seen``: the requests found so far (by earlier windows), which this
    adds to.
    """
    found = Found([], set(), set())
    if len(search.plan.groups) == 1:
        _one_group_requests(search, limit, allow_nested, seen, found)
        return found
    served = search.indexed.sharing.served
    root_of = search.indexed.root_of
    # The same request can come from two anchors only through a sharing
    # provider, which is an option of every root it serves.
    dedup = bool(served)
    for anchor in index.anchors(search.indexed):
        per_group = []
        for group_at in range(len(search.plan.groups)):
            parts = _parts(search, group_at, anchor)
            if not parts:
                break
            per_group.append(parts)
        else:
            before = len(found.requests)
            for parts in itertools.product(*per_group):
                merged = _merge(search, parts, isolate, allow_nested)
                if merged is None:
                    continue
                if dedup:
                    if merged in seen:
                        continue
                    seen.add(merged)
                    _record_roots(root_of, merged, found)
                found.requests.append(shapes.Combination(*merged))
                if limit is not None and len(found.requests) >= limit:
                    break
            if len(found.requests) > before and not dedup:
                # Without sharing providers, a request's providers are
                # all in its anchor's tree.
                found.used_roots.add(anchor)
            if limit is not None and len(found.requests) >= limit:
                break
    return found


def _record_roots(root_of, merged, found):
    """Add the roots a request (a :func:`_merge` result) uses to ``found``.

    A sharing provider may be in another tree than the anchor. The trees
    summarised are those of the providers allocated from: as in
    placement, a sharing provider that a resourceless group maps to in
    another tree adds no tree (only its uuid is needed).
    """
    items, mappings = merged
    roots = {root_of[rp] for rp, _rc, _n in items}
    found.used_roots.update(roots)
    for _suffix, providers in mappings:
        for rp in providers:
            if root_of[rp] not in roots:
                found.mapped_outside.add(rp)


def _one_group_requests(search, limit, allow_nested, seen, found):
    """:func:`requests` of the only group, into ``found``: no merge.

    Each way of taking every class from one of the anchor's options for
    it is a request. One provider that takes all of it is a
    :class:`shapes.WholeRequest` (every request of a flat cloud). Only
    a request of sharing providers alone can come from several anchors
    (each serves several roots): those are kept once.
    """
    plan, indexed = search.plan, search.indexed
    served = indexed.sharing.served or {}
    group = plan.groups[0]
    suffix, same = group.suffix, group.use_same_provider
    options = indexed.options[0]
    rc_ids, counts = plan.class_ids[0], plan.counts[0]
    classes = len(options)
    check_traits = bool(plan.required[0])
    whole_roots, root_of = indexed.whole_roots, indexed.root_of
    requests_, used_roots = found.requests, found.used_roots
    # Built straight from a tuple, without a call of the generated
    # __new__: there is one per root of a flat cloud.
    new, whole_request = tuple.__new__, shapes.WholeRequest
    for anchor in index.anchors(indexed):
        if anchor in whole_roots:
            requests_.append(new(whole_request, (suffix, anchor)))
            used_roots.add(anchor)
            if limit is not None and len(requests_) >= limit:
                break
            continue
        chosen = [by_anchor[anchor] for by_anchor in options]
        # Whether each way's providers need their traits checked (never
        # for a single-provider group, checked in SQL); decided for the
        # anchor's every way at once where it can be: each way holds
        # the providers that are the only option of a class, and none
        # holds more than the union of the options.
        way_traits = check_traits
        if way_traits:
            every = tuple({rps[0] for rps in chosen if len(rps) == 1})
            if every and _has_required(search, 0, every):
                way_traits = False
            elif not _has_required(search, 0, tuple(
                    {rp for rps in chosen for rp in rps})):
                continue
        if same:
            common = set(chosen[0]).intersection(*chosen[1:])
            ways = [(rp,) * classes for rp in sorted(common)]
        elif all(len(rps) == 1 for rps in chosen):
            ways = [tuple(rps[0] for rps in chosen)]
        else:
            ways = itertools.product(*[sorted(rps) for rps in chosen])
        for way in ways:
            first = way[0]
            if way.count(first) == classes:
                providers = (first,)
            else:
                providers = tuple(sorted(set(way)))
            if way_traits and not _has_required(search, 0, providers):
                continue
            if len(providers) == 1 and first not in served:
                requests_.append(new(whole_request, (suffix, first)))
                used_roots.add(anchor)
            else:
                roots = [root_of[rp] for rp in providers]
                if not allow_nested and len(set(roots)) != len(roots):
                    continue
                items = tuple(zip(way, rc_ids, counts))
                mappings = ((suffix, providers),)
                if all(rp in served for rp in providers):
                    if (items, mappings) in seen:
                        continue
                    seen.add((items, mappings))
                requests_.append(shapes.Combination(items, mappings))
                used_roots.update(roots)
            if limit is not None and len(requests_) >= limit:
                break
        if limit is not None and len(requests_) >= limit:
            break
