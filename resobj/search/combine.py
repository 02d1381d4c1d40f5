"""The combination of the candidate rows into allocation requests.

The DB API reads the providers with room for each class of each request
group (:mod:`resobj.search.statements.rows`); :class:`Search` combines
those rows per tree root ("anchor") into allocation requests. Nothing
here reads the database: rows in, :mod:`resobj.search.shapes` requests
of ids out.
"""

import collections
import itertools

from resobj.search import rows as rows_module
from resobj.search import shapes


# One group's share of a candidate: ((rp_id, rc_id, amount), ...) and the
# providers it uses, sorted.
_Part = collections.namedtuple('_Part', 'items providers')


def _add(by_anchor, anchor, rp_id):
    """Record ``rp_id`` as an option of ``anchor``."""
    found = by_anchor.get(anchor)
    if found is None:
        by_anchor[anchor] = [rp_id]
    else:
        found.append(rp_id)


def _meets(required, traits):
    """Whether ``traits`` hold one of each set of ``required``."""
    for any_of in required:
        if any_of.isdisjoint(traits):
            return False
    return True


def _has_names(joined, required):
    """Whether trait names ``joined`` by commas meet ``required``.

    ``required``: sets of names, one of each needed.
    """
    return _meets(required, joined.split(',') if joined else ())


def _bare_options(by_root, served):
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


class Search:
    """The candidate rows of one request, combined per anchor root.

    ``groups``: the groups with resources (with ``rc_amounts``), those
    of the rows; ``rows``: the candidate rows, read through ``layout``
    (a :class:`resobj.search.rows.RowLayout`); ``served``: {sharing
    provider id: {root ids it serves}}; ``names``: {class id: name};
    ``roots``: only these anchors (a window); ``homeless``: sharing
    providers whose own root fails ``root_required``; ``bare``: the
    resourceless groups and their providers per root; ``subtrees``: the
    ``same_subtree`` sets as group indexes.

    A sharing provider that is not a root and serves other roots' trees
    in a group that may spread and has ``member_of`` sets is left out of
    those trees until :meth:`serve_other_trees` says it is itself in the
    aggregates (see :meth:`sharers_to_check`).
    """

    def __init__(self, groups, rows, layout, served, names, roots=None,
                 homeless=frozenset(), bare=(), subtrees=()):
        # The groups with resources (those of the rows, whose first
        # column is an index into them), then the resourceless ones.
        groups = list(groups) + [group for group, _found in bare]
        self.groups = groups
        # {group index: {root id: [rp_id, ...]}} of resourceless groups:
        # the providers that pass their traits and aggregates, per root
        # they may anchor (see _bare_options).
        first_bare = len(groups) - len(bare)
        self.bare = {first_bare + n: _bare_options(found, served)
                     for n, (_group, found) in enumerate(bare)}
        # Each same_subtree set as group indexes, and {rp_id: parent id}
        # of the providers of the trees (see in_one_subtree), which the
        # DB API fills in once the rows are read, with ``trees``.
        self.subtrees = [tuple(sorted(s)) for s in subtrees]
        self.parent = {}
        # {root id: [row]} of those trees' providers, where the DB API
        # read them for the parents: the summaries use them again.
        self.trees = {}
        self.served = served
        self.names = names
        self.roots = None if roots is None else set(roots)
        self.root = {}
        # The roots of the providers the returned requests allocate
        # from, whose trees are summarised; and the providers a
        # resourceless group maps to outside them (sharing providers).
        self.used_roots = set()
        self.mapped_elsewhere = set()
        # {rp_id: {class name: {'capacity', 'used'}}}: the summaries take
        # these dicts as they are, with no second read or copy.
        self.known = {}
        # {(rp_id, rc_id): max_unit}, kept only when several groups may
        # put two amounts on one provider and class (see merge).
        self.max_unit = {}
        keep_max_unit = len(groups) > 1
        # Per group: {rc_id: {anchor root id: [rp_id, ...]}}.
        self.options = [{rc_id: {} for rc_id in group.rc_amounts}
                        for group in groups]
        self.amounts = [sorted(group.rc_amounts.items())
                        for group in groups]
        # Per group: the options of each class, in the order of amounts.
        self.option_lists = [[self.options[grp][rc_id] for rc_id, _a in a]
                             for grp, a in enumerate(self.amounts)]
        # Per group: (class ids, amounts), in the order of amounts.
        self.columns = [tuple(zip(*amounts)) for amounts in self.amounts]
        # Per group, per class: where its capacity, usage and max_unit
        # are in a row, its class id, name and options.
        slots = [[(*layout.slots[n], rc_id, names[rc_id],
                   self.options[grp][rc_id])
                  for n, (rc_id, _amount) in enumerate(amounts)]
                 for grp, amounts in enumerate(self.amounts)]
        at_group, at_provider, at_root = (layout.group, layout.provider,
                                          layout.root)
        # The (uuid, lone, traits) of a childless root (see
        # resobj.search.rows.LoneRoot), where the rows describe them.
        lone_at = layout.lone
        lone_end = None if lone_at is None else lone_at + len(
            rows_module.LoneRoot._fields)
        traits_at = None if lone_at is None else lone_at + \
            rows_module.LoneRoot._fields.index('traits')
        root, known, max_units = self.root, self.known, self.max_unit
        # {root id: LoneRoot-ordered (uuid, inventories, traits)} of the
        # roots without children, when the rows describe them.
        self.lone = lone = {}
        # One group: a childless root that no sharing provider serves
        # takes the group alone, with room for every class (and the
        # traits of a spread group, which its row names), or gives no
        # request. Such a root is recorded here ({root id: itself}) and
        # not among the per-class options.
        self.alone = alone = {}
        # Those roots, and the ones that give no request: no combination
        # uses them.
        self.decided = decided = set()
        group = groups[0]
        alone_ok = len(groups) == 1
        # The sharing providers and the roots they serve: more providers
        # than their own may serve these.
        shared = set(served).union(*served.values()) if served else ()
        lone_traits = () if group.use_same_provider else \
            group.required_traits
        whole = len(slots[0])
        # Per group: whether a sharing provider's own aggregates decide
        # if it serves other roots' trees (placement's rule for a group
        # that may spread, with member_of sets); the rows passed the
        # sets through the provider's root, which is the same test for
        # a root only.
        own_aggregates = [not group.use_same_provider and bool(
            group.member_of) for group in groups]
        # [(group index, rp_id, its root id, the anchors it would serve,
        # its classes' {anchor: options})] held back for that test.
        self.held_back = held_back = []
        for row in rows:
            rp_id, root_id = row[at_provider], row[at_root]
            root[rp_id] = root_id
            classes = known.get(rp_id)
            if classes is None:
                classes = known[rp_id] = {}
            is_lone = lone_at is not None and row[lone_at + 1] is not None
            if is_lone:
                lone[rp_id] = row[lone_at:lone_end]
            group_slots = slots[row[at_group]]
            for capacity_at, used_at, _max_unit_at, _rc_id, name, \
                    _options in group_slots:
                capacity = row[capacity_at]
                if capacity is not None:
                    classes[name] = {'capacity': capacity,
                                     'used': row[used_at]}
            # A root that takes the group alone, or gives no request,
            # needs its figures only (every root of a flat cloud).
            if is_lone and alone_ok and rp_id not in shared:
                decided.add(rp_id)
                if len(classes) == whole and (
                        not lone_traits or _has_names(
                            row[traits_at], lone_traits)):
                    alone[rp_id] = rp_id
                continue
            # ``homeless``: sharing providers whose own root fails
            # root_required; they still serve the trees of other roots.
            home = rp_id not in homeless
            anchors = served.get(rp_id, ()) if served else ()
            if anchors and rp_id != root_id and \
                    own_aggregates[row[at_group]]:
                held_back.append((row[at_group], rp_id, root_id, anchors, [
                    by_anchor for capacity_at, _u, _m, _r, _n, by_anchor
                    in group_slots if row[capacity_at] is not None]))
                anchors = ()
            for capacity_at, _used_at, max_unit_at, rc_id, _name, \
                    by_anchor in group_slots:
                if row[capacity_at] is None:
                    continue
                if keep_max_unit:
                    max_units[rp_id, rc_id] = row[max_unit_at]
                if home:
                    _add(by_anchor, root_id, rp_id)
                for anchor in anchors:
                    if anchor != root_id:
                        _add(by_anchor, anchor, rp_id)
        for _group, by_root in bare:
            for root_id, providers in by_root.items():
                for rp_id in providers:
                    root[rp_id] = root_id
        self.required = [()] * len(groups)
        self.links = {}

    def sharers_to_check(self):
        """{group index: ids of the sharing providers held back}.

        Those whose own aggregates decide whether they serve other
        roots' trees in that group (see the class's description).
        """
        found = {}
        for index, rp_id, _root, _anchors, _options in self.held_back:
            found.setdefault(index, set()).add(rp_id)
        return found

    def serve_other_trees(self, allowed):
        """Let the held-back sharing providers in ``allowed`` serve.

        ``allowed``: {group index: ids in that group's every member_of
        set by their own aggregates}. Call before any other method.
        """
        for index, rp_id, root_id, anchors, options in self.held_back:
            if rp_id not in allowed.get(index, ()):
                continue
            for by_anchor in options:
                for anchor in anchors:
                    if anchor != root_id:
                        _add(by_anchor, anchor, rp_id)
        self.held_back = []

    def require_traits(self, trait_ids, links):
        """Check spread groups' required traits with ``links``.

        A single-provider group's providers were filtered by their
        traits in SQL: nothing is left to check for it here.
        """
        self.required = [
            [] if group.use_same_provider else
            [frozenset(trait_ids[n] for n in any_of)
             for any_of in group.required_traits]
            for group in self.groups]
        self.links = links

    def anchors(self):
        """The roots every group can be satisfied from, in id order."""
        found = self.roots
        for index, amounts in enumerate(self.amounts):
            for rc_id, _amount in amounts:
                roots = self.options[index][rc_id].keys()
                found = set(roots) if found is None else found & roots
        for by_root in self.bare.values():
            found = found & by_root.keys()
        # The roots that take the group alone are in no options.
        return sorted(found.union(self.alone) if self.alone else found)

    def parts(self, index, anchor):
        """Every way group ``index`` can be served from ``anchor``."""
        if index in self.bare:
            # A resourceless group: any of its providers in the tree,
            # allocating nothing.
            return [_Part((), (rp,))
                    for rp in self.bare[index].get(anchor, ())]
        chosen = [by_anchor.get(anchor)
                  for by_anchor in self.option_lists[index]]
        if None in chosen:
            return ()
        same = self.groups[index].use_same_provider
        if all(len(options) == 1 for options in chosen):
            # One provider per class (every flat cloud): one way at most.
            chosen = [options[0] for options in chosen]
            first = chosen[0]
            providers = ((first,) if chosen.count(first) == len(chosen)
                         else tuple(sorted(set(chosen))))
            if (same and len(providers) > 1) or not self._has_required(
                    index, providers):
                return ()
            return [_Part(self._items(index, chosen), providers)]
        amounts = self.amounts[index]
        choices = [sorted(options) for options in chosen]
        if same:
            common = set(choices[0]).intersection(*choices[1:])
            return [_Part(self._items(index, (rp,) * len(amounts)), (rp,))
                    for rp in sorted(common)]
        parts = []
        for chosen in itertools.product(*choices):
            providers = tuple(sorted(set(chosen)))
            if self._has_required(index, providers):
                parts.append(_Part(self._items(index, chosen), providers))
        return parts

    def _items(self, index, chosen):
        """((rp_id, rc_id, amount), ...) of group ``index`` on ``chosen``.

        ``chosen``: one provider per class, in the order of amounts.
        """
        rc_ids, counts = self.columns[index]
        return tuple(zip(chosen, rc_ids, counts))

    def _has_required(self, index, providers):
        """Whether ``providers`` together have group ``index``'s traits."""
        required = self.required[index]
        if not required:
            return True
        links = self.links
        if len(providers) == 1:
            # One provider, the usual case: its own set, not a copy.
            traits = links.get(providers[0], ())
        else:
            traits = set().union(*(links.get(rp, ()) for rp in providers))
        return _meets(required, traits)

    def merge(self, parts, isolate, allow_nested):
        """One request from one part per group, or None if it is invalid.

        For two groups or more (one group goes through
        :meth:`_one_group_requests`). Returns (((rp_id, rc_id, amount),
        ...), ((suffix, providers), ...)).
        """
        if isolate:
            single = [part.providers[0] for group, part in
                      zip(self.groups, parts)
                      if group.use_same_provider]
            if len(set(single)) != len(single):
                return None
        for subtree in self.subtrees:
            providers = set()
            for index in subtree:
                providers.update(parts[index].providers)
            if not self.in_one_subtree(providers):
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
        # Several groups on one (provider, class): each fitted alone,
        # so check the sum.
        for rp, rc_id in shared:
            amount = totals[rp, rc_id]
            figures = self.known[rp][self.names[rc_id]]
            if figures['used'] + amount > figures['capacity'] or \
                    amount > self.max_unit[rp, rc_id]:
                return None
        items = tuple((rp, rc_id, amount)
                      for (rp, rc_id), amount in totals.items())
        if not allow_nested:
            used = {rp for rp, _rc, _amount in items}
            if len({self.root[rp] for rp in used}) != len(used):
                return None
        return items, tuple((group.suffix, part.providers)
                            for group, part in zip(self.groups, parts))

    def in_one_subtree(self, providers):
        """Whether one of ``providers`` is an ancestor of all the others.

        Placement's ``same_subtree``: a provider counts as its own
        ancestor, so one provider alone always passes.
        """
        if len(providers) == 1:
            return True
        parent = self.parent
        for top in providers:
            for rp in providers:
                while rp is not None and rp != top:
                    rp = parent.get(rp)
                if rp is None:
                    break
            else:
                return True
        return False

    def request(self, items, mappings):
        """Record the roots a request (a :meth:`merge` result) uses.

        Returns it as a :class:`shapes.Combination`: requests are written
        with uuids and class names by :func:`shapes.as_returned`, once
        the summaries have read the uuids.
        """
        if self.served:
            # A sharing provider may be in another tree than the anchor.
            # The trees summarised are those of the providers allocated
            # from: as in placement, a sharing provider that a
            # resourceless group maps to in another tree adds no tree
            # (only its uuid is needed, see ``mapped_elsewhere``).
            root = self.root
            roots = {root[rp] for rp, _rc, _n in items}
            self.used_roots |= roots
            for _suffix, providers in mappings:
                for rp in providers:
                    if root[rp] not in roots:
                        self.mapped_elsewhere.add(rp)
        return shapes.Combination(items, mappings)

    def requests(self, limit, isolate, allow_nested, seen):
        """Up to ``limit`` requests not in ``seen``, anchor by anchor.

        Each is a :class:`shapes.Combination` of a :meth:`merge` result,
        or a :class:`shapes.WholeRequest` when one provider takes the
        only group whole; see :func:`shapes.as_returned`.
        """
        if len(self.groups) == 1:
            return self._one_group_requests(limit, allow_nested, seen)
        found = []
        # The same request can come from two anchors only through a
        # sharing provider, which is an option of every root it serves.
        dedup = bool(self.served)
        for anchor in self.anchors():
            per_group = []
            for index in range(len(self.groups)):
                parts = self.parts(index, anchor)
                if not parts:
                    break
                per_group.append(parts)
            else:
                before = len(found)
                for parts in itertools.product(*per_group):
                    merged = self.merge(parts, isolate, allow_nested)
                    if merged is None:
                        continue
                    if dedup:
                        if merged in seen:
                            continue
                        seen.add(merged)
                    found.append(self.request(*merged))
                    if limit is not None and len(found) >= limit:
                        break
                if len(found) > before and not dedup:
                    # Without sharing providers, a request's providers
                    # are all in its anchor's tree (else see request).
                    self.used_roots.add(anchor)
                if limit is not None and len(found) >= limit:
                    break
        return found

    def _one_group_requests(self, limit, allow_nested, seen):
        """:meth:`requests` of the only group: nothing to merge.

        Each way of taking every class from one of the anchor's options
        for it is a request. One provider that takes all of it is a
        :class:`shapes.WholeRequest` (every request of a flat cloud).
        Only a request of sharing providers alone can come from several
        anchors (each serves several roots): those are kept once.
        """
        found = []
        served = self.served or {}
        group = self.groups[0]
        suffix, same = group.suffix, group.use_same_provider
        options = self.option_lists[0]
        rc_ids, counts = self.columns[0]
        classes = len(options)
        check_traits = bool(self.required[0])
        alone, root, used_roots = self.alone, self.root, self.used_roots
        # Built straight from a tuple, without a call of the generated
        # __new__: there is one per root of a flat cloud.
        new, whole_request = tuple.__new__, shapes.WholeRequest
        for anchor in self.anchors():
            if anchor in alone:
                found.append(new(whole_request, (suffix, anchor)))
                used_roots.add(anchor)
                if limit is not None and len(found) >= limit:
                    break
                continue
            chosen = [by_anchor[anchor] for by_anchor in options]
            # Whether each way's providers need their traits checked
            # (never for a single-provider group, checked in SQL);
            # decided for the anchor's every way at once where it can
            # be: each way holds the providers that are the only option
            # of a class, and none holds more than the union of the
            # options.
            way_traits = check_traits
            if way_traits:
                every = tuple({rps[0] for rps in chosen if len(rps) == 1})
                if every and self._has_required(0, every):
                    way_traits = False
                elif not self._has_required(0, tuple(
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
                if way_traits and not self._has_required(0, providers):
                    continue
                if len(providers) == 1 and first not in served:
                    found.append(new(whole_request, (suffix, first)))
                    used_roots.add(anchor)
                else:
                    roots = [root[rp] for rp in providers]
                    if not allow_nested and len(set(roots)) != len(roots):
                        continue
                    items = tuple(zip(way, rc_ids, counts))
                    mappings = ((suffix, providers),)
                    if all(rp in served for rp in providers):
                        if (items, mappings) in seen:
                            continue
                        seen.add((items, mappings))
                    found.append(shapes.Combination(items, mappings))
                    used_roots.update(roots)
                if limit is not None and len(found) >= limit:
                    break
            if limit is not None and len(found) >= limit:
                break
        return found
