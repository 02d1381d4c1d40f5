"""same_subtree, resourceless groups and explain(), on every backend.

One compute tree (root, two NUMA cells, a VF under each, an agent with a
bandwidth device) and a flat node; expected values derived by hand from
that data, as in the gabbit allocation-candidate-subtree.yaml.
"""

from resobj import exception
from resobj import objects
from resobj.objects import allocation_candidate as ac_obj
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.objects import test_allocation_candidate as base

NUMA, PHYS_A, PHYS_B = 'HW_NUMA_ROOT', 'CUSTOM_PHYSNET_A', 'CUSTOM_PHYSNET_B'
AGENT = 'CUSTOM_AGENT_SRIOV'
NO_PROVIDER = '99999999-9999-9999-9999-999999999999'
group = base.group
# The request of a port on PHYSNET_A pinned with its VCPU to one NUMA
# cell: _CPU and _VF under the cell that _NUMA names.
NUMA_VF_SUBTREE = [['_NUMA', '_CPU', '_VF']]


def numa_vf_groups():
    return [group('_CPU', resources={'VCPU': 1}),
            group('_VF', resources={'SRIOV_NET_VF': 1},
                  required_traits=[{PHYS_A}]),
            group('_NUMA', required_traits=[{NUMA}])]


class SubtreeTestCase(base.CandidateTestCase):

    def setUp(self):
        super().setUp()
        for trait in (PHYS_A, PHYS_B, AGENT):
            objects.Trait(self.context, name=trait).create()
        self.cn = self.make('cn', DISK_GB=100)
        self.numa0 = self.make('numa0', self.cn, VCPU=4)
        self.numa1 = self.make('numa1', self.cn, VCPU=4)
        self.pf0 = self.make('pf0', self.numa0, SRIOV_NET_VF=4)
        self.pf1 = self.make('pf1', self.numa1, SRIOV_NET_VF=2)
        self.agent = self.make('agent', self.cn)
        self.bw = self.make('bw', self.agent, NET_BW_EGR_KILOBIT_PER_SEC=1000)
        self.flat = self.make('flat', VCPU=8, SRIOV_NET_VF=8, DISK_GB=10)
        for provider, traits in ((self.numa0, [NUMA]), (self.numa1, [NUMA]),
                                 (self.pf0, [PHYS_A]), (self.pf1, [PHYS_B]),
                                 (self.agent, [AGENT]), (self.bw, [PHYS_A]),
                                 (self.flat, [PHYS_A])):
            provider.set_traits(traits)

    def mappings(self, *groups, **kwargs):
        """Each request's mappings, {suffix: provider name}."""
        return [{suffix: self.names[rps[0]]
                 for suffix, rps in request.mappings.items()}
                for request in self.get(*groups, **kwargs)
                .allocation_requests]


class TestSameSubtree(SubtreeTestCase):

    def numa_vf(self, **kwargs):
        return self.mappings(
            *numa_vf_groups(), same_subtree=NUMA_VF_SUBTREE, **kwargs)

    def test_cpu_and_vf_under_one_cell(self):
        # pf0 is the only PHYSNET_A VF of cn: numa0 for _NUMA and _CPU;
        # the flat node has no HW_NUMA_ROOT provider.
        self.assertEqual(
            [{'_CPU': 'numa0', '_VF': 'pf0', '_NUMA': 'numa0'}],
            self.numa_vf(group_policy='none'))

    def test_the_trees_are_read_once(self):
        # Names and classes, the resourceless group's providers, the
        # candidate rows, the trees' providers (their parents for the
        # combination, and the summaries' rows), the inventories the
        # rows did not carry; and the trees' traits where the providers'
        # statement does not carry them. Not a second read of the trees.
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            self.assertEqual(1, len(self.numa_vf(group_policy='none')))
        queries = base._queries(counter)
        expected = {'postgresql': 5}.get(self.engine.dialect.name, 6)
        self.assertEqual(expected, len(queries), queries)

    def test_summaries_carry_every_trait_of_each_provider(self):
        # Providers of a tree with several traits each: PostgreSQL reads
        # the trees' traits one row per trait, which the summaries join.
        self.numa0.set_traits([NUMA, PHYS_B, AGENT])
        self.cn.set_traits([PHYS_A, AGENT])
        found = self.get(
            *numa_vf_groups(), same_subtree=NUMA_VF_SUBTREE,
            group_policy='none')
        self.assertEqual(1, len(found.allocation_requests))
        traits = {self.names[uuid]: summary.traits
                  for uuid, summary in found.provider_summaries.items()}
        # Standard traits by name, custom ones after them in the order
        # they were made (PHYS_A, PHYS_B, AGENT), as trait lists go.
        self.assertEqual({
            'cn': [PHYS_A, AGENT],
            'numa0': [NUMA, PHYS_B, AGENT], 'numa1': [NUMA],
            'pf0': [PHYS_A], 'pf1': [PHYS_B], 'agent': [AGENT],
            'bw': [PHYS_A]}, traits)

    def test_isolate_counts_the_resourceless_group(self):
        self.assertEqual([], self.numa_vf(group_policy='isolate'))

    def test_resourceless_group_allocates_nothing(self):
        found = self.get(
            group(resources={'VCPU': 1}),
            group('_AG', required_traits=[{AGENT}]),
            group('_BW', resources={'NET_BW_EGR_KILOBIT_PER_SEC': 100}),
            same_subtree=[['_AG', '_BW']], group_policy='none')
        self.assertEqual(
            [{'': 'numa0', '_AG': 'agent', '_BW': 'bw'},
             {'': 'numa1', '_AG': 'agent', '_BW': 'bw'}],
            [{s: self.names[rps[0]] for s, rps in r.mappings.items()}
             for r in found.allocation_requests])
        for request in found.allocation_requests:
            self.assertNotIn(self.agent.uuid, request.allocations)
        # The whole tree is summarised, the agent too.
        self.assertIn(self.agent.uuid, found.provider_summaries)

    def test_resourceless_group_needs_a_required_trait_or_member_of(self):
        # As in placement: forbidden traits, forbidden aggregates or
        # in_tree alone find no provider for a resourceless group.
        base_groups = (group(resources={'VCPU': 1}),
                       group('_BW', resources={
                           'NET_BW_EGR_KILOBIT_PER_SEC': 100}))
        for bare in (group('_AG', forbidden_traits={NUMA}),
                     group('_AG', forbidden_aggs={base.AGG1}),
                     group('_AG', in_tree=self.cn.uuid),
                     group('_AG', in_tree=self.cn.uuid,
                           forbidden_traits={NUMA})):
            self.assertEqual([], self.mappings(
                *base_groups, bare, same_subtree=[['_AG', '_BW']],
                group_policy='none'), bare)
        # With a required trait, or an aggregate, it has providers.
        self.agent.set_aggregates([base.AGG1])
        for bare in (group('_AG', required_traits=[{AGENT}],
                           forbidden_traits={NUMA}),
                     group('_AG', member_of=[{base.AGG1}],
                           in_tree=self.cn.uuid)):
            self.assertEqual(
                [{'': 'numa0', '_AG': 'agent', '_BW': 'bw'},
                 {'': 'numa1', '_AG': 'agent', '_BW': 'bw'}],
                self.mappings(*base_groups, bare,
                              same_subtree=[['_AG', '_BW']],
                              group_policy='none'), bare)

    def test_a_sharing_provider_serves_a_resourceless_group(self):
        # As in placement: a sharing provider that passes the group's
        # filters is an option of every tree it serves, even without
        # inventory of its own; only the trees allocated from are
        # summarised (placement 16.0.0 summarised neither such a pool
        # nor the tree of one under another root).
        pool = self.make('pool')
        pool.set_traits(['MISC_SHARES_VIA_AGGREGATE', AGENT])
        pool.set_aggregates([base.AGG1])
        self.flat.set_aggregates([base.AGG1])
        groups = (group(resources={'DISK_GB': 10}),
                  group('_AG', required_traits=[{AGENT}]))
        expected = [{'': 'cn', '_AG': 'agent'}, {'': 'flat', '_AG': 'pool'}]
        found = self.get(*groups, same_subtree=[['_AG']],
                         group_policy='none')
        self.assertEqual(expected, [
            {s: self.names[rps[0]] for s, rps in r.mappings.items()}
            for r in found.allocation_requests])
        self.assertEqual(['agent', 'bw', 'cn', 'flat', 'numa0', 'numa1',
                          'pf0', 'pf1'], self.summary_names(found))
        for limit in (1, 2):
            self.assertEqual(expected[:limit], self.mappings(
                *groups, same_subtree=[['_AG']], group_policy='none',
                limit=limit))

    def test_a_sharing_provider_passes_root_required_for_its_trees(self):
        # Searched alone, before a later group's names are looked up, a
        # resourceless group has candidates under root_required when one
        # of its providers is a sharing provider serving a tree whose
        # root passes, whatever its own root (placement 16.0.0: the
        # unknown class's 400). Serving no such tree: no candidates.
        objects.Trait(self.context, name='CUSTOM_POOL').create()
        self.flat.set_aggregates([base.AGG1])
        pool = self.make('pool', self.cn)
        pool.set_traits(['MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_POOL'])

        def unknown(limit=None):
            try:
                found = self.get(
                    group('_C', resources={'VCPU': 1}),
                    group('_P', required_traits=[{'CUSTOM_POOL'}]),
                    group('_Z', resources={'CUSTOM_NOPE': 1}),
                    same_subtree=[['_C', '_P']], group_policy='none',
                    root_required=[PHYS_A], limit=limit)
            except exception.ResourceClassNotFound as exc:
                return exc.kwargs['name']
            return len(found.allocation_requests)

        # The pool serves its own tree only, whose root (cn) fails.
        pool.set_aggregates([base.AGG2])
        for limit in (None, 1):
            self.assertEqual(0, unknown(limit))
        # Serving flat's tree too, whose root has PHYSNET_A.
        pool.set_aggregates([base.AGG1])
        for limit in (None, 1):
            self.assertEqual('CUSTOM_NOPE', unknown(limit))

    def test_in_tree_limits_no_resourceless_group(self):
        # Placement 16.0.0 (black-box): a resourceless group's in_tree
        # must name a provider (the API answers no candidates for an
        # unknown one), but the group's providers come from every tree.
        # The flat node's tree has no AGENT provider.
        def agent_in(tree, limit=None):
            return self.mappings(
                group(resources={'DISK_GB': 10}),
                group('_AG', required_traits=[{AGENT}], in_tree=tree),
                same_subtree=[['_AG']], group_policy='none', limit=limit)

        for limit in (None, 1):
            self.assertEqual([{'': 'cn', '_AG': 'agent'}],
                             agent_in(self.flat.uuid, limit))
            self.assertRaises(exception.ResourceProviderNotFound,
                              agent_in, NO_PROVIDER, limit)

    def test_overlapping_sets(self):
        # _N above _V, and _C above _V (or _V above _C): _C is pf0's cell.
        self.assertEqual(
            [{'_V': 'pf0', '_C': 'numa0', '_N': 'numa0'}],
            self.mappings(
                group('_V', resources={'SRIOV_NET_VF': 1},
                      required_traits=[{PHYS_A}]),
                group('_C', resources={'VCPU': 1}),
                group('_N', required_traits=[{NUMA}]),
                same_subtree=[['_N', '_V'], ['_V', '_C']],
                group_policy='none'))

    def test_no_cell_above_both_vfs(self):
        self.assertEqual([], self.mappings(
            group('_A', resources={'SRIOV_NET_VF': 1},
                  required_traits=[{PHYS_A}]),
            group('_B', resources={'SRIOV_NET_VF': 1},
                  required_traits=[{PHYS_B}]),
            group('_N', required_traits=[{NUMA}]),
            same_subtree=[['_N', '_A', '_B']], group_policy='none'))

    def test_limit_keeps_the_first_requests(self):
        groups = (group('_V', resources={'SRIOV_NET_VF': 1}),
                  group('_C', resources={'VCPU': 1}))
        everything = self.mappings(*groups, same_subtree=[['_C', '_V']],
                                   group_policy='none')
        # cn: numa0 above pf0, numa1 above pf1; flat: itself.
        self.assertEqual(
            [{'_V': 'pf0', '_C': 'numa0'}, {'_V': 'pf1', '_C': 'numa1'},
             {'_V': 'flat', '_C': 'flat'}],
            everything)
        for limit in (1, 2, 3):
            self.assertEqual(everything[:limit], self.mappings(
                *groups, same_subtree=[['_C', '_V']], group_policy='none',
                limit=limit))


class TestWindows(base.CandidateTestCase):

    def test_a_resourceless_group_served_past_the_first_window(self):
        # Roots with room but without the resourceless group's trait
        # fill the first window of a limited search; the one tree that
        # has it comes after them, and is searched.
        for n in range(3):
            self.make('plain%d' % n, VCPU=4)
        self.make('avx', VCPU=4).set_traits([base.AVX2])
        for limit in (1, 3, None):
            found = self.get(group(resources={'VCPU': 1}),
                             group('_T', required_traits=[{base.AVX2}]),
                             same_subtree=[['_T']], group_policy='none',
                             limit=limit)
            self.assertEqual(
                [{'': 'avx', '_T': 'avx'}],
                [{s: self.names[rps[0]] for s, rps in r.mappings.items()}
                 for r in found.allocation_requests], limit)


class TestExplain(SubtreeTestCase):

    def explain(self, *groups, **kwargs):
        return ac_obj.AllocationCandidates.explain(self.context, groups,
                                                   **kwargs)

    def steps(self, found, suffix):
        for explained in found.groups:
            if explained['suffix'] == suffix:
                return {s['step']: s['passing'] for s in explained['steps']}
        raise AssertionError('no group %r' % suffix)

    def test_counts_per_step_and_the_first_empty(self):
        found = self.explain(group('_V', resources={'SRIOV_NET_VF': 5},
                                   required_traits=[{PHYS_A}]))
        self.assertEqual(
            # 8 providers; PHYSNET_A: pf0, bw, flat; 5 VFs: flat only.
            {'providers': 8, 'required CUSTOM_PHYSNET_A': 3,
             'capacity for SRIOV_NET_VF:5': 1,
             'trees with providers for the group': 1},
            self.steps(found, '_V'))
        self.assertIsNone(found.first_empty)
        self.assertEqual(1, found.candidates)

    def test_in_tree_is_no_step_of_a_resourceless_group(self):
        # It limits nothing (see TestSameSubtree).
        found = self.explain(
            group(resources={'DISK_GB': 10}),
            group('_AG', required_traits=[{AGENT}], in_tree=self.flat.uuid),
            same_subtree=[['_AG']], group_policy='none')
        self.assertNotIn('in_tree %s' % self.flat.uuid,
                         self.steps(found, '_AG'))
        self.assertIsNone(found.first_empty)
        self.assertEqual(1, found.candidates)

    def test_the_closest_providers_are_named(self):
        found = self.explain(group('_V', resources={'SRIOV_NET_VF': 9},
                                   required_traits=[{PHYS_A}]))
        self.assertEqual('_V: capacity for SRIOV_NET_VF:9', found.first_empty)
        self.assertEqual(0, found.candidates)
        closest = found.groups[0]['closest']
        # Both have the trait and too few VFs: flat (8 free) and pf0 (4),
        # by id; bw has no VF inventory at all, so comes after them.
        self.assertEqual(['pf0', 'flat', 'bw'],
                         [rp['name'] for rp in closest])
        self.assertEqual(['capacity for SRIOV_NET_VF:9'], closest[0]['failed'])
        self.assertEqual({'SRIOV_NET_VF': 4}, closest[0]['free'])
        self.assertEqual({}, closest[2]['free'])
        text = '\n'.join(found.lines())
        self.assertIn('first empty step: _V: capacity for SRIOV_NET_VF:9',
                      text)
        self.assertIn('closest: pf0', text)

    def test_spread_group_traits_on_providers_used(self):
        # The root has DISK_GB; no provider with DISK_GB or VCPU room has
        # PHYSNET_B (pf1 has it, with VFs only).
        found = self.explain(group(resources={'VCPU': 1, 'DISK_GB': 10},
                                   required_traits=[{PHYS_B}]))
        steps = self.steps(found, '')
        self.assertEqual(
            0, steps['required CUSTOM_PHYSNET_B (on one of the providers '
                     'used)'])
        self.assertEqual(2, steps['capacity for DISK_GB:10'])
        self.assertEqual(3, steps['capacity for VCPU:1'])
        self.assertEqual(0, found.candidates)

    def test_same_subtree_and_isolate_are_told_apart(self):
        found = self.explain(
            *numa_vf_groups(), same_subtree=NUMA_VF_SUBTREE,
            group_policy='isolate')
        self.assertEqual(
            [{'step': 'trees with providers for every group', 'passing': 1},
             # cn: _CPU on either cell, _VF pf0, _NUMA either cell (but
             # not _CPU's when isolated: 2); flat: no NUMA provider.
             {'step': 'candidates without same_subtree and group_policy',
              'passing': 4},
             {'step': 'candidates with group_policy=isolate',
              'passing': 2},
             {'step': 'candidates', 'passing': 0}],
            found.steps)
        self.assertEqual('candidates', found.first_empty)

    def test_a_resourceless_group_without_a_positive_filter(self):
        found = self.explain(
            group(resources={'VCPU': 1}),
            group('_AG', forbidden_traits={NUMA}),
            same_subtree=[['_AG']], group_policy='none')
        self.assertEqual(
            '_AG: required trait or member_of, which a resourceless group '
            'needs', found.first_empty)
        self.assertEqual(0, found.candidates)

    def test_unknown_names_are_steps(self):
        found = self.explain(group(resources={'CUSTOM_NOPE': 1}))
        self.assertEqual('known resource class CUSTOM_NOPE',
                         found.first_empty)
        found = self.explain(group(resources={'VCPU': 1},
                                   required_traits=[{'CUSTOM_NOPE'}]))
        self.assertEqual('known trait CUSTOM_NOPE', found.first_empty)

    def test_trees_served_by_a_sharing_provider_count(self):
        pool = self.make('pool', DISK_GB=1000)
        pool.set_traits(['MISC_SHARES_VIA_AGGREGATE'])
        pool.set_aggregates([base.AGG1])
        self.flat.set_aggregates([base.AGG1])
        found = self.explain(group('_D', resources={'DISK_GB': 500}))
        steps = self.steps(found, '_D')
        # Only the pool has room; it serves its own tree and flat's.
        self.assertEqual(1, steps['capacity for DISK_GB:500'])
        self.assertEqual(2, steps['trees with providers for the group'])
        self.assertEqual(1, found.groups[0]['sharing'])
        self.assertEqual((None, 1), (found.first_empty, found.candidates))
