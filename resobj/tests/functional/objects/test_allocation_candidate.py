"""AllocationCandidates.get_by_requests on every backend."""

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import allocation_candidate as ac_db
from resobj.db import backends
from resobj.db.sql import search_strategy
from resobj import exception
from resobj import objects
from resobj.objects import allocation_candidate as ac_obj
from resobj.search import request as search_request
from resobj.search.statements import rows as row_statements
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional import provider_fixtures as pf

objects.register_all()

AGG1 = '11111111-1111-1111-1111-111111111111'
AGG2 = '22222222-2222-2222-2222-222222222222'
SHARING = 'MISC_SHARES_VIA_AGGREGATE'
AVX2, SSE, SSD = 'HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE', 'STORAGE_DISK_SSD'
DISABLED = 'COMPUTE_STATUS_DISABLED'
MULTI_ATTACH = 'COMPUTE_VOLUME_MULTI_ATTACH'


class CandidateTestCase(pf.ProviderTestCase):

    def setUp(self):
        super().setUp()
        self.names = {}

    def make(self, name, parent=None, **inventory):
        provider = super().make(name, parent, **inventory)
        self.names[provider.uuid] = name
        return provider

    def add(self, provider, resource_class, total, **values):
        provider.add_inventory(objects.Inventory(
            resource_class=resource_class, total=total,
            **dict({'max_unit': total}, **values)))

    def get(self, *groups, **kwargs):
        return ac_obj.AllocationCandidates.get_by_requests(
            self.context, groups, **kwargs)

    def requests(self, *groups, **kwargs):
        """Each request as a sorted list of (provider name, class, amount)."""
        return [sorted((self.names[rp], rc, amount)
                       for rp, rc, amount in request.resource_requests)
                for request in self.get(*groups, **kwargs)
                .allocation_requests]

    def summary_names(self, found):
        return sorted(self.names[uuid] for uuid in found.provider_summaries)


def figures(resources):
    """A summary's {class: {capacity, used}} as {class: (capacity, used)}."""
    return {rc: (f['capacity'], f['used']) for rc, f in resources.items()}


def group(suffix='', **kwargs):
    return ac_obj.group(suffix, **kwargs)


class TestSingleProvider(CandidateTestCase):

    def test_capacity_counts_reserved_ratio_and_usage(self):
        cn = self.make('cn')
        self.add(cn, 'VCPU', 8, reserved=2, allocation_ratio=2.0,
                 max_unit=16)
        # (8 - 2) * 2.0 = 12.
        self.assertEqual([[('cn', 'VCPU', 12)]],
                         self.requests(group(resources={'VCPU': 12})))
        self.assertEqual([], self.requests(group(resources={'VCPU': 13})))
        pf.allocate(self.context, cn.id, 'VCPU', 3, 4)
        self.assertEqual([[('cn', 'VCPU', 5)]],
                         self.requests(group(resources={'VCPU': 5})))
        self.assertEqual([], self.requests(group(resources={'VCPU': 6})))
        found = self.get(group(resources={'VCPU': 1}))
        self.assertEqual({'capacity': 12, 'used': 7},
                         found.provider_summaries[cn.uuid].resources['VCPU'])

    def test_min_max_and_step(self):
        cn = self.make('cn')
        self.add(cn, 'DISK_GB', 100, min_unit=10, max_unit=50, step_size=5)

        def fits(amount):
            return self.requests(group(resources={'DISK_GB': amount})) == [
                [('cn', 'DISK_GB', amount)]]

        self.assertTrue(fits(10))
        self.assertTrue(fits(50))
        self.assertTrue(fits(35))
        self.assertFalse(fits(5))
        self.assertFalse(fits(55))
        self.assertFalse(fits(12))

    def test_every_class_on_one_provider_in_id_order(self):
        first = self.make('first', VCPU=8, MEMORY_MB=4096, DISK_GB=100)
        self.make('no-disk', VCPU=8, MEMORY_MB=4096)
        self.make('small', VCPU=1, MEMORY_MB=4096, DISK_GB=100)
        last = self.make('last', VCPU=8, MEMORY_MB=4096, DISK_GB=100)
        found = self.get(group(resources={'VCPU': 2, 'MEMORY_MB': 1024}))
        self.assertEqual(
            ['first', 'no-disk', 'last'],
            [self.names[r.mappings[''][0]]
             for r in found.allocation_requests])
        found = self.get(group(resources={'VCPU': 2, 'MEMORY_MB': 1024,
                                          'DISK_GB': 10}))
        self.assertEqual(
            [[(first.uuid, 'DISK_GB', 10), (first.uuid, 'MEMORY_MB', 1024),
              (first.uuid, 'VCPU', 2)],
             [(last.uuid, 'DISK_GB', 10), (last.uuid, 'MEMORY_MB', 1024),
              (last.uuid, 'VCPU', 2)]],
            [sorted(r.resource_requests, key=lambda x: x[1])
             for r in found.allocation_requests])
        self.assertEqual({'': [first.uuid]},
                         found.allocation_requests[0].mappings)
        # The same, by provider, classes in name order.
        allocations = found.allocation_requests[0].allocations
        self.assertEqual(
            {first.uuid: {'DISK_GB': 10, 'MEMORY_MB': 1024, 'VCPU': 2}},
            allocations)
        self.assertEqual(['DISK_GB', 'MEMORY_MB', 'VCPU'],
                         list(allocations[first.uuid]))
        # Summaries: the returned providers only, with every class they
        # have inventory of, requested or not.
        self.assertEqual(['first', 'last'], self.summary_names(found))
        summary = found.provider_summaries[first.uuid]
        self.assertEqual({'VCPU': (8, 0), 'MEMORY_MB': (4096, 0),
                          'DISK_GB': (100, 0)}, figures(summary.resources))
        self.assertEqual(first.uuid, summary.root_provider_uuid)
        self.assertIsNone(summary.parent_provider_uuid)
        self.assertEqual([], summary.traits)

    def test_required_and_forbidden_traits(self):
        avx = self.make('avx', VCPU=4)
        sse = self.make('sse', VCPU=4)
        both = self.make('both', VCPU=4)
        self.make('none', VCPU=4)
        avx.set_traits([AVX2])
        sse.set_traits([SSE])
        both.set_traits([AVX2, SSE])

        def names(**kwargs):
            return [r[0][0] for r in self.requests(
                group(resources={'VCPU': 1}, **kwargs))]

        self.assertEqual(['avx', 'both'], names(required_traits=[{AVX2}]))
        self.assertEqual(['avx', 'sse', 'both'],
                         names(required_traits=[{AVX2, SSE}]))
        self.assertEqual(['both'], names(required_traits=[{AVX2}, {SSE}]))
        self.assertEqual(['avx', 'none'], names(forbidden_traits={SSE}))
        self.assertEqual(['avx'], names(required_traits=[{AVX2}],
                                        forbidden_traits={SSE}))
        found = self.get(group(resources={'VCPU': 1},
                               required_traits=[{SSE}]))
        self.assertEqual([AVX2, SSE],
                         found.provider_summaries[both.uuid].traits)

    def test_member_of_and_forbidden_aggregates(self):
        in1 = self.make('in1', VCPU=4)
        in2 = self.make('in2', VCPU=4)
        self.make('nowhere', VCPU=4)
        in1.set_aggregates([AGG1])
        in2.set_aggregates([AGG2])

        def names(**kwargs):
            return [r[0][0] for r in self.requests(
                group(resources={'VCPU': 1}, **kwargs))]

        self.assertEqual(['in1'], names(member_of=[{AGG1}]))
        self.assertEqual(['in1', 'in2'], names(member_of=[{AGG1, AGG2}]))
        self.assertEqual([], names(member_of=[{AGG1}, {AGG2}]))
        self.assertEqual(['in2', 'nowhere'], names(forbidden_aggs={AGG1}))
        self.assertEqual(['in2'], names(member_of=[{AGG1, AGG2}],
                                        forbidden_aggs={AGG1}))

    def test_unknown_names_raise(self):
        self.make('cn', VCPU=4)
        self.assertRaises(exception.ResourceClassNotFound, self.get,
                          group(resources={'CUSTOM_NOPE': 1}))
        self.assertRaises(exception.TraitNotFound, self.get,
                          group(resources={'VCPU': 1},
                                required_traits=[{'CUSTOM_NOPE'}]))
        self.assertRaises(exception.TraitNotFound, self.get,
                          group(resources={'VCPU': 1},
                                forbidden_traits={'CUSTOM_NOPE'}))
        self.assertRaises(exception.ResourceProviderNotFound, self.get,
                          group(resources={'VCPU': 1},
                                in_tree=uuidutils.generate_uuid()))

    def test_unknown_traits_are_named_in_placements_lookup_order(self):
        in1 = self.make('in1', VCPU=4)
        in1.set_aggregates([AGG1])

        def unknown(*groups, **kwargs):
            try:
                found = self.get(*groups, **kwargs)
            except (exception.TraitNotFound,
                    exception.ResourceClassNotFound) as exc:
                return exc.kwargs['name']
            return len(found.allocation_requests)

        # root_required first; then the groups as given (the query's
        # order), each one's required traits as given before its
        # forbidden ones.
        self.assertEqual('CUSTOM_Y', unknown(
            group(resources={'VCPU': 1}, required_traits=[{'CUSTOM_A'}]),
            root_required=['CUSTOM_Y']))
        self.assertEqual('CUSTOM_Z', unknown(
            group('2', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}, {'CUSTOM_A'}],
                  forbidden_traits={'CUSTOM_B'}),
            group('1', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_C'}]),
            group_policy='none'))
        self.assertEqual('CUSTOM_Z', unknown(
            group(resources={'VCPU': 1}, required_traits=[{'CUSTOM_Z'}],
                  forbidden_traits={'CUSTOM_A'})))
        # A member_of set no provider is in, looked up before the traits
        # of its group and of the groups after it: no candidates, no
        # error (placement's answer).
        nobody = uuidutils.generate_uuid()
        self.assertEqual(0, unknown(
            group(resources={'VCPU': 1}, required_traits=[{'CUSTOM_Z'}],
                  member_of=[{AGG1}, {nobody, AGG2}])))
        self.assertEqual(0, unknown(
            group('1', resources={'VCPU': 1}, member_of=[{nobody}]),
            group('2', resources={'VCPU': 1},
                  forbidden_traits={'CUSTOM_Z'}),
            group_policy='none'))
        # Not before the traits of an earlier group or root_required, nor
        # when one of its aggregates holds a provider.
        self.assertEqual('CUSTOM_Z', unknown(
            group('1', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]),
            group('2', resources={'VCPU': 1}, member_of=[{nobody}]),
            group_policy='none'))
        self.assertEqual('CUSTOM_Y', unknown(
            group(resources={'VCPU': 1}, member_of=[{nobody}]),
            root_required=['CUSTOM_Y']))
        self.assertEqual('CUSTOM_Z', unknown(
            group(resources={'VCPU': 1}, required_traits=[{'CUSTOM_Z'}],
                  member_of=[{nobody, AGG1}])))
        # Classes: in the order given, before their group's aggregates
        # and traits, after the earlier groups' and root_required's.
        self.assertEqual('CUSTOM_Z', unknown(
            group(resources={'CUSTOM_Z': 1, 'CUSTOM_A': 1})))
        self.assertEqual('CUSTOM_Z', unknown(
            group(resources={'CUSTOM_Z': 1}, member_of=[{nobody}],
                  required_traits=[{'CUSTOM_Q'}])))
        self.assertEqual('CUSTOM_Q', unknown(
            group('1', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Q'}]),
            group('2', resources={'CUSTOM_Z': 1}), group_policy='none'))
        self.assertEqual(0, unknown(
            group('1', resources={'VCPU': 1}, member_of=[{nobody}]),
            group('2', resources={'CUSTOM_Z': 1}), group_policy='none'))
        self.assertEqual('CUSTOM_Y', unknown(
            group(resources={'CUSTOM_Z': 1}), root_forbidden=['CUSTOM_Y']))
        # An earlier group with no candidates of its own (with
        # root_required), before the later group's names: none either.
        self.assertEqual(0, unknown(
            group('1', resources={'VCPU': 5}),
            group('2', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]), group_policy='none'))
        self.assertEqual(0, unknown(
            group('1', resources={'VCPU': 1}),
            group('2', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]), group_policy='none',
            root_required=[AVX2]))
        # Each group alone: together they need more than in1 has.
        self.assertEqual('CUSTOM_Z', unknown(
            group('1', resources={'VCPU': 3}),
            group('2', resources={'VCPU': 3}),
            group('3', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]), group_policy='none'))
        # A resourceless group: a provider passing its filters, whose
        # root passes root_required.
        in1.set_traits([SSE])
        subtree = {'same_subtree': [['_A', '_B']], 'group_policy': 'none'}
        self.assertEqual('CUSTOM_Z', unknown(
            group('_A', required_traits=[{SSE}]),
            group('_B', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]), **subtree))
        self.assertEqual(0, unknown(
            group('_A', required_traits=[{AVX2}]),
            group('_B', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]), **subtree))
        self.assertEqual(0, unknown(
            group('_A', required_traits=[{SSE}]),
            group('_B', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]),
            root_forbidden=[SSE], **subtree))
        # With a limit too.
        self.assertEqual(0, unknown(
            group(resources={'VCPU': 1}, required_traits=[{'CUSTOM_Z'}],
                  member_of=[{nobody}]), limit=1))
        # A resourceless group with neither a required trait nor a
        # member_of set matches no provider, even with forbidden ones.
        self.assertEqual(0, unknown(
            group('_A', forbidden_traits={AVX2}),
            group('_B', resources={'VCPU': 1},
                  required_traits=[{'CUSTOM_Z'}]), **subtree))

    def test_no_root_passing_root_required_ends_the_lookups(self):
        # Once root_required's names are known, and before any group's:
        # when no root passes it, no candidates rather than an error
        # (placement's answer). A child with the trait does not count.
        root = self.make('root', VCPU=4)
        self.make('child', root, VCPU=4).set_traits([AVX2])

        def unknown(**kwargs):
            try:
                found = self.get(group(resources={'CUSTOM_Z': 1},
                                       required_traits=[{'CUSTOM_Y'}]),
                                 **kwargs)
            except (exception.TraitNotFound,
                    exception.ResourceClassNotFound) as exc:
                return exc.kwargs['name']
            return len(found.allocation_requests)

        self.assertEqual(0, unknown(root_required=[AVX2]))
        self.assertEqual(0, unknown(root_required=[AVX2, SSE]))
        self.assertEqual('CUSTOM_Z', unknown(root_forbidden=[AVX2]))
        root.set_traits([AVX2])
        self.assertEqual('CUSTOM_Z', unknown(root_required=[AVX2]))
        self.assertEqual(0, unknown(root_forbidden=[AVX2]))
        root.set_traits([AVX2, SSE])
        self.assertEqual(0, unknown(root_required=[AVX2],
                                    root_forbidden=[SSE]))

    def test_malformed_and_unsupported_requests_raise(self):
        self.make('cn', VCPU=4)
        vcpu = group(resources={'VCPU': 1})
        # A resourceless group outside any same_subtree, or a same_subtree
        # naming no group of the request or the unsuffixed group.
        orphan = self.assertRaises(
            exception.Invalid, self.get, vcpu,
            group('_X', required_traits=[{AVX2}]))
        self.assertIn('_X', str(orphan))
        for subtrees in ([['_Y']], [['', '_X']], [[]]):
            self.assertRaises(exception.Invalid, self.get, vcpu,
                              group('_X', required_traits=[{AVX2}]),
                              same_subtree=subtrees)
        # Only resourceless groups: nothing to allocate.
        self.assertRaises(exception.Invalid, self.get,
                          group('_X', required_traits=[{AVX2}]),
                          same_subtree=[['_X']])
        for bad in ({'limit': 0}, {'limit': 'all'},
                    {'group_policy': 'spread'}):
            self.assertRaises(exception.Invalid, self.get, vcpu, **bad)
        self.assertRaises(exception.Invalid, self.get, vcpu, vcpu)
        # A group is checked when it is made.
        self.assertRaises(exception.Invalid, group, resources={'VCPU': 0})
        self.assertRaises(exception.Invalid, group)

    def test_limit_returns_the_first_requests_and_their_summaries(self):
        for n in range(6):
            self.make('cn%d' % n, VCPU=4)
        everything = self.get(group(resources={'VCPU': 1}))
        self.assertEqual(6, len(everything.allocation_requests))
        for limit in (1, 4, 6, 10):
            found = self.get(group(resources={'VCPU': 1}), limit=limit)
            kept = everything.allocation_requests[:limit]
            self.assertEqual([r.resource_requests for r in kept],
                             [r.resource_requests
                              for r in found.allocation_requests])
            self.assertEqual(
                sorted(r.mappings[''][0] for r in kept),
                sorted(found.provider_summaries))

    def test_limit_reads_on_past_roots_that_give_nothing(self):
        # A spread group's traits are checked on combinations, after the
        # roots are picked: the first roots pass the per-class test and
        # yet give no request, so the search must widen its window.
        for n in range(7):
            cn = self.make('cn%d' % n, VCPU=4)
            if n >= 4:
                cn.set_traits([AVX2])
        request = group(resources={'VCPU': 1}, required_traits=[{AVX2}])
        everything = self.requests(request)
        self.assertEqual(['cn4', 'cn5', 'cn6'], [r[0][0] for r in everything])
        for limit in (1, 2, 3, 5):
            self.assertEqual(everything[:limit],
                             self.requests(request, limit=limit))

    def test_every_way_of_binding_id_sets_gives_the_same_answer(self):
        # The summaries' and trait checks' id sets are bound as JSON
        # (SQLite), an array (PostgreSQL), one parameter per id, or
        # written into the SQL past MAX_BOUND_IDS. Force each one on
        # this backend and compare.
        for n in range(4):
            self.make('cn%d' % n, VCPU=4).set_traits([AVX2])
        request = group(resources={'VCPU': 1}, required_traits=[{AVX2}])
        native = self.get(request)
        self.assertEqual(4, len(native.allocation_requests))
        real_strategy = ac_db._strategy
        for ids in (search_strategy.BOUND_IDS, search_strategy.INLINE_IDS):
            def forced(context, ids=ids):
                return real_strategy(context)._replace(summary_ids=ids)

            with fixtures.MockPatch(
                    'resobj.db.api.allocation_candidate._strategy',
                    side_effect=forced) as patch:
                found = self.get(request)
            self.assertTrue(patch.mock.called)
            self.assertEqual(
                [r.allocations for r in native.allocation_requests],
                [r.allocations for r in found.allocation_requests])
            self.assertEqual(
                {u: (s.resources, s.traits)
                 for u, s in native.provider_summaries.items()},
                {u: (s.resources, s.traits)
                 for u, s in found.provider_summaries.items()})
        dialect = self.engine.dialect.name
        self.assertEqual(
            {'sqlite': '<JsonIds>', 'postgresql': '<ArrayIds>'}.get(
                dialect, '<BoundIds>'),
            repr(backends.for_dialect(dialect).candidate_strategy()
                 .summary_ids))


class TestSharingProviders(CandidateTestCase):
    """A Ceph-like pool shared by three compute nodes."""

    def setUp(self):
        super().setUp()
        self.cns = [self.make('cn%d' % n, VCPU=16, MEMORY_MB=32768)
                    for n in range(3)]
        self.pool = self.make('pool', DISK_GB=10000)
        self.pool.set_traits([SHARING])
        for provider in self.cns + [self.pool]:
            provider.set_aggregates([AGG1])
        # Not in the aggregate: cannot reach the pool.
        self.outside = self.make('outside', VCPU=16, MEMORY_MB=32768)

    def test_each_node_combines_with_the_pool(self):
        pf.allocate(self.context, self.pool.id, 'DISK_GB', 400)
        found = self.get(group(resources={'VCPU': 2, 'MEMORY_MB': 2048,
                                          'DISK_GB': 100}))
        self.assertEqual(
            [sorted([(cn, 'VCPU', 2), (cn, 'MEMORY_MB', 2048),
                     ('pool', 'DISK_GB', 100)])
             for cn in ('cn0', 'cn1', 'cn2')],
            [sorted((self.names[rp], rc, n)
                    for rp, rc, n in r.resource_requests)
             for r in found.allocation_requests])
        self.assertEqual(['cn0', 'cn1', 'cn2', 'pool'],
                         self.summary_names(found))
        # The pool counts once, with its own figures.
        self.assertEqual({'DISK_GB': (10000, 400)}, figures(
            found.provider_summaries[self.pool.uuid].resources))
        self.assertEqual(
            sorted([self.cns[0].uuid, self.pool.uuid]),
            sorted(found.allocation_requests[0].mappings['']))

    def test_own_disk_and_shared_disk_are_both_offered(self):
        self.add(self.cns[1], 'DISK_GB', 500)
        self.assertEqual(
            [[('cn0', 'VCPU', 2), ('pool', 'DISK_GB', 100)],
             [('cn1', 'DISK_GB', 100), ('cn1', 'VCPU', 2)],
             [('cn1', 'VCPU', 2), ('pool', 'DISK_GB', 100)],
             [('cn2', 'VCPU', 2), ('pool', 'DISK_GB', 100)]],
            self.requests(group(resources={'VCPU': 2, 'DISK_GB': 100})))

    def test_pool_alone_is_one_candidate(self):
        self.assertEqual([[('pool', 'DISK_GB', 100)]],
                         self.requests(group(resources={'DISK_GB': 100})))

    def test_full_pool_leaves_no_candidate(self):
        pf.allocate(self.context, self.pool.id, 'DISK_GB', 9950)
        self.assertEqual([], self.requests(
            group(resources={'VCPU': 2, 'DISK_GB': 100})))

    def test_limit_keeps_the_first_requests_with_the_pool(self):
        # cn1 has a disk of its own too; 'outside' only its own (no
        # pool); cn0 and cn2 only through the pool: the limited search
        # must find each root by the same test as the whole search.
        self.add(self.cns[1], 'DISK_GB', 500)
        self.add(self.outside, 'DISK_GB', 500)
        request = group(resources={'VCPU': 2, 'DISK_GB': 100})
        everything = self.requests(request)
        self.assertEqual(5, len(everything))
        for limit in (1, 2, 3, 4, 5, 6):
            self.assertEqual(everything[:limit],
                             self.requests(request, limit=limit))

    def test_a_spread_groups_traits_alone_or_with_the_pool(self):
        # cn1 has the trait; cn0 and cn2 through the pool only, which
        # has it too; 'outside' serves the group alone, and has it not.
        self.add(self.cns[1], 'DISK_GB', 500)
        self.add(self.outside, 'DISK_GB', 500)
        self.pool.set_traits([SHARING, SSD])
        self.cns[1].set_traits([SSD])
        request = group(resources={'VCPU': 2, 'DISK_GB': 100},
                        required_traits=[{SSD}])
        expected = [
            [('cn0', 'VCPU', 2), ('pool', 'DISK_GB', 100)],
            [('cn1', 'DISK_GB', 100), ('cn1', 'VCPU', 2)],
            [('cn1', 'VCPU', 2), ('pool', 'DISK_GB', 100)],
            [('cn2', 'VCPU', 2), ('pool', 'DISK_GB', 100)]]
        self.assertEqual(expected, self.requests(request))
        self.outside.set_traits([SSD])
        self.assertEqual(
            expected + [[('outside', 'DISK_GB', 100),
                         ('outside', 'VCPU', 2)]], self.requests(request))
        # Without the pool's trait, cn0 and cn2 have none to lean on.
        self.pool.set_traits([SHARING])
        self.assertEqual(
            [[('cn1', 'DISK_GB', 100), ('cn1', 'VCPU', 2)],
             [('cn1', 'VCPU', 2), ('pool', 'DISK_GB', 100)],
             [('outside', 'DISK_GB', 100), ('outside', 'VCPU', 2)]],
            self.requests(request))

    def test_filters_apply_to_the_pool(self):
        request = {'VCPU': 2, 'DISK_GB': 100}
        self.assertEqual([], self.requests(group(
            resources=request, forbidden_traits={SHARING})))
        self.pool.set_traits([SHARING, SSD])
        self.assertEqual(3, len(self.requests(group(
            resources=request, required_traits=[{SSD}]))))
        self.assertEqual([], self.requests(group(
            resources=request, member_of=[{AGG2}])))
        # in_tree keeps the search to one tree: the pool is another.
        self.assertEqual([], self.requests(group(
            resources=request, in_tree=self.cns[0].uuid)))


class TestSharingProviderUnderARoot(CandidateTestCase):
    """A sharing provider that is not a root, and member_of."""

    def test_own_aggregates_decide_which_other_trees_it_serves(self):
        # Seen in placement 16.0.0: a sharing provider that is not a root
        # serves another root's tree, in a group with member_of, only if
        # it is in the aggregates itself; in its own tree its root's
        # aggregates count, as for every provider there.
        host = self.make('host', DISK_GB=1000)
        host.set_aggregates([AGG1])
        pool = self.make('subpool', parent=host, VCPU=8)
        pool.set_traits([SHARING])
        pool.set_aggregates([AGG2])
        other = self.make('other', DISK_GB=1000)
        # Shares AGG2 with the pool, and is in AGG1 as the host.
        other.set_aggregates([AGG1, AGG2])
        request = {'VCPU': 1, 'DISK_GB': 10}
        own_tree = [('host', 'DISK_GB', 10), ('subpool', 'VCPU', 1)]
        other_tree = [('other', 'DISK_GB', 10), ('subpool', 'VCPU', 1)]
        for limit in (None, 10):
            self.assertEqual([own_tree], self.requests(group(
                resources=request, member_of=[{AGG1}]), limit=limit),
                limit)
            # In AGG2 itself: it serves the other tree too.
            self.assertEqual([own_tree, other_tree], self.requests(group(
                resources=request, member_of=[{AGG1, AGG2}]),
                limit=limit), limit)
            # Without member_of it serves every tree it shares with.
            self.assertEqual([own_tree, other_tree], self.requests(group(
                resources=request), limit=limit), limit)
        # The explanation counts the trees as the search finds them.
        found = ac_obj.AllocationCandidates.explain(
            self.context, [group(resources=request, member_of=[{AGG1}])])
        self.assertEqual(1, found.candidates)
        steps = {s['step']: s['passing'] for s in found.groups[0]['steps']}
        self.assertEqual(1, steps['trees with providers for the group'])
        pool.set_aggregates([AGG1, AGG2])
        self.assertEqual([own_tree, other_tree], self.requests(group(
            resources=request, member_of=[{AGG1}])))


class TestNestedProviders(CandidateTestCase):

    def setUp(self):
        super().setUp()
        self.root = self.make('root', MEMORY_MB=8192)
        self.numa0 = self.make('numa0', self.root, VCPU=4)
        self.numa1 = self.make('numa1', self.root, VCPU=4)
        self.other = self.make('other', VCPU=8, MEMORY_MB=8192)

    def test_unsuffixed_group_spans_one_tree(self):
        found = self.get(group(resources={'VCPU': 2, 'MEMORY_MB': 1024}))
        self.assertEqual(
            [[('numa0', 'VCPU', 2), ('root', 'MEMORY_MB', 1024)],
             [('numa1', 'VCPU', 2), ('root', 'MEMORY_MB', 1024)],
             [('other', 'MEMORY_MB', 1024), ('other', 'VCPU', 2)]],
            [sorted((self.names[rp], rc, n)
                    for rp, rc, n in r.resource_requests)
             for r in found.allocation_requests])
        # Two providers in one request: by provider uuid, and the
        # tuples are the same amounts in that order.
        request = found.allocation_requests[0]
        self.assertEqual(
            {self.numa0.uuid: {'VCPU': 2},
             self.root.uuid: {'MEMORY_MB': 1024}},
            request.allocations)
        self.assertEqual(sorted(request.allocations),
                         list(request.allocations))
        self.assertEqual(sorted(request.resource_requests),
                         request.resource_requests)
        # The whole tree is summarised, parents and roots named.
        self.assertEqual(['numa0', 'numa1', 'other', 'root'],
                         self.summary_names(found))
        numa1 = found.provider_summaries[self.numa1.uuid]
        self.assertEqual(self.root.uuid, numa1.parent_provider_uuid)
        self.assertEqual(self.root.uuid, numa1.root_provider_uuid)

    def test_allow_nested_false_keeps_one_provider_per_tree(self):
        self.assertEqual(
            [[('other', 'MEMORY_MB', 1024), ('other', 'VCPU', 2)]],
            self.requests(group(resources={'VCPU': 2, 'MEMORY_MB': 1024}),
                          allow_nested=False))

    def test_in_tree_and_member_of_through_the_root(self):
        request = {'VCPU': 2, 'MEMORY_MB': 1024}
        self.assertEqual(
            [['numa0', 'root'], ['numa1', 'root']],
            [sorted({p for p, _rc, _n in r}) for r in self.requests(
                group(resources=request, in_tree=self.numa1.uuid))])
        self.root.set_aggregates([AGG1])
        # The children are in AGG1 through their root.
        self.assertEqual(2, len(self.requests(
            group(resources=request, member_of=[{AGG1}]))))
        self.assertEqual([[('other', 'MEMORY_MB', 1024),
                           ('other', 'VCPU', 2)]],
                         self.requests(group(resources=request,
                                             forbidden_aggs={AGG1})))

    def test_traits_over_the_providers_used(self):
        self.numa1.set_traits([AVX2])
        request = {'VCPU': 2, 'MEMORY_MB': 1024}
        self.assertEqual(
            [[('numa1', 'VCPU', 2), ('root', 'MEMORY_MB', 1024)]],
            self.requests(group(resources=request,
                                required_traits=[{AVX2}])))
        self.assertEqual(
            [[('numa0', 'VCPU', 2), ('root', 'MEMORY_MB', 1024)],
             [('other', 'MEMORY_MB', 1024), ('other', 'VCPU', 2)]],
            self.requests(group(resources=request,
                                forbidden_traits={AVX2})))

    def test_granular_groups_and_group_policy(self):
        vcpu = {'VCPU': 1}
        for policy in ('none', None):
            self.assertEqual(
                # numa0 and numa1 twice: _A on one, then on the other.
                [[('numa0', 'VCPU', 2)],
                 [('numa0', 'VCPU', 1), ('numa1', 'VCPU', 1)],
                 [('numa0', 'VCPU', 1), ('numa1', 'VCPU', 1)],
                 [('numa1', 'VCPU', 2)],
                 [('other', 'VCPU', 2)]],
                self.requests(group('_A', resources=vcpu),
                              group('_B', resources=vcpu),
                              group_policy=policy))
        found = self.get(group('_A', resources=vcpu),
                         group('_B', resources=vcpu),
                         group_policy='isolate')
        self.assertEqual(
            [{'_A': [self.numa0.uuid], '_B': [self.numa1.uuid]},
             {'_A': [self.numa1.uuid], '_B': [self.numa0.uuid]}],
            [r.mappings for r in found.allocation_requests])

    def test_granular_amounts_are_summed_against_capacity(self):
        # Each group fits numa0 alone; both together do not.
        self.assertEqual(
            [[('numa0', 'VCPU', 3), ('numa1', 'VCPU', 3)],
             [('numa0', 'VCPU', 3), ('numa1', 'VCPU', 3)],
             [('other', 'VCPU', 6)]],
            self.requests(group('_A', resources={'VCPU': 3}),
                          group('_B', resources={'VCPU': 3})))

    def test_granular_group_with_the_unsuffixed_one(self):
        self.numa1.set_traits([AVX2])
        found = self.get(
            group(resources={'MEMORY_MB': 1024}),
            group('_CPU', resources={'VCPU': 2}, required_traits=[{AVX2}]))
        self.assertEqual(
            [{'': [self.root.uuid], '_CPU': [self.numa1.uuid]}],
            [r.mappings for r in found.allocation_requests])


class TestRootRequired(CandidateTestCase):
    """Traits of the root of each candidate's tree (root_required)."""

    def setUp(self):
        super().setUp()
        # A host whose VCPU is on a child; the child's own traits must
        # not count for or against the tree.
        self.host = self.make('host', MEMORY_MB=8192)
        self.host.set_traits([MULTI_ATTACH])
        self.numa = self.make('numa', self.host, VCPU=8)
        self.numa.set_traits([DISABLED])
        disabled = self.make('disabled', VCPU=8, MEMORY_MB=8192)
        disabled.set_traits([DISABLED, MULTI_ATTACH])
        self.plain = self.make('plain', VCPU=8, MEMORY_MB=8192)
        # Only its child has the trait: the tree's root does not.
        below = self.make('below', MEMORY_MB=8192)
        self.make('below-child', below, VCPU=8).set_traits([MULTI_ATTACH])

    def anchors(self, resources, **kwargs):
        """The root names of the requests, in order."""
        roots = {'numa': 'host', 'below-child': 'below'}
        return [sorted({roots.get(name, name) for name, _rc, _n in r})
                for r in self.requests(group(resources=resources), **kwargs)]

    def test_forbidden_on_the_root_only(self):
        compute = {'VCPU': 2, 'MEMORY_MB': 1024}
        self.assertEqual([['host'], ['disabled'], ['plain'], ['below']],
                         self.anchors(compute))
        self.assertEqual(
            [['host'], ['plain'], ['below']],
            self.anchors(compute, root_forbidden={DISABLED}))

    def test_required_on_the_root_only(self):
        compute = {'VCPU': 2, 'MEMORY_MB': 1024}
        self.assertEqual(
            [['host'], ['disabled']],
            self.anchors(compute, root_required={MULTI_ATTACH}))
        self.assertEqual(
            [['host']],
            self.anchors(compute, root_required={MULTI_ATTACH},
                         root_forbidden={DISABLED}))
        # Every required trait, not any one of them.
        self.assertEqual(
            [['disabled']],
            self.anchors(compute, root_required={MULTI_ATTACH, DISABLED}))
        self.assertEqual(
            [], self.anchors(compute, root_required={MULTI_ATTACH, SSD}))

    def test_limit_reads_only_passing_roots(self):
        compute = {'VCPU': 2, 'MEMORY_MB': 1024}
        everything = self.anchors(compute, root_forbidden={DISABLED})
        for limit in (1, 2, 3, 5):
            self.assertEqual(
                everything[:limit],
                self.anchors(compute, root_forbidden={DISABLED},
                             limit=limit))
        self.assertEqual([['disabled']], self.anchors(
            compute, root_required={DISABLED}, limit=1))

    def test_summaries_are_those_of_passing_trees(self):
        found = self.get(group(resources={'VCPU': 2}),
                         root_required={MULTI_ATTACH},
                         root_forbidden={DISABLED})
        self.assertEqual(['host', 'numa'], self.summary_names(found))
        self.assertEqual([DISABLED],
                         found.provider_summaries[self.numa.uuid].traits)

    def test_sharing_provider_serves_passing_trees_only(self):
        pool = self.make('pool', DISK_GB=1000)
        pool.set_traits([SHARING, DISABLED])
        lonely = self.make('lonely', DISK_GB=1000)
        lonely.set_traits([SHARING, DISABLED])
        pool.set_aggregates([AGG1])
        self.plain.set_aggregates([AGG1])
        lonely.set_aggregates([AGG2])
        disk = {'DISK_GB': 100}
        # Unfiltered, each pool is a candidate on its own.
        self.assertEqual([[('pool', 'DISK_GB', 100)],
                          [('lonely', 'DISK_GB', 100)]],
                         self.requests(group(resources=disk)))
        # Its own root is not the tree the request lands on: the pool
        # still serves plain, whose root passes; lonely serves no tree
        # that passes.
        for limit in (None, 1, 5):
            self.assertEqual(
                [[('pool', 'DISK_GB', 100)]],
                self.requests(group(resources=disk), limit=limit,
                              root_forbidden={DISABLED}))
            self.assertEqual(
                [[('plain', 'VCPU', 2), ('pool', 'DISK_GB', 100)]],
                self.requests(group(resources=dict(disk, VCPU=2)),
                              limit=limit, root_forbidden={DISABLED}))
            self.assertEqual([], self.requests(
                group(resources=disk), limit=limit,
                root_required={MULTI_ATTACH}))

    def test_unknown_and_contradictory_traits_raise(self):
        vcpu = group(resources={'VCPU': 1})
        self.assertRaises(exception.TraitNotFound, self.get, vcpu,
                          root_required={'CUSTOM_NOPE'})
        self.assertRaises(exception.TraitNotFound, self.get, vcpu,
                          root_forbidden={'CUSTOM_NOPE'})
        error = self.assertRaises(
            exception.Invalid, self.get, vcpu, root_required={DISABLED},
            root_forbidden={DISABLED})
        self.assertIn(DISABLED, str(error))


def _queries(counter):
    """The queries a StatementCounter saw.

    Not BEGIN, nor PostgreSQL's planner setting.
    """
    return [s for s in counter.statements
            if s.lstrip().upper().startswith(('SELECT', 'WITH'))]


class TestSummaryUsage(CandidateTestCase):
    """The summaries' figures of classes the request did not name.

    Those are read again after the search, with their inventories'
    usage.
    """

    def summaries(self):
        found = self.get(group(resources={'VCPU': 1}))
        return {self.names[uuid]: figures(summary.resources)
                for uuid, summary in found.provider_summaries.items()}

    def test_other_classes_have_their_usage(self):
        for n in range(3):
            cn = self.make('cn-%d' % n, VCPU=8, MEMORY_MB=4096, DISK_GB=100)
            pf.allocate(self.context, cn.id, 'MEMORY_MB', 512 * n, 256)
            pf.allocate(self.context, cn.id, 'DISK_GB', 10)
        spare = self.make('spare', VCPU=8, MEMORY_MB=2048)
        self.add(spare, 'DISK_GB', 200, reserved=50, allocation_ratio=1.5)
        expected = {
            'cn-%d' % n: {'VCPU': (8, 0), 'MEMORY_MB': (4096, 512 * n + 256),
                          'DISK_GB': (100, 10)} for n in range(3)}
        expected['spare'] = {'VCPU': (8, 0), 'MEMORY_MB': (2048, 0),
                             'DISK_GB': (225, 0)}
        self.assertEqual(expected, self.summaries())


class TestStatementCount(CandidateTestCase):
    """The statements of a search do not grow with the providers."""

    def populate(self, count):
        pool = self.make('pool-%d' % count, DISK_GB=100000)
        pool.set_traits([SHARING])
        pool.set_aggregates([AGG1])
        for n in range(count):
            cn = self.make('cn-%d-%d' % (count, n), VCPU=16,
                           MEMORY_MB=32768, DISK_GB=1000)
            cn.set_aggregates([AGG1])
            cn.set_traits([AVX2])
            pf.allocate(self.context, cn.id, 'VCPU', 1)

    def count(self, **kwargs):
        groups = [group(resources={'VCPU': 2, 'MEMORY_MB': 1024,
                                   'DISK_GB': 10},
                        required_traits=[{AVX2, SSE}], member_of=[{AGG1}])]
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            found = self.get(*groups, **kwargs)
        # Every node twice: with its own disk, and with the pool's.
        self.assertGreater(len(found.allocation_requests), 1)
        return _queries(counter)

    def test_statements_do_not_grow(self):
        self.populate(2)
        small, small_limited = self.count(), self.count(limit=3)
        # Names, classes' providers, traits of the spread group's
        # candidates, the summaries' providers and their traits (one
        # statement on PostgreSQL); with a limit, the candidate roots
        # first, then which of them the pool serves (the names told only
        # which providers share). SQLite's and PostgreSQL's candidate
        # rows describe the roots without children (every tree here),
        # whose providers and traits the summaries then need not read.
        expected, expected_limited = {
            'sqlite': (3, 5), 'postgresql': (3, 5)}.get(
                self.engine.dialect.name, (5, 7))
        self.assertEqual(expected, len(small), small)
        self.assertEqual(expected_limited, len(small_limited),
                         small_limited)
        self.populate(12)
        self.assertEqual(len(small), len(self.count()))
        self.assertEqual(len(small_limited), len(self.count(limit=3)))

    def test_a_window_without_sharing_is_found_with_its_rows(self):
        # Without sharing providers PostgreSQL finds a window's roots in
        # the statement that reads their rows, and the rows name them
        # all. The search widens its window on them as before: a spread
        # group's traits are checked after the roots are picked, so the
        # first window gives too few requests, and the second the rest.
        for n in range(8):
            cn = self.make('cn-%d' % n, VCPU=4, MEMORY_MB=4096)
            if n in (2, 5, 6):
                cn.set_traits([AVX2])
        request = group(resources={'VCPU': 1, 'MEMORY_MB': 1024},
                        required_traits=[{AVX2}])
        everything = self.requests(request)
        self.assertEqual(['cn-2', 'cn-5', 'cn-6'],
                         [r[0][0] for r in everything])
        # Names; per window (two here) its roots and its rows, one
        # statement on PostgreSQL. The rows of SQLite and PostgreSQL carry
        # a childless root's traits, which decide the spread group there;
        # MySQL reads the traits per window, then the summaries'
        # providers and traits.
        expected = {'postgresql': 1 + 2 * 1, 'sqlite': 1 + 2 * 2}.get(
            self.engine.dialect.name, 1 + 2 * 3 + 2)
        for limit in (1, 2, 3, 4):
            with resobj_fixtures.StatementCounter(self.engine) as counter:
                self.assertEqual(everything[:limit],
                                 self.requests(request, limit=limit))
            queries = _queries(counter)
            self.assertEqual(expected, len(queries), queries)

    def test_summaries_read_again_only_what_the_search_did_not(self):
        # The candidate rows hold the requested classes of the providers
        # with room; a summarised provider with other inventory (the
        # compute node's PCPU, its child's VF, whose VCPU is full) is
        # read again, in one more statement whatever their number.
        for n in range(3):
            cn = self.make('cn-%d' % n, VCPU=4, MEMORY_MB=4096, PCPU=8)
            pf.allocate(self.context, cn.id, 'PCPU', 3)
            nic = self.make('nic-%d' % n, cn, VCPU=1, SRIOV_NET_VF=16)
            pf.allocate(self.context, nic.id, 'VCPU', 1)
        request = group(resources={'VCPU': 2, 'MEMORY_MB': 1024})
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            found = self.get(request)
        self.assertEqual(3, len(found.allocation_requests))
        summaries = {self.names[uuid]: figures(s.resources)
                     for uuid, s in found.provider_summaries.items()}
        for n in range(3):
            self.assertEqual(
                {'VCPU': (4, 0), 'MEMORY_MB': (4096, 0), 'PCPU': (8, 3)},
                summaries['cn-%d' % n])
            self.assertEqual({'VCPU': (1, 1), 'SRIOV_NET_VF': (16, 0)},
                             summaries['nic-%d' % n])
        queries = _queries(counter)
        # Names, classes' providers, the summaries' providers, the
        # inventories read again, traits (read with the providers on
        # PostgreSQL).
        self.assertEqual(4 if self.engine.dialect.name == 'postgresql'
                         else 5, len(queries), queries)

    def test_lone_roots_and_trees_summarised_alike(self):
        # Roots without children come described in SQLite's candidate
        # rows; one with an inventory the request does not name, a tree
        # with children and a childless root with no room are read as
        # before. Every backend gives the same summaries.
        flat = self.make('flat', VCPU=8, MEMORY_MB=4096)
        flat.set_traits([SSE, MULTI_ATTACH, AVX2])
        pf.allocate(self.context, flat.id, 'VCPU', 3)
        extra = self.make('extra', VCPU=8, MEMORY_MB=4096, PCPU=4)
        pf.allocate(self.context, extra.id, 'PCPU', 1)
        parent = self.make('parent', MEMORY_MB=4096)
        child = self.make('child', parent, VCPU=8)
        child.set_traits([SSE])
        self.make('full', VCPU=1, MEMORY_MB=4096)
        request = group(resources={'VCPU': 2, 'MEMORY_MB': 1024})
        for limit in (None, 2, 3):
            found = self.get(request, limit=limit)
            summaries = {
                self.names[uuid]: (
                    figures(s.resources), s.traits,
                    self.names.get(s.parent_provider_uuid),
                    self.names[s.root_provider_uuid])
                for uuid, s in found.provider_summaries.items()}
            expected = {
                'flat': ({'VCPU': (8, 3), 'MEMORY_MB': (4096, 0)},
                         [MULTI_ATTACH, AVX2, SSE], None, 'flat'),
                'extra': ({'VCPU': (8, 0), 'MEMORY_MB': (4096, 0),
                           'PCPU': (4, 1)}, [], None, 'extra'),
                'parent': ({'MEMORY_MB': (4096, 0)}, [], None, 'parent'),
                'child': ({'VCPU': (8, 0)}, [SSE], 'parent', 'parent')}
            # A limit keeps the first trees, in the order made.
            names = ['flat', 'extra'] if limit == 2 else expected
            self.assertEqual({name: expected[name] for name in names},
                             summaries, limit)


class TestWarmStatements(CandidateTestCase):
    """warm_statements compiles what the usual searches run."""

    def setUp(self):
        super().setUp()
        for n in range(3):
            cn = self.make('cn-%d' % n, VCPU=16, MEMORY_MB=32768,
                           DISK_GB=1000, PCPU=8)
            cn.set_aggregates([AGG1])
        cn.set_traits([DISABLED])

    def misses(self, *groups, **kwargs):
        """The queries of a search that SQLAlchemy had to compile."""
        compiled = []

        def record(conn, cursor, statement, parameters, context,
                   executemany):
            if statement.lstrip().upper().startswith(('SELECT', 'WITH')) \
                    and context.cache_hit != context.dialect.CACHE_HIT:
                compiled.append(statement)

        sa.event.listen(self.engine, 'before_cursor_execute', record)
        try:
            found = self.get(*groups, **kwargs)
        finally:
            sa.event.remove(self.engine, 'before_cursor_execute', record)
        self.assertTrue(found.allocation_requests)
        return compiled

    def usual_searches(self):
        flavor = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}
        return [
            ([group(resources=flavor)], {}),
            ([group(resources=flavor)], {'limit': 2}),
            ([group(resources={'VCPU': 1})], {}),
            ([group(resources=dict(flavor, PCPU=2),
                    forbidden_traits={DISABLED})], {'limit': 1}),
            ([group(resources=dict(flavor, PCPU=2),
                    forbidden_traits={DISABLED})], {}),
        ]

    def test_usual_searches_compile_nothing_once_warmed(self):
        for with_pool in (False, True):
            if with_pool:
                # A sharing provider: the statements that serve its
                # trees are other ones.
                pool = self.make('pool', DISK_GB=100000)
                pool.set_traits([SHARING])
                pool.set_aggregates([AGG1])
            for groups, kwargs in self.usual_searches():
                # What the search compiles in a process that has not run
                # it: the check below can tell.
                self.engine.clear_compiled_cache()
                for build in (row_statements.whole_cloud,
                              row_statements.of_roots,
                              row_statements.anchored):
                    build.cache_clear()
                self.assertNotEqual([], self.misses(*groups, **kwargs))
                self.engine.clear_compiled_cache()
                self.assertGreater(ac_db.warm_statements(self.context), 0)
                self.assertEqual([], self.misses(*groups, **kwargs),
                                 (with_pool, groups, kwargs))

    def test_other_shapes_still_work_after_warming(self):
        ac_db.warm_statements(self.context)
        found = self.get(group(resources={'VCPU': 2}, member_of=[{AGG1}],
                               required_traits=[{DISABLED}]))
        self.assertEqual(['cn-2'], self.summary_names(found))


class TestWarmConnection(CandidateTestCase):
    """warm_connection runs the usual searches' statements, finding nothing."""

    def setUp(self):
        super().setUp()
        for n in range(3):
            self.make('cn-%d' % n, VCPU=16, MEMORY_MB=32768, DISK_GB=1000)

    def test_it_runs_searches_that_change_nothing(self):
        before = self.get(group(resources={'VCPU': 2}))
        counter = self.useFixture(resobj_fixtures.StatementCounter(
            self.engine))
        self.assertEqual(12, ac_db.warm_connection(self.context))
        queries = _queries(counter)
        self.assertGreaterEqual(len(queries), 12)
        self.assertFalse([s for s in counter.statements if s.lstrip()
                          .upper().startswith(('INSERT', 'UPDATE',
                                               'DELETE'))])
        after = self.get(group(resources={'VCPU': 2}))
        self.assertEqual(before.summary_dicts, after.summary_dicts)


class TestWarmConnectionPrepares(CandidateTestCase):
    """On PostgreSQL the warmed connection has the statements ready."""

    scenarios = [s for s in CandidateTestCase.scenarios
                 if s[0] == 'postgresql']

    def setUp(self):
        super().setUp()
        for n in range(3):
            self.make('cn-%d' % n, VCPU=16, MEMORY_MB=32768, DISK_GB=1000)

    def test_the_usual_searches_prepare_nothing_more(self):
        from resobj.db import facade
        flavor = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}

        @facade.reader
        def prepared_by_searches(context):
            # One reader: every statement on one connection.
            def prepared():
                return set(context.session.execute(sa.text(
                    'SELECT statement FROM pg_prepared_statements'))
                    .scalars())
            start = prepared()
            ac_db.warm_connection(context)
            warmed = prepared()
            for kwargs in ({}, {'limit': 2}):
                for forbidden in (set(), {DISABLED}):
                    ac_db.get_candidates(context, [search_request.group(
                        resources=flavor, forbidden_traits=forbidden)],
                        **kwargs)
            return start, warmed, prepared()

        start, warmed, searched = prepared_by_searches(self.context)
        self.assertTrue(warmed - start)
        self.assertEqual(set(), searched - warmed)


def _inline(cursor, statement, parameters):
    """``statement`` with its values written in, for EXPLAIN.

    psycopg2 cursors do this themselves; psycopg (3) sends values apart
    from the SQL and only its client-side cursors can write them in.
    """
    if hasattr(cursor, 'mogrify'):
        return cursor.mogrify(statement, parameters).decode()
    import psycopg
    return psycopg.ClientCursor(cursor.connection).mogrify(
        statement, parameters)


def _plan_nodes(node):
    """``node`` (of an EXPLAIN in JSON) and every node under it."""
    nodes = [node]
    for child in node.get('Plans', ()):
        nodes += _plan_nodes(child)
    return nodes


class PlanTestCase(CandidateTestCase):
    """PostgreSQL's plans of the statements a search runs."""

    scenarios = [s for s in CandidateTestCase.scenarios
                 if s[0] == 'postgresql']

    def explained(self, marker, *groups, analyze=False, **request):
        """A search's answer and the plan of its statement with ``marker``.

        Returns (answer, every node of the plan, its root first); the
        search runs one statement with ``marker``. ``analyze``: the plan
        as run (EXPLAIN ANALYZE), with its counts.
        """
        sent = []

        def record(conn, cursor, statement, parameters, context, many):
            if marker in statement:
                sent.append(_inline(cursor, statement, parameters))
        sa.event.listen(self.engine, 'before_cursor_execute', record)
        self.addCleanup(sa.event.remove, self.engine,
                        'before_cursor_execute', record)
        found = self.get(*groups, **request)
        self.assertEqual(1, len(sent), sent)
        with self.engine.connect() as conn:
            plan = conn.exec_driver_sql(
                'EXPLAIN (%sFORMAT JSON) ' % ('ANALYZE, ' if analyze else '')
                + sent[0].replace('%', '%%')).scalar()[0]['Plan']
        return found, _plan_nodes(plan)


class TestFirstRootsPlan(PlanTestCase):
    """PostgreSQL's plans for a limited search, with and without statistics.

    With ``limit``, the search walks roots in id order and tests each
    with one EXISTS per class, so that it stops after ``limit`` roots.
    Once the tables have statistics, PostgreSQL used to pull those tests
    up into semi-joins computed over every provider at once. The same
    statement then reads those roots' trees only; before the tables had
    statistics, PostgreSQL read every inventory of each class instead,
    with its usage, and kept the window's.
    """

    def plan_nodes(self, marker, **request):
        """Every node of the plan of the one statement with ``marker``.

        Its first node is the plan's root.
        """
        found, nodes = self.explained(
            marker, group(resources={'VCPU': 2, 'MEMORY_MB': 1024,
                                     'DISK_GB': 10}), **request)
        self.assertEqual(request['limit'], len(found.allocation_requests))
        return nodes

    def test_window_rows_start_from_its_roots_without_statistics(self):
        for n in range(60):
            self.make('cn-%d' % n, VCPU=16, MEMORY_MB=32768, DISK_GB=1000)
        nodes = self.plan_nodes(' AS grp', limit=5)
        indexes = [n.get('Index Name') for n in nodes]
        # Not every inventory of the class, but the roots' own.
        self.assertNotIn('ix_inventories_resource_class_id', indexes)
        self.assertIn('uq_inventories_resource_provider_id_resource_class_id',
                      indexes)

    def test_window_rows_with_a_pool_start_from_its_roots(self):
        # The window's trees and the sharing providers: one set of ids,
        # not an OR of two tests, which took PostgreSQL with statistics
        # to every inventory of each class.
        pool = self.make('pool', DISK_GB=100000)
        pool.set_traits([SHARING])
        pool.set_aggregates([AGG1])
        for n in range(200):
            cn = self.make('cn-%d' % n, VCPU=16, MEMORY_MB=32768,
                           DISK_GB=1000)
            cn.set_aggregates([AGG1])
        with self.engine.connect() as conn:
            conn.execute(sa.text('ANALYZE'))
            conn.commit()
        nodes = self.plan_nodes(' AS grp', limit=5)
        self.assertEqual([], [n for n in nodes
                              if n.get('Relation Name') == 'inventories'
                              and n['Node Type'] == 'Seq Scan'])
        self.assertIn('uq_inventories_resource_provider_id_resource_class_id',
                      [n.get('Index Name') for n in nodes])

    def test_exists_tests_stay_per_root_subplans(self):
        for n in range(30):
            cn = self.make('cn-%d' % n, VCPU=16, MEMORY_MB=32768,
                           DISK_GB=1000)
            pf.allocate(self.context, cn.id, 'VCPU', 1, 2)
        with self.engine.connect() as conn:
            conn.execute(sa.text('ANALYZE'))
            conn.commit()
        nodes = self.plan_nodes('anchor', limit=5)
        plan = nodes[0]
        self.assertEqual(
            [], [n['Join Type'] for n in nodes
                 if n.get('Join Type') in ('Semi', 'Anti')])
        # The roots' walk: one subplan per class tests a root; the others
        # sum usages.
        walk, = [n for n in nodes if n.get('Alias') == 'anchor']
        probes = [n for n in _plan_nodes(walk)
                  if n.get('Parent Relationship') == 'SubPlan' and
                  n['Node Type'] != 'Aggregate']
        self.assertEqual(3, len(probes), plan)


class TestSharingPairsPlan(PlanTestCase):
    """The sharing pairs are joined only in a cloud that has a sharer.

    Every search starts with one statement that reads the class and
    trait ids and the (sharing provider, root it serves) pairs. Finding
    the pairs joins every provider with its aggregate links; a count of
    the sharing trait's links gates those joins, so that PostgreSQL does
    not run them to find nothing.
    """

    def member_scans(self):
        """How many times the pairs' scan of the providers ran."""
        _found, nodes = self.explained(
            "'served'", group(resources={'DISK_GB': 10}), analyze=True)
        scans = [n for n in nodes if n.get('Alias') == 'member_rp']
        self.assertEqual(1, len(scans), nodes[0])
        return scans[0]['Actual Loops']

    def test_no_sharing_provider_no_join(self):
        for n in range(5):
            cn = self.make('cn-%d' % n, DISK_GB=100)
            cn.set_aggregates([AGG1])
        self.assertEqual(0, self.member_scans())

    def test_a_sharing_provider_is_joined(self):
        self.make('cn', DISK_GB=100).set_aggregates([AGG1])
        pool = self.make('pool', DISK_GB=1000)
        pool.set_traits([SHARING])
        pool.set_aggregates([AGG1])
        self.assertGreater(self.member_scans(), 0)


class TestChildlessRootPlan(CandidateTestCase):
    """SQLite's plan for "a root without children", with statistics.

    In a flat cloud every provider's parent is NULL. Once ANALYZE has
    recorded that, SQLite finds the parent index worthless; a lookup of
    children by parent then scans every provider once per root. The
    search looks them up by root instead, whose index stays selective.
    """

    scenarios = [s for s in CandidateTestCase.scenarios
                 if s[0] == 'sqlite']

    def test_children_are_found_through_an_index_after_analyze(self):
        for n in range(40):
            self.make('cn-%d' % n, VCPU=16, MEMORY_MB=32768, DISK_GB=1000)
        with self.engine.connect() as conn:
            conn.execute(sa.text('ANALYZE'))
            conn.commit()
        sent = []

        def record(conn, cursor, statement, parameters, context, many):
            if ' AS grp' in statement:
                sent.append((statement, parameters))
        sa.event.listen(self.engine, 'before_cursor_execute', record)
        self.addCleanup(sa.event.remove, self.engine,
                        'before_cursor_execute', record)
        found = self.get(group(resources={'VCPU': 2, 'MEMORY_MB': 1024,
                                          'DISK_GB': 10}))
        self.assertEqual(40, len(found.allocation_requests))
        self.assertEqual(1, len(sent))
        with self.engine.connect() as conn:
            plan = [row[-1] for row in conn.exec_driver_sql(
                'EXPLAIN QUERY PLAN ' + sent[0][0], sent[0][1])]
        self.assertEqual([], [step for step in plan
                              if step.startswith('SCAN child')], plan)
        self.assertTrue([step for step in plan
                         if step.startswith('SEARCH child USING')], plan)
