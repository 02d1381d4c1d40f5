"""NUMA request parsing and fitting on cells (no DB)."""

from resobj.compute import numa
from resobj import exception
from resobj import objects
from resobj.tests import base as test_base


def flavor(vcpus=4, memory_mb=4096, **specs):
    objects.register_all()
    return objects.Flavor(flavorid='f', name='f', vcpus=vcpus,
                          memory_mb=memory_mb, root_gb=1, ephemeral_gb=0,
                          swap=0, extra_specs=specs)


def room(*cells):
    return {n: {'VCPU': v, 'MEMORY_MB': m} for n, (v, m) in enumerate(cells)}


class TestRequests(test_base.TestCase):

    def test_defaults_are_one_cell_floating(self):
        request = numa.request_from_flavor(flavor())
        self.assertEqual((4, 4096, 1, False), (
            request.vcpus, request.memory_mb, request.nodes, request.pinned))
        self.assertFalse(numa.asks_for_numa(flavor()))

    def test_specs(self):
        request = numa.request_from_flavor(flavor(**{
            'hw:numa_nodes': '2', 'hw:cpu_policy': 'dedicated'}))
        self.assertEqual((2, True), (request.nodes, request.pinned))
        self.assertEqual([{'VCPU': 2, 'MEMORY_MB': 2048}] * 2,
                         request.parts())
        self.assertTrue(numa.asks_for_numa(flavor(
            **{'hw:cpu_policy': 'dedicated'})))

    def test_bad_specs_name_the_key(self):
        for specs in ({'hw:numa_nodes': 'x'}, {'hw:numa_nodes': '3'},
                      {'hw:numa_nodes': '-1'}, {'hw:cpu_policy': 'mixed'}):
            exc = self.assertRaises(exception.InvalidFlavorExtraSpec,
                                    numa.request_from_flavor,
                                    flavor(**specs))
            self.assertIn(list(specs)[0], str(exc))

    def test_pci_aliases(self):
        self.assertEqual([('a', 2), ('b', 1)], numa.pci_requests_from_flavor(
            flavor(**{'pci_passthrough:alias': 'a:2, b:1'})))
        self.assertEqual([('a', 1)], numa.pci_requests_from_flavor(
            flavor(**{'pci_passthrough:alias': 'a'})))
        self.assertEqual([], numa.pci_requests_from_flavor(flavor()))
        for bad in ('a:0', ':1', 'a:x', 'a:1,'):
            self.assertRaises(exception.InvalidFlavorExtraSpec,
                              numa.pci_requests_from_flavor,
                              flavor(**{'pci_passthrough:alias': bad}))


class TestFit(test_base.TestCase):

    def test_first_cell_in_id_order_that_fits(self):
        request = numa.Request(2, 2048)
        self.assertEqual({0: {'VCPU': 2, 'MEMORY_MB': 2048}},
                         numa.fit(room((4, 4096), (4, 4096)), request))
        self.assertEqual({1: {'VCPU': 2, 'MEMORY_MB': 2048}},
                         numa.fit(room((4, 1024), (4, 4096)), request))
        self.assertIsNone(numa.fit(room((1, 4096), (4, 1024)), request))

    def test_split_requests_need_that_many_cells(self):
        request = numa.Request(4, 4096, nodes=2)
        self.assertEqual({0: {'VCPU': 2, 'MEMORY_MB': 2048},
                          2: {'VCPU': 2, 'MEMORY_MB': 2048}},
                         numa.fit(room((4, 4096), (4, 0), (4, 4096)),
                                  request))
        self.assertIsNone(numa.fit(room((4, 4096)), request))

    def test_pinned_requests_need_free_cpus(self):
        request = numa.Request(2, 512, pinned=True)
        cells = room((8, 4096), (8, 4096))
        self.assertEqual([1], list(numa.fit(cells, request,
                                            {0: [3], 1: [4, 5]})))
        self.assertIsNone(numa.fit(cells, request, {0: [], 1: [7]}))

    def test_cell_inventories_share_reserved_in_order(self):
        objects.register_all()
        topology = objects.NUMATopology(cells=[
            objects.NUMACell(id=1, cpuset={4, 5}, memory_mb=1024),
            objects.NUMACell(id=0, cpuset={0, 1}, memory_mb=1024)])
        node = objects.ComputeNode(cpu_allocation_ratio=2.0,
                                   ram_allocation_ratio=1.0)
        out = numa.cell_inventories(topology, node,
                                    {'vcpus': 3, 'memory_mb': 100})
        self.assertEqual((2, 100, 2.0), (
            out[0]['VCPU']['reserved'], out[0]['MEMORY_MB']['reserved'],
            out[0]['VCPU']['allocation_ratio']))
        self.assertEqual((1, 0), (out[1]['VCPU']['reserved'],
                                  out[1]['MEMORY_MB']['reserved']))
        self.assertEqual({0: {'VCPU': 0, 'MEMORY_MB': 924},
                          1: {'VCPU': 2, 'MEMORY_MB': 1000}},
                         numa.free(out, {0: {'VCPU': 0}, 1: {
                             'MEMORY_MB': 24}}))

    def test_cell_providers_are_stable_per_node_and_cell(self):
        node = '5b0c4d1e-8f2a-4c3b-9d7e-1a2b3c4d5e6f'
        self.assertEqual(numa.cell_provider_uuid(node, 0),
                         numa.cell_provider_uuid(node, 0))
        self.assertNotEqual(numa.cell_provider_uuid(node, 0),
                            numa.cell_provider_uuid(node, 1))
        self.assertEqual('n1_NUMA3', numa.cell_provider_name('n1', 3))
