"""NUMA objects, instance PCI requests and their backports (no DB)."""

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.tests import base as test_base
from resobj.tests.samples import compute_node as cn_samples
from resobj.tests.samples import instance as instance_samples
from resobj.tests.samples import numa as numa_samples

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'


def backport(obj, version, **manifest):
    full = base.obj_tree_get_versions(obj.obj_name())
    full[obj.obj_name()] = version
    full.update(manifest)
    return obj.obj_to_primitive(target_version=version,
                                version_manifest=full)


class TestStoredForm(test_base.TestCase):

    def test_topologies_round_trip_through_plain_data(self):
        host = numa_samples.numa_topology()
        self.assertEqual(host.to_dict(), objects.NUMATopology.from_dict(
            host.to_dict()).to_dict())
        guest = numa_samples.instance_numa_topology()
        self.assertEqual(
            guest.to_dict(),
            objects.InstanceNUMATopology.from_dict(guest.to_dict()).to_dict())
        self.assertIsNone(objects.NUMATopology.from_dict(None))

    def test_new_cells_have_no_pins_and_no_usage(self):
        cell = objects.NUMACell(id=0, cpuset={3, 1, 2}, memory_mb=1024)
        self.assertEqual({'id': 0, 'cpuset': [1, 2, 3], 'memory_mb': 1024,
                          'pinned_cpus': [], 'memory_usage': 0},
                         cell.to_dict())
        self.assertFalse(objects.InstanceNUMACell(
            id=0, cpuset={0}, memory_mb=1).pinned)

    def test_set_primitives_are_sorted(self):
        cell = objects.NUMACell(id=0, cpuset={9, -3, 4, 100},
                                memory_mb=1)
        self.assertEqual([-3, 4, 9, 100],
                         list(cell.obj_to_primitive()[DATA]['cpuset']))


class TestInstanceBackports(test_base.TestCase):

    def test_1_4_drops_an_unpinned_topology_and_the_pci_requests(self):
        instance = instance_samples.instance()
        data = backport(instance, '1.4')[DATA]
        self.assertNotIn('numa_topology', data)
        self.assertNotIn('pci_requests', data)
        data = backport(instance, '1.5')[DATA]
        self.assertEqual(['nic-fast'], [
            r[DATA]['alias_name'] for r in data['pci_requests']])
        self.assertEqual(1, len(data['numa_topology'][DATA]['cells']))

    def test_a_pinned_instance_is_refused_before_1_5(self):
        instance = instance_samples.instance()
        instance.numa_topology = numa_samples.instance_numa_topology(
            pinned=True)
        for version in ('1.4', '1.0'):
            exc = self.assertRaises(exception.ObjectBackportError,
                                    backport, instance, version)
            self.assertIn('pinned to host CPUs of NUMA cells [1]',
                          str(exc))
        self.assertEqual('1.5', backport(instance, '1.5')[VERSION])

    def test_no_topology_backports_to_every_version(self):
        instance = instance_samples.instance()
        instance.numa_topology = None
        instance.pci_requests = None
        for minor in range(5):
            self.assertNotIn('numa_topology', backport(
                instance, '1.%d' % minor)[DATA])

    def test_the_list_refuses_with_a_pinned_item(self):
        pinned = instance_samples.instance()
        pinned.numa_topology = numa_samples.instance_numa_topology(
            pinned=True)
        listed = objects.InstanceList(objects=[
            instance_samples.instance(), pinned])
        self.assertRaises(exception.ObjectBackportError, backport, listed,
                          '1.5')
        self.assertEqual('1.5', backport(listed, '1.6')[DATA]['objects'][
            1][VERSION])


class TestComputeNodeBackports(test_base.TestCase):

    def test_1_5_gets_the_node_flat(self):
        node = cn_samples.compute_node()
        data = backport(node, '1.5')[DATA]
        self.assertNotIn('numa_topology', data)
        self.assertEqual((64, 262144), (data['vcpus'], data['memory_mb']))
        self.assertEqual(2, len(backport(node, '1.6')[DATA][
            'numa_topology'][DATA]['cells']))

    def test_service_1_4_carries_the_node_at_1_5(self):
        service = objects.Service(
            id=1, uuid='2b0c4d1e-8f2a-4c3b-9d7e-1a2b3c4d5e6f', host='h',
            binary='resobj-compute', version=3,
            compute_node=cn_samples.compute_node())
        node = backport(service, '1.4')[DATA]['compute_node']
        self.assertEqual('1.5', node[VERSION])
        self.assertNotIn('numa_topology', node[DATA])
        node = backport(service, '1.5')[DATA]['compute_node']
        self.assertEqual('1.6', node[VERSION])
