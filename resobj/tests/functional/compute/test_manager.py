"""Compute-manager operations on objects: service deletion, live migration."""

from resobj.compute import exception
from resobj.compute import manager as compute_manager
from resobj import exception as resobj_exc
from resobj import objects
from resobj.tests.functional.compute import base


class TestDeleteComputeService(base.TrackerTestCase):

    def test_delete_removes_node_and_provider_when_empty(self):
        tracker = self.tracker('gone')
        inst = self.instance()
        tracker.instance_claim(self.context, inst)
        tracker.remove_instance(self.context, inst)
        compute_manager.delete_compute_service(self.context, 'gone')
        self.assertRaises(resobj_exc.ComputeNodeNotFound,
                          objects.ComputeNode.get_by_uuid, self.context,
                          tracker.provider)
        self.assertRaises(resobj_exc.ResourceProviderNotFound,
                          objects.ResourceProvider.get_by_uuid,
                          self.context, tracker.provider)
        self.assertRaises(resobj_exc.ServiceNotFound,
                          objects.Service.get_by_compute_host, self.context,
                          'gone')

    def test_delete_refused_while_allocations_remain(self):
        tracker = self.tracker('busy')
        inst = self.instance()
        tracker.instance_claim(self.context, inst)
        exc = self.assertRaises(
            resobj_exc.ComputeNodeInUse,
            compute_manager.delete_compute_service, self.context, 'busy')
        self.assertEqual(1, exc.kwargs['consumers'])
        self.assertEqual(inst.uuid, exc.kwargs['example'])
        # Nothing changed: node, provider, service and allocations stay.
        objects.ComputeNode.get_by_uuid(self.context, tracker.provider)
        objects.ResourceProvider.get_by_uuid(self.context, tracker.provider)
        objects.Service.get_by_compute_host(self.context, 'busy')
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 20}},
                         self.allocations(inst.uuid))


class TestLiveMigration(base.TrackerTestCase):

    def setUp(self):
        super().setUp()
        self.src = self.tracker('src', vcpus=4, memory_mb=8192)
        self.dst = self.tracker('dst', vcpus=1, memory_mb=8192)
        self.manager = compute_manager.ComputeManager({
            ('src', 'src'): self.src, ('dst', 'dst'): self.dst})
        self.inst = self.instance(self.flavor(vcpus=1))
        self.manager.build_instance(self.context, self.inst, 'src', 'src')

    def test_checks_refuse_own_node_and_full_destination(self):
        self.assertRaises(
            exception.MigrationPreCheckError,
            self.manager.check_can_live_migrate_destination, self.context,
            self.inst, 'src', 'src')
        big = self.instance(self.flavor('big', vcpus=8))
        big.host, big.node = 'src', 'src'
        exc = self.assertRaises(
            exception.MigrationPreCheckError,
            self.manager.check_can_live_migrate_destination, self.context,
            big, 'dst', 'dst')
        self.assertIn('VCPU', str(exc))
        self.assertEqual([], list(objects.MigrationList.get_by_instance_uuid(
            self.context, big.uuid)))

    def test_source_check_sees_a_moved_instance(self):
        migration = self.manager.check_can_live_migrate_destination(
            self.context, self.inst, 'dst', 'dst')
        self.assertEqual(('live-migration', 'accepted'),
                         (migration.migration_type, migration.status))
        moved = self.reload(self.inst)
        moved.node = 'elsewhere'
        moved.save()
        self.assertRaises(exception.MigrationPreCheckError,
                          self.manager.check_can_live_migrate_source,
                          self.context, self.inst, migration)

    def test_live_migration_moves_instance_and_allocations(self):
        migration = self.manager.check_can_live_migrate_destination(
            self.context, self.inst, 'dst', 'dst')
        self.manager.live_migration(self.context, self.inst, migration)
        stored = self.reload(self.inst)
        self.assertEqual(('dst', 'dst', None),
                         (stored.host, stored.node, stored.task_state))
        self.assertEqual('completed', objects.Migration.get_by_uuid(
            self.context, migration.uuid).status)
        self.assertEqual({self.dst.provider: {'VCPU': 1, 'MEMORY_MB': 2048,
                                              'DISK_GB': 20}},
                         self.allocations(self.inst.uuid))
        self.assertEqual({}, self.allocations(migration.uuid))
        self.assertEqual({}, self.usages(self.src.provider))
        for tracker in (self.src, self.dst):
            before = tracker.accounting()
            tracker.update_available_resource(self.context)
            self.assertEqual(before, tracker.accounting())
