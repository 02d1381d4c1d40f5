"""ResourceProvider and ResourceProviderList over a real database."""

from oslo_utils import uuidutils

from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models
from resobj import exception
from resobj import objects
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import provider_fixtures as pf

objects.register_all()

AGG1 = '11111111-1111-4111-8111-111111111111'
AGG2 = '22222222-2222-4222-8222-222222222222'
AGG3 = '33333333-3333-4333-8333-333333333333'


class TestTrees(pf.ProviderTestCase):

    def test_root_is_its_own_root(self):
        root = self.make('root')
        self.assertIsNone(root.parent_provider_uuid)
        self.assertEqual(root.uuid, root.root_provider_uuid)
        self.assertEqual(0, root.generation)
        self.assertEqual(set(), root.obj_what_changed())
        self.assertEqual(root.obj_to_primitive(),
                         self.get(root).obj_to_primitive())

    def test_nested_providers_share_the_root(self):
        root = self.make('root')
        child = self.make('child', root)
        grandchild = self.make('grandchild', child)
        self.assertEqual(root.uuid, child.parent_provider_uuid)
        self.assertEqual(child.uuid, grandchild.parent_provider_uuid)
        for provider in (child, grandchild):
            self.assertEqual(root.uuid, self.get(provider).root_provider_uuid)

    def test_create_refuses_bad_parents(self):
        missing = uuidutils.generate_uuid()
        exc = self.assertRaises(exception.InvalidResourceProviderParent,
                                self.make, 'orphan',
                                objects.ResourceProvider(uuid=missing))
        self.assertIn(missing, str(exc))
        own = uuidutils.generate_uuid()
        selfish = objects.ResourceProvider(
            self.context, uuid=own, name='selfish',
            parent_provider_uuid=own)
        self.assertRaises(exception.InvalidResourceProviderParent,
                          selfish.create)
        self.assertEqual(0, fx.count_rows(self.context,
                                          rp_models.ResourceProvider))

    def test_create_refuses_duplicates(self):
        first = self.make('dup')
        self.assertRaises(exception.ResourceProviderExists, self.make, 'dup')
        again = objects.ResourceProvider(self.context, uuid=first.uuid,
                                         name='other')
        self.assertRaises(exception.ResourceProviderExists, again.create)
        self.assertRaises(exception.ObjectActionError, first.create)
        self.assertRaises(exception.ObjectActionError,
                          objects.ResourceProvider(self.context).create)

    def test_get_unknown_raises(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          objects.ResourceProvider.get_by_uuid,
                          self.context, uuidutils.generate_uuid())

    def test_reparenting_rewrites_the_subtree_roots(self):
        root1, root2 = self.make('root1'), self.make('root2')
        child = self.make('child', root1)
        grandchild = self.make('grandchild', child)
        sibling = self.make('sibling', root1)

        child.parent_provider_uuid = root2.uuid
        child.save()
        self.assertEqual(root2.uuid, child.root_provider_uuid)
        self.assertEqual(root2.uuid, self.get(grandchild).root_provider_uuid)
        # Outside the moved subtree nothing changed.
        self.assertEqual(root1.uuid, self.get(sibling).root_provider_uuid)
        # The generation is not involved in a parent change.
        self.assertEqual(0, child.generation)

        child.parent_provider_uuid = None
        child.save()
        self.assertEqual(child.uuid, child.root_provider_uuid)
        self.assertEqual(child.uuid, self.get(grandchild).root_provider_uuid)
        in_tree = objects.ResourceProviderList.get_all_by_filters(
            self.context, {'in_tree': child.uuid})
        self.assertEqual(['child', 'grandchild'], [p.name for p in in_tree])

    def test_loops_are_refused(self):
        root = self.make('root')
        child = self.make('child', root)
        grandchild = self.make('grandchild', child)
        # Under its own child, or under itself.
        for parent in (grandchild.uuid, child.uuid):
            child = self.get(child)
            child.parent_provider_uuid = parent
            self.assertRaises(exception.InvalidResourceProviderParent,
                              child.save)
        root.parent_provider_uuid = grandchild.uuid
        self.assertRaises(exception.InvalidResourceProviderParent, root.save)
        # Nothing moved.
        self.assertIsNone(self.get(root).parent_provider_uuid)
        self.assertEqual(root.uuid, self.get(child).parent_provider_uuid)
        self.assertEqual(root.uuid, self.get(grandchild).root_provider_uuid)

    def test_save_renames_and_refuses_other_changes(self):
        provider = self.make('old')
        provider.name = 'new'
        provider.save()
        self.assertEqual('new', self.get(provider).name)
        self.assertIsNotNone(self.get(provider).updated_at)
        self.make('taken')
        provider.name = 'taken'
        self.assertRaises(exception.ResourceProviderExists, provider.save)
        provider = self.get(provider)
        provider.generation = 5
        self.assertRaises(exception.ObjectActionError, provider.save)
        self.assertEqual(0, self.get(provider).generation)


class TestDestroy(pf.ProviderTestCase):

    def test_destroy_removes_everything_it_owns(self):
        provider = self.make('doomed', VCPU=8)
        provider.set_aggregates([AGG1])
        provider.set_traits(['HW_CPU_X86_AVX2'])
        provider.destroy()
        self.assertRaises(exception.ResourceProviderNotFound, self.get,
                          provider)
        for model in (inv_models.Inventory,
                      rp_models.ResourceProviderAggregate,
                      rp_models.ResourceProviderTrait):
            self.assertEqual(0, fx.count_rows(self.context, model))
        # Aggregates outlive their members, as in placement.
        self.assertEqual(1, fx.count_rows(self.context,
                                          rp_models.PlacementAggregate))

    def test_parent_cannot_be_deleted(self):
        root = self.make('root')
        child = self.make('child', root)
        self.assertRaises(exception.CannotDeleteParentResourceProvider,
                          root.destroy)
        child.destroy()
        root.destroy()
        self.assertEqual(0, fx.count_rows(self.context,
                                          rp_models.ResourceProvider))

    def test_provider_with_allocations_cannot_be_deleted(self):
        provider = self.make('busy', VCPU=8)
        pf.allocate(self.context, provider.id, 'VCPU', 2)
        exc = self.assertRaises(exception.ResourceProviderInUse,
                                provider.destroy)
        self.assertIn(provider.uuid, str(exc))
        # Refused as a whole: the inventory is still there.
        self.assertEqual(1, fx.count_rows(self.context, inv_models.Inventory))
        self.assertEqual('busy', self.get(provider).name)


class TestGenerations(pf.ProviderTestCase):

    def test_second_writer_with_same_generation_loses(self):
        first = self.make('contended')
        second = self.get(first)
        first.add_inventory(objects.Inventory(resource_class='VCPU',
                                              total=4))
        exc = self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            second.add_inventory,
            objects.Inventory(resource_class='DISK_GB', total=100))
        self.assertIsInstance(exc, exception.ConcurrentUpdateDetected)
        self.assertIn(first.uuid, str(exc))
        self.assertEqual(0, second.generation)
        self.assertRaises(exception.ResourceProviderConcurrentUpdateDetected,
                          second.set_traits, ['HW_CPU_X86_SSE'])
        # Neither change of the loser was written.
        fresh = self.get(first)
        self.assertEqual(1, fresh.generation)
        self.assertEqual(['VCPU'], [
            inv.resource_class for inv in
            objects.InventoryList.get_all_by_resource_provider(
                self.context, fresh)])
        self.assertEqual([], fresh.get_traits())

    def test_increment_generation(self):
        provider = self.make('p')
        stale = self.get(provider)
        provider.increment_generation()
        self.assertEqual(1, provider.generation)
        self.assertEqual(1, self.get(provider).generation)
        self.assertRaises(exception.ResourceProviderConcurrentUpdateDetected,
                          stale.increment_generation)
        self.assertEqual(1, self.get(provider).generation)

    def test_traits_bump_only_when_changed(self):
        provider = self.make('p')
        provider.set_traits(['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE'])
        self.assertEqual(1, provider.generation)
        provider.set_traits(['HW_CPU_X86_SSE', 'HW_CPU_X86_AVX2'])
        self.assertEqual(1, self.get(provider).generation)
        provider.set_traits(['HW_CPU_X86_SSE'])
        self.assertEqual(2, self.get(provider).generation)
        self.assertEqual(['HW_CPU_X86_SSE'], provider.get_traits())
        self.assertRaises(exception.TraitNotFound, provider.set_traits,
                          ['CUSTOM_NOPE'])
        self.assertEqual(['HW_CPU_X86_SSE'], provider.get_traits())

    def test_aggregates_bump_only_when_asked(self):
        provider = self.make('p')
        provider.set_aggregates([AGG2, AGG1])
        self.assertEqual(0, self.get(provider).generation)
        self.assertEqual([AGG1, AGG2], provider.get_aggregates())
        provider.set_aggregates([AGG1], increment_generation=True)
        self.assertEqual(1, provider.generation)
        self.assertEqual(1, self.get(provider).generation)
        self.assertEqual([AGG1], provider.get_aggregates())
        stale = self.get(provider)
        provider.increment_generation()
        self.assertRaises(exception.ResourceProviderConcurrentUpdateDetected,
                          stale.set_aggregates, [AGG3],
                          increment_generation=True)
        self.assertEqual([AGG1], provider.get_aggregates())

    def test_aggregate_rows_are_shared(self):
        first, second = self.make('a'), self.make('b')
        first.set_aggregates([AGG1, AGG2])
        second.set_aggregates([AGG2, AGG3])
        self.assertEqual(3, fx.count_rows(self.context,
                                          rp_models.PlacementAggregate))
        self.assertEqual([AGG2, AGG3], second.get_aggregates())


class TestFilters(pf.ProviderTestCase):

    def setUp(self):
        super().setUp()
        # root1 (AGG1) > child1 ; root2 (AGG2) ; loner (AGG3, AGG2)
        self.root1 = self.make('root1', VCPU=8, MEMORY_MB=1024)
        self.child1 = self.make('child1', self.root1, VCPU=4)
        self.root2 = self.make('root2', VCPU=16)
        self.loner = self.make('loner')
        self.root1.set_aggregates([AGG1])
        self.root2.set_aggregates([AGG2])
        self.loner.set_aggregates([AGG3, AGG2])
        self.root1.set_traits(['HW_CPU_X86_AVX2'])
        self.child1.set_traits(['HW_CPU_X86_SSE', 'HW_CPU_X86_AVX2'])
        self.root2.set_traits(['HW_CPU_X86_SSE'])

    def names(self, **filters):
        return [p.name for p in
                objects.ResourceProviderList.get_all_by_filters(
                    self.context, filters)]

    def test_no_filters_lists_all_by_id(self):
        self.assertEqual(['root1', 'child1', 'root2', 'loner'], self.names())
        found = objects.ResourceProviderList.get_all_by_filters(
            self.context)
        self.assertEqual(self.root1.uuid, found[1].root_provider_uuid)
        self.assertEqual(self.root1.uuid, found[1].parent_provider_uuid)

    def test_name_uuid_and_tree(self):
        self.assertEqual(['root2'], self.names(name='root2'))
        self.assertEqual(['child1'], self.names(uuid=self.child1.uuid))
        self.assertEqual(['root1', 'child1'],
                         self.names(in_tree=self.child1.uuid))
        self.assertEqual([], self.names(in_tree=uuidutils.generate_uuid()))
        self.assertEqual([], self.names(name='root2', uuid=self.loner.uuid))

    def test_unknown_tree_matches_nothing_before_names_are_checked(self):
        # Placement looks the tree up first: a list in a tree that does
        # not exist is empty, even when it names an unknown trait or
        # class; in a tree that exists, those names are still errors.
        nowhere = uuidutils.generate_uuid()
        self.assertEqual([], self.names(in_tree=nowhere,
                                        resources={'CUSTOM_NOPE': 1}))
        self.assertEqual([], self.names(in_tree=nowhere,
                                        required_traits=[{'CUSTOM_NOPE'}]))
        self.assertEqual([], self.names(in_tree=nowhere,
                                        forbidden_traits={'CUSTOM_NOPE'}))
        self.assertRaises(exception.ResourceClassNotFound, self.names,
                          in_tree=self.root1.uuid,
                          resources={'CUSTOM_NOPE': 1})
        self.assertRaises(exception.TraitNotFound, self.names,
                          in_tree=self.child1.uuid,
                          required_traits=[{'CUSTOM_NOPE'}])

    def test_unknown_class_after_aggregates_or_traits_that_match_none(self):
        # Then placement matches the aggregates alone and the required
        # traits alone: if either leaves no provider, the list is empty
        # before the unknown class is an error.
        nope = {'CUSTOM_NOPE': 1}
        unknown_agg = uuidutils.generate_uuid()
        self.assertEqual([], self.names(member_of=[[unknown_agg]],
                                        resources=nope))
        self.assertEqual([], self.names(member_of=[[AGG1], [AGG2]],
                                        resources=nope))
        self.assertEqual([], self.names(
            required_traits=[{'HW_CPU_X86_SSE2'}], resources=nope))
        self.assertEqual([], self.names(
            required_traits=[{'HW_CPU_X86_AVX2'}, {'HW_CPU_X86_SSE2'}],
            resources=nope))
        # Each alone matches some provider, though together none: the
        # class is looked up, and unknown.
        self.assertEqual([], self.names(
            member_of=[[AGG1]], required_traits=[{'HW_CPU_X86_SSE'}]))
        self.assertRaises(exception.ResourceClassNotFound, self.names,
                          member_of=[[AGG1]],
                          required_traits=[{'HW_CPU_X86_SSE'}],
                          resources=nope)
        # Forbidden aggregates and traits, a name or a uuid do not count.
        self.assertRaises(exception.ResourceClassNotFound, self.names,
                          forbidden_aggregates=[AGG1, AGG2, AGG3],
                          forbidden_traits={'HW_CPU_X86_SSE'},
                          resources=nope)
        self.assertRaises(exception.ResourceClassNotFound, self.names,
                          name='nobody', resources=nope)
        # An unknown trait is an error before the aggregates are matched.
        self.assertRaises(exception.TraitNotFound, self.names,
                          member_of=[[unknown_agg]],
                          required_traits=[{'CUSTOM_NOPE'}],
                          resources=nope)

    def test_member_of_is_and_of_ors_of_the_providers_own(self):
        # child1 is not in AGG1 though its root is: as in placement, a
        # provider list counts a provider's own aggregates only.
        self.assertEqual(['root1'], self.names(member_of=[[AGG1]]))
        self.assertEqual(['root1', 'root2', 'loner'],
                         self.names(member_of=[[AGG1, AGG2]]))
        self.assertEqual(['loner'], self.names(member_of=[[AGG2], [AGG3]]))
        self.assertEqual([], self.names(member_of=[[AGG1], [AGG2]]))

    def test_forbidden_aggregates_are_the_providers_own(self):
        self.assertEqual(['child1', 'root2', 'loner'],
                         self.names(forbidden_aggregates=[AGG1]))
        self.assertEqual(['root1', 'child1'],
                         self.names(forbidden_aggregates=[AGG2, AGG3]))
        self.assertEqual(['root2'], self.names(member_of=[[AGG2]],
                                               forbidden_aggregates=[AGG3]))

    def test_traits(self):
        self.assertEqual(['root1', 'child1'],
                         self.names(required_traits=[{'HW_CPU_X86_AVX2'}]))
        self.assertEqual(
            ['child1'], self.names(required_traits=[
                {'HW_CPU_X86_AVX2'}, {'HW_CPU_X86_SSE', 'HW_CPU_X86_SSE2'}]))
        self.assertEqual(['root1', 'child1', 'root2'], self.names(
            required_traits=[{'HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE'}]))
        self.assertEqual(['root1', 'loner'],
                         self.names(forbidden_traits={'HW_CPU_X86_SSE'}))
        self.assertEqual(['root1'], self.names(
            required_traits=[{'HW_CPU_X86_AVX2'}],
            forbidden_traits={'HW_CPU_X86_SSE'}))
        self.assertRaises(exception.TraitNotFound, self.names,
                          forbidden_traits={'CUSTOM_NOPE'})

    def test_resources_count_usage(self):
        self.assertEqual(['root1', 'child1', 'root2'],
                         self.names(resources={'VCPU': 4}))
        pf.allocate(self.context, self.child1.id, 'VCPU', 1)
        pf.allocate(self.context, self.root2.id, 'VCPU', 6, 6)
        # child1 has 3 left, root2 4: exactly enough still fits.
        self.assertEqual(['root1', 'root2'],
                         self.names(resources={'VCPU': 4}))
        self.assertEqual(['root1'],
                         self.names(resources={'VCPU': 5}))
        self.assertEqual(['root1'], self.names(
            resources={'VCPU': 1, 'MEMORY_MB': 512}))
        self.assertRaises(exception.ResourceClassNotFound, self.names,
                          resources={'CUSTOM_NOPE': 1})

    def test_resources_honour_units_reserved_and_ratio(self):
        provider = self.make('shaped')
        provider.add_inventory(objects.Inventory(
            resource_class='DISK_GB', total=100, reserved=20, min_unit=10,
            max_unit=60, step_size=10, allocation_ratio=1.5))
        pf.allocate(self.context, provider.id, 'DISK_GB', 50)

        def fits(amount):
            return self.names(resources={'DISK_GB': amount}) == ['shaped']

        # capacity (100 - 20) * 1.5 = 120, 50 used: 70 free, but at most
        # 60 at once, at least 10, in steps of 10.
        self.assertTrue(fits(60))
        self.assertTrue(fits(10))
        self.assertFalse(fits(70))
        self.assertFalse(fits(5))
        self.assertFalse(fits(25))
        pf.allocate(self.context, provider.id, 'DISK_GB', 20)
        self.assertTrue(fits(50))
        self.assertFalse(fits(60))

    def test_filters_combine(self):
        self.assertEqual(['root1'], self.names(
            member_of=[[AGG1]], required_traits=[{'HW_CPU_X86_AVX2'}],
            resources={'VCPU': 2}, in_tree=self.child1.uuid))
        self.assertEqual([], self.names(
            member_of=[[AGG1]], required_traits=[{'HW_CPU_X86_SSE'}],
            resources={'VCPU': 2}, in_tree=self.root1.uuid))

    def test_unknown_filter_is_refused(self):
        self.assertRaises(exception.Invalid, self.names, colour='blue')
