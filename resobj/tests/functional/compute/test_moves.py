"""Resize, migration and rebuild claims, confirm and revert."""

from resobj.compute import exception
from resobj.compute import manager as compute_manager
from resobj import objects
from resobj.tests.functional.compute import base


class TestMoves(base.TrackerTestCase):

    def setUp(self):
        super().setUp()
        self.src = self.tracker('src', vcpus=8, memory_mb=8192,
                                local_gb=200)
        self.dst = self.tracker('dst', vcpus=8, memory_mb=8192,
                                local_gb=200)
        self.manager = compute_manager.ComputeManager({
            ('src', 'src'): self.src, ('dst', 'dst'): self.dst})
        self.small = self.flavor('small', vcpus=2, memory_mb=2048,
                                 root_gb=20)
        self.large = self.flavor('large', vcpus=4, memory_mb=4096,
                                 root_gb=40, swap=100)
        self.inst = self.instance(self.small)
        self.manager.build_instance(self.context, self.inst, 'src', 'src')

    def _small(self):
        return {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}

    def _large(self):
        return {'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 41}

    def test_resize_claim_creates_migration_and_moves_allocations(self):
        claim = self.dst.resize_claim(self.context, self.inst, self.large)
        migration = objects.Migration.get_by_uuid(self.context,
                                                  claim.migration.uuid)
        self.assertEqual(
            ('src', 'src', 'dst', 'dst', 'pre-migrating', 'resize',
             self.small.id, self.large.id),
            (migration.source_compute, migration.source_node,
             migration.dest_compute, migration.dest_node, migration.status,
             migration.migration_type, migration.old_instance_type_id,
             migration.new_instance_type_id))
        self.assertEqual({self.dst.provider: self._large()},
                         self.allocations(self.inst.uuid))
        self.assertEqual({self.src.provider: self._small()},
                         self.allocations(migration.uuid))
        stored = self.reload(self.inst)
        self.assertEqual(('large', 'small'), (stored.new_flavor.name,
                                              stored.old_flavor.name))

    def test_failed_resize_claim_changes_nothing(self):
        huge = self.flavor('huge', vcpus=64, memory_mb=1024, root_gb=1)
        self.assertRaises(exception.ComputeResourcesUnavailable,
                          self.dst.resize_claim, self.context, self.inst,
                          huge)
        self.assertEqual([], list(objects.MigrationList.get_by_instance_uuid(
            self.context, self.inst.uuid)))
        self.assertEqual({self.src.provider: self._small()},
                         self.allocations(self.inst.uuid))
        self.assertIsNone(self.reload(self.inst).new_flavor)

    def test_confirm_frees_the_source(self):
        migration = self.manager.resize_instance(
            self.context, self.inst, 'dst', 'dst', self.large)
        self.assertEqual('finished', migration.status)
        self.manager.confirm_resize(self.context, self.inst, migration)
        self.assertEqual({}, self.allocations(migration.uuid))
        self.assertEqual({}, self.usages(self.src.provider))
        self.assertEqual(self._large(), self.usages(self.dst.provider))
        self.assertEqual('confirmed', objects.Migration.get_by_uuid(
            self.context, migration.uuid).status)

    def test_revert_returns_to_the_source(self):
        migration = self.manager.resize_instance(
            self.context, self.inst, 'dst', 'dst', self.large)
        self.manager.revert_resize(self.context, self.inst, migration)
        self.assertEqual({self.src.provider: self._small()},
                         self.allocations(self.inst.uuid))
        self.assertEqual({}, self.allocations(migration.uuid))
        self.assertEqual({}, self.usages(self.dst.provider))
        stored = self.reload(self.inst)
        self.assertEqual(('src', 'small'), (stored.host, stored.flavor.name))
        # The source counts the instance once, before any audit: the
        # migration consumer it held during the move is gone.
        self.assertEqual(self._small(),
                         self.src.accounting()[self.src.provider])

    def test_same_node_resize_holds_both_flavors(self):
        claim = self.src.resize_claim(self.context, self.inst, self.large)
        both = {rc: self._small().get(rc, 0) + self._large()[rc]
                for rc in self._large()}
        self.assertEqual(both, self.usages(self.src.provider))
        self.assertEqual(both, self.src.accounting()[self.src.provider])
        # The audit, from the database alone, agrees.
        self.src.update_available_resource(self.context)
        self.assertEqual(both, self.src.accounting()[self.src.provider])
        self.src.drop_move_claim(self.context, self.inst, claim.migration,
                                 prefix='new')
        self.assertEqual(self._small(), self.usages(self.src.provider))

    def test_rebuild_claim_is_an_evacuation_of_the_same_flavor(self):
        claim = self.dst.rebuild_claim(self.context, self.inst)
        self.assertEqual('evacuation', claim.migration.migration_type)
        self.assertEqual({self.dst.provider: self._small()},
                         self.allocations(self.inst.uuid))

    def test_audit_rebuilds_move_accounting_from_the_database(self):
        self.dst.resize_claim(self.context, self.inst, self.large)
        expected = {'src': self.src.accounting(),
                    'dst': self.dst.accounting()}
        # Fresh trackers know nothing but what the objects say.
        for name in ('src', 'dst'):
            fresh = self.tracker(name, vcpus=8, memory_mb=8192,
                                 local_gb=200)
            self.assertEqual(expected[name], fresh.accounting())
            self.assertEqual(
                expected[name].get(fresh.provider, {}),
                self.usages(fresh.provider))
