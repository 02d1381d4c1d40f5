"""explain() and the search agree, on random clouds and requests.

Hypothesis draws a small cloud (trees of up to three providers, a
sharing provider now and then, inventories, traits and aggregates from
small pools, so that filters both pass and fail) and a request of one or
two groups (some with ``in_tree``), and checks, on every backend:

* explain's final count is the search's number of candidates;
* for each group searched alone, explain's count of the trees holding
  providers for the group is the number of trees the search's
  candidates for that group come from (a candidate's tree: the root of
  the providers it uses that are not sharing providers; for a
  candidate of sharing providers alone, the trees they serve).
"""

import collections
import os

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st

from resobj.db import facade
from resobj.db.sql import resource_provider as sql
from resobj import objects
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional.objects import test_allocation_candidate as base

CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')
TRAITS = ('CUSTOM_A', 'CUSTOM_B')
AGGS = ('11111111-1111-4111-8111-111111111111',
        '22222222-2222-4222-8222-222222222222')
TREE_STEP = 'trees with providers for the group'
IN_TREE = 'provider-{}'
# Few examples per backend, the same on every run (derandomized), to
# keep the suite fast; RESOBJ_FUZZ_SCALE (as for the API's fuzz test)
# multiplies them for a longer hunt, with new examples.
_SCALE = float(os.environ.get('RESOBJ_FUZZ_SCALE', '1'))

_inventory = st.dictionaries(st.sampled_from(CLASSES),
                             st.integers(min_value=1, max_value=6),
                             min_size=1, max_size=3)
_provider = st.fixed_dictionaries({
    'inventory': _inventory,
    'traits': st.sets(st.sampled_from(TRAITS)),
    'aggs': st.sets(st.sampled_from(AGGS)),
})
# A tree: its root, then children of the root.
_tree = st.lists(_provider, min_size=1, max_size=3)
_cloud = st.fixed_dictionaries({
    'trees': st.lists(_tree, min_size=1, max_size=3),
    'sharing': st.lists(st.fixed_dictionaries({
        'disk': st.integers(min_value=1, max_value=4),
        'aggs': st.sets(st.sampled_from(AGGS), min_size=1),
        'traits': st.sets(st.sampled_from(TRAITS)),
    }), max_size=1),
})
_any_of = st.sets(st.sampled_from(TRAITS), min_size=1)
_aggs_any_of = st.sets(st.sampled_from(AGGS), min_size=1)


def _sometimes(draw, strategy, otherwise):
    """A value of ``strategy`` one time in three, else ``otherwise``.

    Each filter now and then, so that many requests have candidates.
    """
    return draw(strategy) if draw(st.integers(0, 2)) == 0 else otherwise


@st.composite
def _group(draw, suffix):
    traits = _sometimes(draw, st.sets(st.sampled_from(TRAITS), max_size=1),
                        set())
    forbidden = _sometimes(draw, st.sets(st.sampled_from(TRAITS),
                                         max_size=1), set()) - traits
    return base.group(
        suffix,
        resources=draw(st.dictionaries(
            st.sampled_from(CLASSES), st.integers(min_value=1, max_value=2),
            min_size=1, max_size=2)),
        required_traits=[{t} for t in sorted(traits)],
        forbidden_traits=forbidden,
        member_of=_sometimes(draw, st.lists(_aggs_any_of, max_size=1), []),
        forbidden_aggs=_sometimes(draw, st.sets(st.sampled_from(AGGS),
                                                max_size=1), set()),
        # The n-th provider made (see _in_tree), once the cloud is.
        in_tree=_sometimes(draw, st.integers(0, 9).map(IN_TREE.format),
                           None))


def _in_tree(groups, uuids):
    """``groups`` with each IN_TREE placeholder as a provider's uuid."""
    found = []
    for group in groups:
        if group.in_tree is not None:
            n = int(group.in_tree[len(IN_TREE.format('')):])
            group = group._replace(in_tree=uuids[n % len(uuids)])
        found.append(group)
    return found


@st.composite
def _request(draw):
    groups = [draw(_group(draw(st.sampled_from(['', '1']))))]
    if draw(st.booleans()):
        groups.append(draw(_group('2')))
    root_required = _sometimes(draw, st.sets(st.sampled_from(TRAITS),
                                             max_size=1), set())
    return groups, root_required


@facade.writer
def _clear(context):
    for table in (sql.INV, sql.RP_TRAIT, sql.RP_AGG, sql.AGG):
        fx.execute(context, table.delete())
    # Children first: their parent and root are providers too. A root
    # names itself, which MySQL checks row by row: unlinked first, as
    # the DB API's destroy does.
    fx.execute(context, sql.RP.delete().where(
        sql.RP.c.parent_provider_id.is_not(None)))
    fx.execute(context, sql.RP.update().values(root_provider_id=None))
    fx.execute(context, sql.RP.delete())


class TestExplainAgreesWithSearch(base.CandidateTestCase):

    def setUp(self):
        super().setUp()
        for name in TRAITS:
            objects.Trait(self.context, name=name).create()

    def build(self, cloud):
        """({provider uuid: root uuid}, sharing provider uuids).

        Every provider of the cloud, in the order made; ``self.traits``:
        {provider uuid: its traits}.
        """
        _clear(self.context)
        roots, sharers = {}, set()
        self.traits = {}
        for t, tree in enumerate(cloud['trees']):
            root = None
            for p, spec in enumerate(tree):
                provider = self.make('t%dp%d' % (t, p), root,
                                     **spec['inventory'])
                root = root or provider
                roots[provider.uuid] = root.uuid
                self.decorate(provider, spec['traits'], spec['aggs'])
        for s, spec in enumerate(cloud['sharing']):
            provider = self.make('share%d' % s, DISK_GB=spec['disk'])
            roots[provider.uuid] = provider.uuid
            sharers.add(provider.uuid)
            self.decorate(provider, spec['traits'] | {base.SHARING},
                          spec['aggs'])
        return roots, sharers

    def decorate(self, provider, traits, aggs):
        self.traits[provider.uuid] = set(traits)
        if traits:
            provider.set_traits(sorted(traits))
        if aggs:
            provider.set_aggregates(sorted(aggs))

    def trees(self, found, roots, sharers, served):
        """The trees the candidates ``found`` come from (see the module)."""
        own = collections.defaultdict(set)
        shared_only = set()
        for request in found.allocation_requests:
            providers = {rp for rp, _rc, _n in request.resource_requests}
            anchors = {roots[rp] for rp in providers - sharers}
            if anchors:
                own[frozenset(providers & sharers)].update(anchors)
            else:
                shared_only.add(frozenset(providers))
        trees = set().union(*own.values())
        for providers in shared_only:
            trees |= set().union(*(served[rp] for rp in providers))
        return trees

    def served(self, roots, sharers, root_required):
        """{sharing provider uuid: the roots of the trees it serves}.

        Those whose root has the traits of ``root_required``.
        """
        aggs = {}
        for uuid in roots:
            aggs[uuid] = set(self.get_by_uuid(uuid).get_aggregates())
        return {sharer: {roots[uuid] for uuid in roots
                         if aggs[uuid] & aggs[sharer] and
                         root_required <= self.traits[roots[uuid]]}
                for sharer in sharers}

    def get_by_uuid(self, uuid):
        return objects.ResourceProvider.get_by_uuid(self.context, uuid)

    @settings(max_examples=max(1, int(20 * _SCALE)), deadline=None,
              derandomize=_SCALE == 1,
              # One method, one instance per backend (the scenarios):
              # each has a database of its own.
              suppress_health_check=[HealthCheck.too_slow,
                                     HealthCheck.function_scoped_fixture,
                                     HealthCheck.differing_executors])
    @given(cloud=_cloud, request=_request())
    def test_counts_agree(self, cloud, request):
        groups, root_required = request
        roots, sharers = self.build(cloud)
        groups = _in_tree(groups, list(roots))
        policy = 'none' if len(groups) > 1 else None
        found = self.get(*groups, group_policy=policy,
                         root_required=root_required)
        explained = base.ac_obj.AllocationCandidates.explain(
            self.context, groups, group_policy=policy,
            root_required=root_required)
        self.assertEqual(len(found.allocation_requests),
                         explained.candidates)
        served = (self.served(roots, sharers, set(root_required))
                  if sharers else {})
        for group in groups:
            alone = self.get(group, root_required=root_required)
            explained = base.ac_obj.AllocationCandidates.explain(
                self.context, [group], root_required=root_required)
            steps = {s['step']: s['passing']
                     for s in explained.groups[0]['steps']}
            trees = self.trees(alone, roots, sharers, served)
            self.assertEqual(len(alone.allocation_requests),
                             explained.candidates)
            self.assertEqual(len(trees), steps[TREE_STEP],
                             (group.suffix, sorted(trees)))
