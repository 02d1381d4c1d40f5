"""ComputeNode objects over a real database, on every backend."""

from oslo_serialization import jsonutils

from resobj.db.api import resource_class as rc_db
from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import compute_node as cn_obj
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import test_compute_node as db_helpers
from resobj.tests.functional import db_base

objects.register_all()


def new_node(context, **kw):
    values = dict(db_helpers.node_values(), **kw)
    node = objects.ComputeNode(context, **values)
    node.create()
    return node


class ComputeNodeTestCase(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        # As "resobj-manage db sync" does. Tests that create a compute
        # service at the current version open the inventory gate, and
        # nodes then write VCPU/MEMORY_MB/DISK_GB inventory.
        rc_db.ensure_sync(self.context)


class TestComputeNodeObject(ComputeNodeTestCase):

    def test_create_fills_uuid_and_ratio_defaults(self):
        node = new_node(self.context)
        self.assertEqual(36, len(node.uuid))
        self.assertEqual((4.0, 1.0, 1.0), (node.cpu_allocation_ratio,
                                           node.ram_allocation_ratio,
                                           node.disk_allocation_ratio))
        self.assertEqual(set(), node.obj_what_changed())

    def test_configured_ratios_are_the_defaults(self):
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(cpu_allocation_ratio=2.0,
                    initial_ram_allocation_ratio=1.25, group='compute')
        self.addCleanup(cn_obj.set_allocation_ratio_defaults,
                        cn_obj._ratio_defaults)
        objects.configure(conf.conf)
        node = new_node(self.context)
        self.assertEqual((2.0, 1.25, 1.0), (node.cpu_allocation_ratio,
                                            node.ram_allocation_ratio,
                                            node.disk_allocation_ratio))

    def test_lookups_and_lists(self):
        node = new_node(self.context)
        new_node(self.context, hypervisor_hostname='node2')
        new_node(self.context, host='host2')
        for found in (
                objects.ComputeNode.get_by_id(self.context, node.id),
                objects.ComputeNode.get_by_uuid(self.context, node.uuid),
                objects.ComputeNode.get_by_host_and_nodename(
                    self.context, 'host1', 'node1')):
            self.assertEqual(node.obj_to_primitive(),
                             found.obj_to_primitive())
        self.assertEqual(3, len(objects.ComputeNodeList.get_all(
            self.context)))
        self.assertEqual(['node1', 'node2'], [
            n.hypervisor_hostname for n in
            objects.ComputeNodeList.get_all_by_host(self.context, 'host1')])

    def test_pools_stats_and_host_ip_round_trip(self):
        pools = objects.PciDevicePoolList(objects=[objects.PciDevicePool(
            vendor_id='8086', product_id='154d', numa_node=1,
            tags={'physical_network': 'physnet1'}, count=4)])
        node = new_node(self.context, pci_device_pools=pools,
                        stats={'num_instances': '3'}, host_ip='192.0.2.7')
        again = objects.ComputeNode.get_by_id(self.context, node.id)
        self.assertEqual(set(), again.obj_what_changed())
        pools.obj_reset_changes(recursive=True)
        self.assertEqual(pools.obj_to_primitive(),
                         again.pci_device_pools.obj_to_primitive())
        self.assertEqual({'num_instances': '3'}, again.stats)
        self.assertEqual('192.0.2.7', str(again.host_ip))

    def test_save_writes_changes_only(self):
        node = new_node(self.context)
        other = objects.ComputeNode.get_by_id(self.context, node.id)
        other.vcpus_used = 5
        other.save()
        node.memory_mb_used = 2048
        node.save()
        fresh = objects.ComputeNode.get_by_id(self.context, node.id)
        self.assertEqual((5, 2048), (fresh.vcpus_used, fresh.memory_mb_used))

    def test_destroy(self):
        node = new_node(self.context)
        node.destroy()
        self.assertTrue(node.deleted)
        self.assertIsNotNone(node.deleted_at)
        self.assertRaises(exception.ComputeNodeNotFound,
                          objects.ComputeNode.get_by_id, self.context,
                          node.id)

    def test_legacy_row_is_completed_on_read(self):
        node_id = db_helpers.insert_legacy_row(
            self.context, cpu_allocation_ratio=0.0,
            pci_stats=jsonutils.dumps([{'vendor_id': '8086',
                                        'product_id': '1520', 'count': 2,
                                        'physical_network': 'net1'}]))
        node = objects.ComputeNode.get_by_id(self.context, node_id)
        self.assertEqual(36, len(node.uuid))
        self.assertEqual(4.0, node.cpu_allocation_ratio)
        self.assertEqual(set(), node.obj_what_changed())
        [pool] = node.pci_device_pools
        self.assertEqual(('8086', '1520', 2, {'physical_network': 'net1'}),
                         (pool.vendor_id, pool.product_id, pool.count,
                          pool.tags))
        # The uuid was written back, so every reader sees the same one.
        self.assertEqual(node.uuid, objects.ComputeNode.get_by_id(
            self.context, node_id).uuid)

    def test_backport_before_1_2_looks_up_the_service_id(self):
        service = objects.Service(self.context, host='host1',
                                  binary=cn_obj.COMPUTE_BINARY)
        service.create()
        node = new_node(self.context, service_id=None)
        lonely = new_node(self.context, host='nohost', service_id=None)
        for obj, expected in ((node, service.id), (lonely, -1)):
            manifest = base.obj_tree_get_versions('ComputeNode')
            manifest['ComputeNode'] = '1.1'
            data = obj.obj_to_primitive(
                target_version='1.1',
                version_manifest=manifest)['resobj_object.data']
            self.assertEqual(expected, data['service_id'])


class TestServiceComputeNode(ComputeNodeTestCase):

    def _service(self, binary=cn_obj.COMPUTE_BINARY, host='host1'):
        service = objects.Service(self.context, host=host, binary=binary)
        service.create()
        return service

    def test_compute_node_is_lazy_loaded(self):
        self._service()
        node = new_node(self.context)
        new_node(self.context, hypervisor_hostname='node2')
        service = objects.Service.get_by_compute_host(self.context, 'host1')
        self.assertFalse(service.obj_attr_is_set('compute_node'))
        self.assertEqual(node.id, service.compute_node.id)
        self.assertEqual(set(), service.obj_what_changed())

    def test_deleting_a_compute_service_node(self):
        self._service()
        node = new_node(self.context)
        service = objects.Service.get_by_compute_host(self.context, 'host1')
        service.compute_node.destroy()
        self.assertRaises(exception.ComputeNodeNotFound,
                          objects.ComputeNode.get_by_id, self.context,
                          node.id)

    def test_service_without_node(self):
        self._service()
        service = objects.Service.get_by_compute_host(self.context, 'host1')
        exc = self.assertRaises(exception.ComputeNodeNotFound, getattr,
                                service, 'compute_node')
        self.assertIn('host1', str(exc))

    def test_non_compute_service_has_no_node(self):
        service = self._service(binary='resobj-api')
        exc = self.assertRaises(exception.ObjectActionError, getattr,
                                service, 'compute_node')
        self.assertIn('not a compute service', str(exc))

    def test_saving_a_service_never_writes_its_node(self):
        self._service()
        node = new_node(self.context)
        service = objects.Service.get_by_compute_host(self.context, 'host1')
        service.compute_node.vcpus_used = 9
        service.report_count = 1
        service.save()
        self.assertEqual(1, objects.Service.get_by_compute_host(
            self.context, 'host1').report_count)
        self.assertEqual(0, objects.ComputeNode.get_by_id(
            self.context, node.id).vcpus_used)
