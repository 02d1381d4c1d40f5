"""AllocationCandidates: where a request for resources could be placed.

Plain classes, not versioned objects: a candidate list is computed for
one caller and never crosses a process boundary, so it carries no
version and no change tracking. The search itself is the package
``resobj.search`` (set-based SQL run by
``resobj.db.api.allocation_candidate``); a request's groups are the
search's (``group``, checked when made), this module has
``resobj.search.request`` check the request, hands it over and wraps
the answer.

What is supported (every request of placement 1.39; a malformed one
raises Invalid):

* the unsuffixed group, served by one provider, by several providers of
  one tree, and/or by sharing providers (``MISC_SHARES_VIA_AGGREGATE``)
  in an aggregate with a provider of that tree;
* suffixed (granular) groups, each served by one provider of the same
  tree or a sharing provider serving it, with ``group_policy`` ``none``
  or ``isolate``;
* per group: required traits (any-of sets), forbidden traits,
  ``member_of`` (any-of sets) and forbidden aggregates (the provider or
  its root for the unsuffixed group, the provider itself for a suffixed
  one, as in placement), ``in_tree``; and ``limit``;
* request-wide, traits the root of each candidate's (non-sharing) tree
  must have or must not have (placement's ``root_required``), whichever
  providers of the tree serve the request; sharing providers serve
  such trees whatever their own root.
* suffixed groups without resources (placement 1.36's resourceless
  groups: traits, aggregates and/or ``in_tree`` only), each named in a
  ``same_subtree`` set; and ``same_subtree`` itself: in each set of
  group suffixes, one provider of those the groups use is an ancestor
  of (or is) all the others.
"""

from resobj.db.api import allocation_candidate as ac_db
from resobj.db.api import candidate_explain as explain_db
from resobj.search import request as search_request

GROUP_POLICIES = search_request.GROUP_POLICIES


# One request group: a checked, immutable Group of the search, built by
# search_request.group (the API's parser builds them directly).
group = search_request.group


def _checked(groups, group_policy, root_required, root_forbidden,
             same_subtree):
    """(groups, root_required, root_forbidden, same_subtree), checked.

    Invalid for a request the search cannot take (see get_by_requests);
    each group was checked when it was made (see :data:`group`).
    """
    groups = list(groups)
    root_required, root_forbidden = search_request.checked_arguments(
        [found.suffix for found in groups], group_policy, root_required,
        root_forbidden)
    return (groups, root_required, root_forbidden,
            search_request.checked_subtrees(groups, same_subtree))


class AllocationRequest:
    """One way to place the whole request.

    ``allocations``: {rp_uuid: {rc_name: amount}}, providers by uuid and
    each one's classes by name; the amounts of several groups on one
    provider and class are summed. ``mappings``: {group suffix:
    [rp_uuid]} (the providers each group used). The requests that one
    provider takes whole share one {rc_name: amount} dict: read-only.
    """

    __slots__ = ('allocations', 'mappings')

    def __init__(self, allocations, mappings):
        self.allocations = allocations
        self.mappings = mappings

    @property
    def resource_requests(self):
        """[(rp_uuid, rc_name, amount)], by provider uuid then class."""
        return [(rp_uuid, rc, amount)
                for rp_uuid, resources in self.allocations.items()
                for rc, amount in resources.items()]

    def __repr__(self):
        return '<AllocationRequest %r %r>' % (self.allocations,
                                              self.mappings)


class ProviderSummary:
    """A provider that appears in the candidates, or shares their tree.

    ``resources``: {rc_name: {'capacity': capacity, 'used': used}} (the
    shape of placement's provider_summaries) for every class the
    provider has inventory of (placement 1.27+; older microversions
    show the requested classes only), where capacity is
    int((total - reserved) * allocation_ratio). ``traits``: names, the
    standard ones by name, then the custom ones in creation order.
    """

    __slots__ = ('uuid', 'resources', 'traits', 'parent_provider_uuid',
                 'root_provider_uuid')

    def __init__(self, uuid, resources, traits, parent_provider_uuid,
                 root_provider_uuid):
        self.uuid = uuid
        self.resources = resources
        self.traits = traits
        self.parent_provider_uuid = parent_provider_uuid
        self.root_provider_uuid = root_provider_uuid

    def __repr__(self):
        return '<ProviderSummary %s %r>' % (self.uuid, self.resources)


class AllocationCandidates:
    """The answer to an allocation candidate request.

    Kept as the search returns it: ``request_pairs``, [(allocations,
    mappings)] (see :class:`AllocationRequest`), and ``summary_dicts``,
    {uuid: {'resources', 'traits', 'parent_provider_uuid',
    'root_provider_uuid'}} (see :class:`ProviderSummary`), both
    read-only. ``allocation_requests`` and ``provider_summaries``, the
    objects, are built from them on first use: the API writes the plain
    forms out as they are, and building a thousand objects of each kind
    only to read them back cost more than writing the answer.
    """

    __slots__ = ('request_pairs', 'summary_dicts', '_requests',
                 '_summaries')

    def __init__(self, request_pairs, summary_dicts):
        self.request_pairs = request_pairs
        self.summary_dicts = summary_dicts
        self._requests = self._summaries = None

    @property
    def allocation_requests(self):
        """[AllocationRequest], in the search's order."""
        if self._requests is None:
            self._requests = [AllocationRequest(allocations, mappings)
                              for allocations, mappings
                              in self.request_pairs]
        return self._requests

    @property
    def provider_summaries(self):
        """{provider uuid: ProviderSummary}."""
        if self._summaries is None:
            self._summaries = {
                uuid: ProviderSummary(
                    uuid, summary['resources'], summary['traits'],
                    summary['parent_provider_uuid'],
                    summary['root_provider_uuid'])
                for uuid, summary in self.summary_dicts.items()}
        return self._summaries

    @classmethod
    def get_by_requests(cls, context, groups, limit=None, group_policy=None,
                        allow_nested=True, root_required=None,
                        root_forbidden=None, same_subtree=None):
        """Candidates that satisfy every group of ``groups`` (see group).

        ``limit``: at most this many requests (the first ones in root
        provider id order; only those are built and summarised).
        ``group_policy``: 'isolate' puts no two single-provider groups on
        one provider; None or 'none' allows it. ``allow_nested=False``
        drops requests that use two providers of one tree, and
        summarises only the providers the requests use (placement
        before 1.29). ``root_required`` / ``root_forbidden``: trait
        names the root provider of each request's (non-sharing) tree
        must have / must not have (placement's ``root_required``).
        ``same_subtree``: a list of lists of group suffixes; in each, one
        provider of those the groups use is an ancestor of (or is) all
        the others (placement 1.36). A suffixed group without resources
        (a resourceless group: traits, aggregates and/or ``in_tree``
        only) allocates nothing and must be named in a same_subtree.

        Raises ResourceClassNotFound or TraitNotFound for unknown names
        (the first in placement's order: root_required's traits, then
        the groups in the order given, see
        :func:`resobj.search.request.lookup_order`; a ``member_of`` set
        no provider is in, or an earlier group without candidates of
        its own, gives no candidates instead),
        ResourceProviderNotFound for an unknown ``in_tree`` and Invalid
        for a malformed request. (UnsupportedCandidateRequest, kept for
        callers that catch it, is no longer raised: every request of
        placement 1.39 is searched.)
        """
        specs, root_required, root_forbidden, same_subtree = _checked(
            groups, group_policy, root_required, root_forbidden,
            same_subtree)
        search_request.check_limit(limit)
        found = ac_db.get_candidates(context, specs, limit=limit,
                                     group_policy=group_policy,
                                     allow_nested=allow_nested,
                                     root_required=root_required,
                                     root_forbidden=root_forbidden,
                                     same_subtree=same_subtree)
        # The DB API's lists and dicts are used as they are: copying
        # thousands of small containers costs more than the search.
        return cls(found['allocation_requests'], found['provider_summaries'])

    @classmethod
    def explain(cls, context, groups, group_policy=None, root_required=None,
                root_forbidden=None, same_subtree=None, closest=3):
        """Where the providers drop out for this request: an Explanation.

        The arguments are those of :meth:`get_by_requests` (a limit
        does not change why candidates are missing); ``closest``: how
        many providers to name for a group no provider passes. Unknown
        class, trait and in_tree names are reported as steps nothing
        passes, not raised. Raises Invalid as get_by_requests does.
        """
        specs, root_required, root_forbidden, same_subtree = _checked(
            groups, group_policy, root_required, root_forbidden,
            same_subtree)
        return Explanation(explain_db.explain(
            context, specs, root_required=root_required,
            root_forbidden=root_forbidden, same_subtree=same_subtree,
            group_policy=group_policy, closest=closest))


class Explanation:
    """Why a request has no (or few) candidates, as counts per step.

    ``groups``: per request group, {'suffix', 'steps': [{'step',
    'passing'}] (cumulative for a group one provider takes whole; a
    spread group's classes are each counted after its filters),
    'trees' (roots whose tree, or the sharing providers serving it,
    holds providers for the whole group),
    'sharing' (sharing providers passing the group's filters),
    'first_empty', 'closest': [{'name', 'uuid', 'failed': [steps],
    'free': {class: capacity - used}}] (only for a group no provider
    passes)}. ``steps``: the request's own steps, from the trees that
    hold every group to the candidates. ``first_empty``: the first step
    nothing passes, or None. ``candidates``: how many the search finds.
    """

    __slots__ = ('groups', 'steps', 'first_empty', 'candidates')

    def __init__(self, found):
        self.groups = found['groups']
        self.steps = found['steps']
        self.first_empty = found['first_empty']
        self.candidates = found['candidates']

    def as_dict(self):
        return {'groups': self.groups, 'steps': self.steps,
                'first_empty': self.first_empty,
                'candidates': self.candidates}

    def lines(self):
        """The explanation as text lines, for a terminal."""
        lines = []
        for group in self.groups:
            lines.append('group %s:' % (group['suffix'] or '(unsuffixed)'))
            lines += ['  %8d  %s' % (step['passing'], step['step'])
                      for step in group['steps']]
            if group['sharing']:
                lines.append('  %8d  sharing providers passing the filters'
                             % group['sharing'])
            for rp in group['closest']:
                free = ', '.join('%s %d free' % item
                                 for item in sorted(rp['free'].items()))
                lines.append('  closest: %s (%s) fails %s%s' % (
                    rp['name'], rp['uuid'], '; '.join(rp['failed']),
                    '; ' + free if free else ''))
        lines.append('request:')
        lines += ['  %8d  %s' % (step['passing'], step['step'])
                  for step in self.steps]
        lines.append('first empty step: %s' % (self.first_empty or 'none'))
        return lines
