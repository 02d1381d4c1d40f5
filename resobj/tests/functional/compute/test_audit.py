"""The periodic audit: usage recomputed, placement made to agree."""

from oslo_utils import uuidutils

from resobj.compute import exception
from resobj.compute import fake_driver
from resobj.compute import tracker as rt
from resobj.db.api import usage as usage_db
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.objects import service as service_obj
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.compute import base


class TestAudit(base.TrackerTestCase):

    def test_stale_allocations_are_deleted(self):
        tracker = self.tracker()
        kept = self.instance()
        tracker.instance_claim(self.context, kept)
        # A consumer nothing tracks: e.g. an instance deleted while its
        # compute host was down ("local delete").
        ghost = uuidutils.generate_uuid()
        self.client.put_allocations(ghost, {tracker.provider: {'VCPU': 1}},
                                    'p', 'u')
        tracker.update_available_resource(self.context)
        self.assertEqual({}, self.allocations(ghost))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.usages(tracker.provider))

    def test_differing_allocations_are_corrected(self):
        tracker = self.tracker(local_gb=5000)
        inst = self.instance(self.flavor(swap=2048))
        tracker.instance_claim(self.context, inst)
        # Written by something with nova Newton's swap bug (MB as GB).
        self.client.put_allocations(
            inst.uuid, {tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                           'DISK_GB': 20 + 2048}},
            base.PROJECT, base.USER)
        tracker.update_available_resource(self.context)
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 22}},
                         self.allocations(inst.uuid))

    def test_deleted_instances_lose_their_allocations(self):
        tracker = self.tracker()
        inst = self.instance()
        tracker.instance_claim(self.context, inst)
        inst.destroy()
        tracker.update_available_resource(self.context)
        self.assertEqual({}, self.allocations(inst.uuid))
        self.assertEqual({}, tracker.accounting())

    def test_orphans_charge_memory_to_the_node_only(self):
        tracker = self.tracker(memory_mb=4096)
        tracker.driver.spawn(uuidutils.generate_uuid(), 1024)
        tracker.update_available_resource(self.context)
        # The node's usage has it; placement has no consumer to hold it.
        self.assertEqual({'MEMORY_MB': 1024}, tracker.usage.totals())
        self.assertEqual({}, self.usages(tracker.provider))
        big = self.instance(self.flavor('big', memory_mb=3584, vcpus=1,
                                        root_gb=1))
        exc = self.assertRaises(exception.ComputeResourcesUnavailable,
                                tracker.instance_claim, self.context, big)
        self.assertEqual(512, exc.shortages[0]['short'])

    def test_incoming_and_outgoing_migrations_are_counted(self):
        src = self.tracker('src')
        dst = self.tracker('dst')
        inst = self.instance()
        src.instance_claim(self.context, inst)
        large = self.flavor('large', vcpus=4, memory_mb=4096, root_gb=40)
        claim = dst.resize_claim(self.context, inst, large)
        # Drift placement on both sides, then audit.
        self.client.delete_allocations(inst.uuid)
        self.client.delete_allocations(claim.migration.uuid)
        src.update_available_resource(self.context)
        dst.update_available_resource(self.context)
        self.assertEqual({src.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                         'DISK_GB': 20}},
                         self.allocations(claim.migration.uuid))
        self.assertEqual({dst.provider: {'VCPU': 4, 'MEMORY_MB': 4096,
                                         'DISK_GB': 40}},
                         self.allocations(inst.uuid))


class TestServiceReports(base.TrackerTestCase):
    """The audit registers the host's compute service, then heartbeats it.

    No service row is made for the tracker here: it makes its own.
    """

    def start(self, host='host1'):
        tracker = rt.ResourceTracker(host, host, fake_driver.FakeDriver(host),
                                     self.client)
        tracker.update_available_resource(self.context)
        return tracker

    def service(self, host='host1'):
        return objects.Service.get_by_compute_host(self.context, host)

    def test_first_audit_registers_the_service(self):
        tracker = self.start()
        service = self.service()
        self.assertEqual(service_obj.SERVICE_VERSION, service.version)
        self.assertIsNotNone(service.last_seen_up)
        self.assertEqual(service.id, objects.ComputeNode.get_by_id(
            self.context, tracker.node.id).service_id)

    def test_each_audit_reports_it_alive(self):
        tracker = self.start()
        first = self.service().last_seen_up
        tracker.update_available_resource(self.context)
        tracker.update_available_resource(self.context)
        service = self.service()
        self.assertEqual(2, service.report_count)
        self.assertGreaterEqual(service.last_seen_up, first)

    def test_an_older_row_is_updated_to_this_codes_version(self):
        old = objects.Service(self.context, host='host1',
                              binary=cn_obj.COMPUTE_BINARY, version=1)
        old.create()
        self.start()
        self.assertEqual((old.id, service_obj.SERVICE_VERSION),
                         (self.service().id, self.service().version))

    def test_a_service_deleted_while_running_registers_again(self):
        tracker = self.start()
        self.service().destroy()
        tracker.update_available_resource(self.context)
        service = self.service()
        self.assertEqual(service.id, tracker.service.id)
        self.assertEqual(service.id, objects.ComputeNode.get_by_id(
            self.context, tracker.node.id).service_id)


class TestSharedStorage(base.TrackerTestCase):

    def test_one_pool_shared_by_three_nodes_is_counted_once(self):
        pool, aggregate = self.shared_pool(disk_gb=1000)
        trackers = []
        for name in ('ceph1', 'ceph2', 'ceph3'):
            trackers.append(self.tracker(
                name, vcpus=16, memory_mb=32768, local_gb=0,
                shared_storage=True,
                uuid=self.shared_node_uuid(name, aggregate)))
        flavor = self.flavor('disk', vcpus=1, memory_mb=512, root_gb=100,
                             swap=1)
        for tracker in trackers:
            self.assertEqual(pool.uuid, tracker.sharing_provider)
            self.assertNotIn('DISK_GB', self.client.get_inventory(
                tracker.provider)[1])
            inst = self.instance(flavor)
            tracker.instance_claim(self.context, inst)
            self.assertEqual(
                {tracker.provider: {'VCPU': 1, 'MEMORY_MB': 512},
                 pool.uuid: {'DISK_GB': 101}},
                self.allocations(inst.uuid))
        self.assertEqual({'DISK_GB': 303}, self.usages(pool.uuid))
        report = usage_db.capacity_report(self.context)
        disk = [t for t in report['totals']
                if t['resource_class'] == 'DISK_GB'][0]
        self.assertEqual((1000, 303, 697),
                         (disk['capacity'], disk['used'], disk['free']))
        # Audits leave the pool's allocations alone and agree.
        for tracker in trackers:
            tracker.update_available_resource(self.context)
        self.assertEqual({'DISK_GB': 303}, self.usages(pool.uuid))

    def test_pool_full_claim_names_the_pool(self):
        pool, aggregate = self.shared_pool(disk_gb=150)
        tracker = self.tracker(
            'ceph1', local_gb=10, shared_storage=True,
            uuid=self.shared_node_uuid('ceph1', aggregate))
        flavor = self.flavor('disk', vcpus=1, memory_mb=512, root_gb=100)
        tracker.instance_claim(self.context, self.instance(flavor))
        inst = self.instance(flavor)
        exc = self.assertRaises(exception.ComputeResourcesUnavailable,
                                tracker.instance_claim, self.context, inst)
        self.assertEqual([{'resource_class': 'DISK_GB',
                           'provider': pool.uuid, 'requested': 100,
                           'free': 50, 'short': 50}], exc.shortages)
        self.assertEqual({}, self.allocations(inst.uuid))
        self.assertIsNone(self.reload(inst).host)

    def test_boot_from_volume_on_shared_node_uses_local_disk(self):
        pool, aggregate = self.shared_pool()
        tracker = self.tracker(
            'ceph1', local_gb=10, shared_storage=True,
            uuid=self.shared_node_uuid('ceph1', aggregate))
        inst = self.instance(self.flavor('eph', ephemeral_gb=4, swap=512),
                             booted_from_volume=True)
        tracker.instance_claim(self.context, inst)
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 5}},
                         self.allocations(inst.uuid))
        self.assertEqual({}, self.usages(pool.uuid))

    def test_shared_node_without_pool_is_refused(self):
        self.assertRaises(exception.SharingProviderNotFound, self.tracker,
                          'lonely', shared_storage=True)


class TestAuditStatementCount(base.TrackerTestCase):
    """The audit's SQL does not grow with the node's instances."""

    def _populate(self, tracker, count, moves):
        flavors = [self.flavor('f%d' % i, vcpus=1, memory_mb=64, root_gb=1,
                               swap=i * 100) for i in range(3)]
        instances = []
        for i in range(count):
            inst = self.instance(flavors[i % 3], host=tracker.host,
                                 node=tracker.nodename, vm_state='active')
            instances.append(inst)
        for inst in instances[:moves]:
            objects.Migration(
                self.context, instance_uuid=inst.uuid,
                source_compute=tracker.host, source_node=tracker.nodename,
                dest_compute=tracker.host, dest_node=tracker.nodename,
                dest_host=tracker.host, old_instance_type_id=flavors[0].id,
                new_instance_type_id=flavors[1].id, status='finished',
                migration_type='resize').create()
            inst.old_flavor, inst.new_flavor = flavors[0], inst.flavor
            inst.save()

    def _count(self, instances, migrations):
        tracker = self.tracker('h%d' % instances, vcpus=1024,
                               memory_mb=1 << 20, local_gb=1 << 16)
        self._populate(tracker, instances, migrations)
        # The first audit writes the allocations; the count is of an
        # audit in steady state, and of one that must write them all.
        tracker.update_available_resource(self.context)
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            tracker.update_available_resource(self.context)
        self.assertEqual(instances + migrations, len(tracker.tracked))
        return counter.count

    def test_statements_independent_of_instance_count(self):
        small = self._count(50, 5)
        large = self._count(500, 50)
        self.assertEqual(small, large)
        self.assertLess(large, 40)
