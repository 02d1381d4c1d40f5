"""ComputeNode backports and virt-driver updates (no database)."""

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.tests import base as test_base
from resobj.tests.samples import compute_node as samples

DATA = 'resobj_object.data'


def backport(node, version, **manifest):
    full = base.obj_tree_get_versions('ComputeNode')
    full['ComputeNode'] = version
    full.update(manifest)
    return node.obj_to_primitive(target_version=version,
                                 version_manifest=full)[DATA]


class TestBackports(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.node = samples.compute_node()

    def test_1_4_drops_reserved_amounts(self):
        data = backport(self.node, '1.4')
        for name in ('vcpus_reserved', 'memory_mb_reserved',
                     'local_gb_reserved'):
            self.assertNotIn(name, data)
        self.assertIn('uuid', data)
        self.assertEqual(2, backport(self.node, '1.5')['vcpus_reserved'])

    def test_1_3_drops_uuid(self):
        data = backport(self.node, '1.3')
        self.assertNotIn('uuid', data)
        self.assertEqual(4.0, data['cpu_allocation_ratio'])

    def test_1_2_drops_allocation_ratios(self):
        data = backport(self.node, '1.2')
        for name in ('cpu_allocation_ratio', 'ram_allocation_ratio',
                     'disk_allocation_ratio', 'uuid'):
            self.assertNotIn(name, data)
        self.assertIn('pci_device_pools', data)

    def test_1_1_keeps_a_set_service_id(self):
        self.assertEqual(7, backport(self.node, '1.1')['service_id'])

    def test_1_1_synthesises_a_missing_service_id(self):
        # Without a context there is nothing to look up: -1 means "no
        # service" to old peers, which required a value.
        self.node.service_id = None
        self.assertEqual(-1, backport(self.node, '1.1')['service_id'])
        self.assertIsNone(backport(self.node, '1.2')['service_id'])

    def test_1_0_drops_pci_device_pools(self):
        data = backport(self.node, '1.0')
        self.assertNotIn('pci_device_pools', data)
        self.assertEqual(64, data['vcpus'])

    def test_children_follow_the_manifest(self):
        data = backport(self.node, '1.4', PciDevicePoolList='1.0',
                        PciDevicePool='1.0')
        pools = data['pci_device_pools']
        self.assertEqual('1.0', pools['resobj_object.version'])
        for pool in pools[DATA]['objects']:
            self.assertEqual('1.0', pool['resobj_object.version'])
            self.assertNotIn('numa_node', pool[DATA])
        # The newest manifest keeps them.
        pool = backport(self.node, '1.4')['pci_device_pools'][DATA][
            'objects'][0]
        self.assertIn('numa_node', pool[DATA])

    def test_list_backports_its_items(self):
        node_list = objects.ComputeNodeList(objects=[self.node])
        manifest = base.obj_tree_get_versions('ComputeNodeList')
        manifest.update(ComputeNodeList='1.2', ComputeNode='1.2')
        primitive = node_list.obj_to_primitive(target_version='1.2',
                                               version_manifest=manifest)
        item = primitive[DATA]['objects'][0]
        self.assertEqual('1.2', item['resobj_object.version'])
        self.assertNotIn('cpu_allocation_ratio', item[DATA])


class TestUpdateFromVirtDriver(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.node = samples.compute_node()
        self.node.obj_reset_changes(recursive=True)

    def test_copies_known_keys_and_ignores_the_rest(self):
        self.node.update_from_virt_driver({
            'vcpus': 96, 'memory_mb_used': 1024, 'host_ip': '192.0.2.99',
            'numa_topology': '{}', 'uuid': self.node.uuid})
        self.assertEqual(96, self.node.vcpus)
        self.assertEqual(1024, self.node.memory_mb_used)
        self.assertEqual('192.0.2.99', str(self.node.host_ip))
        self.assertEqual({'vcpus', 'memory_mb_used', 'host_ip'},
                         self.node.obj_what_changed())

    def test_refuses_a_different_uuid(self):
        exc = self.assertRaises(
            exception.ComputeNodeUUIDMismatch,
            self.node.update_from_virt_driver,
            {'vcpus': 1, 'uuid': '00000000-0000-4000-8000-000000000000'})
        self.assertIn(self.node.uuid, str(exc))
        self.assertEqual(64, self.node.vcpus)

    def test_bad_value_changes_nothing(self):
        self.assertRaises(ValueError, self.node.update_from_virt_driver,
                          {'vcpus': 80, 'memory_mb': 'lots'})
        self.assertEqual(64, self.node.vcpus)
        self.assertEqual(set(), self.node.obj_what_changed())

    def test_sets_uuid_on_a_new_node(self):
        node = objects.ComputeNode()
        node.update_from_virt_driver(
            {'uuid': '00000000-0000-4000-8000-000000000000', 'vcpus': 2})
        self.assertEqual('00000000-0000-4000-8000-000000000000', node.uuid)
