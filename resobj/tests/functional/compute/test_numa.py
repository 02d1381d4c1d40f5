"""NUMA cell providers, per-cell claims and PCI alias claims, every backend."""

from resobj.compute import exception
from resobj.compute import manager as compute_manager
from resobj.compute import numa
from resobj import exception as resobj_exc
from resobj import objects
from resobj.tests.functional.compute import base

PCI = [{'address': '0000:81:00.%d' % i, 'vendor_id': '8086',
        'product_id': '1520'} for i in range(3)]
ALIASES = {'nic': {'vendor_id': '8086', 'product_id': '1520'}}


class NUMATestCase(base.TrackerTestCase):

    def spec_flavor(self, name, vcpus=2, memory_mb=2048, root_gb=20,
                    **specs):
        flavor = objects.Flavor(
            self.context, flavorid=name, name=name, vcpus=vcpus,
            memory_mb=memory_mb, root_gb=root_gb, ephemeral_gb=0, swap=0,
            extra_specs={k.replace('__', ':'): v for k, v in specs.items()})
        flavor.create()
        self.flavors[name] = flavor
        return flavor

    def numa_tracker(self, host='numa1', **kw):
        kw.setdefault('vcpus', 8)
        kw.setdefault('memory_mb', 8192)
        kw.setdefault('local_gb', 200)
        kw.setdefault('numa_cells', 2)
        return self.tracker(host, **kw)

    def cell(self, tracker, cell_id):
        return numa.cell_provider_uuid(tracker.provider, cell_id)

    def node(self, tracker):
        return objects.ComputeNode.get_by_uuid(self.context,
                                               tracker.provider)

    def assert_matches_flavor(self, consumer, flavor, disk=True):
        """The consumer's allocations, summed, are the flavor's.

        Nothing lost, nothing counted twice.
        """
        totals = {}
        for amounts in self.allocations(consumer).values():
            for rc, n in amounts.items():
                totals[rc] = totals.get(rc, 0) + n
        want = {'VCPU': flavor.vcpus, 'MEMORY_MB': flavor.memory_mb}
        if disk:
            want['DISK_GB'] = flavor.root_gb
        self.assertEqual(want, totals)


class TestCellProviders(NUMATestCase):

    def test_each_cell_is_a_child_provider_with_its_inventory(self):
        tracker = self.numa_tracker()
        for cell_id in (0, 1):
            rp = objects.ResourceProvider.get_by_uuid(
                self.context, self.cell(tracker, cell_id))
            self.assertEqual('numa1_NUMA%d' % cell_id, rp.name)
            self.assertEqual(tracker.provider, rp.parent_provider_uuid)
            self.assertEqual(tracker.provider, rp.root_provider_uuid)
            _gen, inventory = self.client.get_inventory(rp.uuid)
            self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096},
                             {rc: inv['total']
                              for rc, inv in inventory.items()})
        _gen, root = self.client.get_inventory(tracker.provider)
        self.assertEqual({'DISK_GB'}, set(root))
        node = self.node(tracker)
        self.assertEqual([({0, 1, 2, 3}, 4096), ({4, 5, 6, 7}, 4096)],
                         [(c.cpuset, c.memory_mb)
                          for c in node.numa_topology.cells])
        # Legacy columns still say what the whole node has.
        self.assertEqual((8, 8192), (node.vcpus, node.memory_mb))

    def test_reserved_amounts_go_to_the_cells_in_order(self):
        tracker = self.numa_tracker(reserved={
            'reserved_vcpus': 5, 'reserved_memory_mb': 512})
        reserved = [
            {rc: inv['reserved'] for rc, inv in self.client.get_inventory(
                self.cell(tracker, cell_id))[1].items()}
            for cell_id in (0, 1)]
        self.assertEqual([{'VCPU': 4, 'MEMORY_MB': 512},
                          {'VCPU': 1, 'MEMORY_MB': 0}], reserved)

    def test_flat_host_has_no_cells(self):
        tracker = self.tracker('flat1')
        self.assertIsNone(self.node(tracker).numa_topology)
        self.assertEqual({'VCPU', 'MEMORY_MB', 'DISK_GB'},
                         set(self.client.get_inventory(
                             tracker.provider)[1]))


class TestCellClaims(NUMATestCase):

    def test_plain_flavor_takes_one_cell_floating(self):
        tracker = self.numa_tracker()
        inst = self.instance(self.flavor())
        tracker.instance_claim(self.context, inst)
        self.assertEqual({
            tracker.provider: {'DISK_GB': 20},
            self.cell(tracker, 0): {'VCPU': 2, 'MEMORY_MB': 2048}},
            self.allocations(inst.uuid))
        stored = self.reload(inst).numa_topology
        self.assertEqual([(0, {0, 1}, 2048, set())],
                         [(c.id, c.cpuset, c.memory_mb, c.pinned_cpus)
                          for c in stored.cells])
        node = self.node(tracker)
        self.assertEqual([2048, 0], [c.memory_usage
                                     for c in node.numa_topology.cells])
        self.assertEqual((2, 2048), (node.vcpus_used, node.memory_mb_used))

    def test_numa_nodes_split_the_flavor_over_cells(self):
        tracker = self.numa_tracker()
        flavor = self.spec_flavor('two', vcpus=4, memory_mb=4096,
                                  hw__numa_nodes='2')
        inst = self.instance(flavor)
        tracker.instance_claim(self.context, inst)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048},
                         self.allocations(inst.uuid)[self.cell(tracker, 1)])
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048},
                         self.allocations(inst.uuid)[self.cell(tracker, 0)])
        self.assertEqual([0, 1], [c.id for c in self.reload(
            inst).numa_topology.cells])
        self.assert_matches_flavor(inst.uuid, flavor)

    def test_a_full_cell_sends_the_next_claim_to_the_next_cell(self):
        tracker = self.numa_tracker(
            reserved={'reserved_memory_mb': 0})
        big = self.flavor('big', vcpus=2, memory_mb=3072)
        first, second = self.instance(big), self.instance(big)
        tracker.instance_claim(self.context, first)
        tracker.instance_claim(self.context, second)
        self.assertIn(self.cell(tracker, 0), self.allocations(first.uuid))
        self.assertIn(self.cell(tracker, 1), self.allocations(second.uuid))

    def test_a_request_larger_than_any_cell_is_refused(self):
        tracker = self.numa_tracker()
        # The node has 8192 MB, but no cell has 6144.
        inst = self.instance(self.flavor('wide', vcpus=2, memory_mb=6144))
        exc = self.assertRaises(exception.ComputeResourcesUnavailable,
                                tracker.instance_claim, self.context, inst)
        self.assertIn('NUMA cell', str(exc))
        self.assertEqual({}, self.allocations(inst.uuid))
        self.assertIsNone(self.reload(inst).host)

    def test_dedicated_cpus_are_pinned_and_never_shared(self):
        tracker = self.numa_tracker()
        pinned = self.spec_flavor('pinned', vcpus=4, memory_mb=1024,
                                  hw__cpu_policy='dedicated')
        first, second = self.instance(pinned), self.instance(pinned)
        tracker.instance_claim(self.context, first)
        tracker.instance_claim(self.context, second)
        self.assertEqual([{0, 1, 2, 3}], [
            c.pinned_cpus for c in self.reload(first).numa_topology.cells])
        self.assertEqual([{4, 5, 6, 7}], [
            c.pinned_cpus for c in self.reload(second).numa_topology.cells])
        self.assertEqual([{0, 1, 2, 3}, {4, 5, 6, 7}], [
            c.pinned_cpus for c in self.node(tracker).numa_topology.cells])
        # VCPU capacity is left (ratio 4.0), but no CPU is free to pin.
        third = self.instance(self.spec_flavor(
            'one-pinned', vcpus=1, memory_mb=256,
            hw__cpu_policy='dedicated'))
        self.assertRaises(exception.ComputeResourcesUnavailable,
                          tracker.instance_claim, self.context, third)
        self.assertEqual({}, self.allocations(third.uuid))

    def test_the_audit_recomputes_cells_and_pins_from_instances(self):
        tracker = self.numa_tracker()
        pinned = self.spec_flavor('pinned', vcpus=2, memory_mb=1024,
                                  hw__cpu_policy='dedicated')
        inst = self.instance(pinned)
        tracker.instance_claim(self.context, inst)
        before = self.node(tracker).numa_topology.to_dict()
        # A restarted service: a new tracker knows only the database.
        again = self.numa_tracker()
        self.assertEqual(before, self.node(again).numa_topology.to_dict())
        self.assertEqual({inst.uuid: {0: {0, 1}}}, again.cells.pins)
        self.assert_matches_flavor(inst.uuid, pinned)
        # Another pinned claim takes other CPUs.
        other = self.instance(pinned)
        again.instance_claim(self.context, other)
        self.assertEqual({2, 3}, self.reload(
            other).numa_topology.cells[0].pinned_cpus)

    def test_flat_host_refuses_a_numa_flavor(self):
        tracker = self.tracker('flat1')
        inst = self.instance(self.spec_flavor('two', vcpus=2,
                                              hw__numa_nodes='2'))
        self.assertRaises(exception.ComputeResourcesUnavailable,
                          tracker.instance_claim, self.context, inst)
        self.assertEqual({}, self.allocations(inst.uuid))

    def test_bad_numa_specs_are_invalid_input(self):
        tracker = self.numa_tracker()
        for name, specs in (('odd', {'hw__numa_nodes': '3'}),
                            ('zero', {'hw__numa_nodes': '0'}),
                            ('policy', {'hw__cpu_policy': 'isolate'})):
            inst = self.instance(self.spec_flavor(name, **specs))
            self.assertRaises(resobj_exc.InvalidFlavorExtraSpec,
                              tracker.instance_claim, self.context, inst)
            self.assertEqual({}, self.allocations(inst.uuid))


class TestPCIRequests(NUMATestCase):

    def pci_tracker(self, **kw):
        tracker = self.tracker('pci1', pci_devices=PCI, **kw)
        tracker.pci_aliases = dict(ALIASES)
        return tracker

    def test_alias_requests_claim_devices_and_are_recorded(self):
        tracker = self.pci_tracker()
        flavor = self.spec_flavor('nic2', pci_passthrough__alias='nic:2')
        inst = self.instance(flavor)
        tracker.instance_claim(self.context, inst)
        self.assertEqual(2, self.allocations(inst.uuid)[
            tracker.provider]['PCI_DEVICE'])
        owned = [d for d in objects.PciDeviceList.get_by_instance_uuid(
            self.context, inst.uuid)]
        self.assertEqual(2, len(owned))
        self.assertEqual([('nic', 2)], [
            (r.alias_name, r.count) for r in self.reload(inst).pci_requests])

    def test_too_many_devices_are_refused_naming_the_shortage(self):
        tracker = self.pci_tracker()
        inst = self.instance(self.spec_flavor(
            'nic4', pci_passthrough__alias='nic:4'))
        exc = self.assertRaises(exception.PciDeviceRequestFailed,
                                tracker.instance_claim, self.context, inst)
        self.assertIn('short', str(exc))
        self.assertEqual({}, self.allocations(inst.uuid))

    def test_unknown_alias_and_bad_counts_are_invalid_input(self):
        tracker = self.pci_tracker()
        for name, spec in (('gpu', 'gpu:1'), ('neg', 'nic:-1'),
                           ('word', 'nic:two')):
            inst = self.instance(self.spec_flavor(
                name, pci_passthrough__alias=spec))
            self.assertRaises(resobj_exc.InvalidFlavorExtraSpec,
                              tracker.instance_claim, self.context, inst)


class TestMovesBetweenNUMAAndFlat(NUMATestCase):

    def setUp(self):
        super().setUp()
        self.numa = self.numa_tracker('numa1')
        self.flat = self.tracker('flat1', vcpus=8, memory_mb=8192,
                                 local_gb=200)
        self.manager = compute_manager.ComputeManager({
            ('numa1', 'numa1'): self.numa, ('flat1', 'flat1'): self.flat})
        self.small = self.flavor('small')
        self.large = self.flavor('large', vcpus=4, memory_mb=4096,
                                 root_gb=20)

    def test_resize_from_numa_to_flat_and_confirm(self):
        inst = self.instance(self.small)
        self.manager.build_instance(self.context, inst, 'numa1', 'numa1')
        migration = self.manager.resize_instance(
            self.context, inst, 'flat1', 'flat1', self.large)
        self.assertEqual({self.flat.provider: {
            'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 20}},
            self.allocations(inst.uuid))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048},
                         self.allocations(migration.uuid)[
                             self.cell(self.numa, 0)])
        self.assertIsNone(self.reload(inst).numa_topology)
        self.assertEqual([], self.reload(inst).pci_requests)
        self.manager.confirm_resize(self.context, inst, migration)
        self.assertEqual({}, self.usages(self.cell(self.numa, 0)))
        self.assertEqual({}, self.usages(self.numa.provider))
        self.assert_matches_flavor(inst.uuid, self.large)

    def test_resize_from_flat_to_numa_and_revert(self):
        inst = self.instance(self.small)
        self.manager.build_instance(self.context, inst, 'flat1', 'flat1')
        migration = self.manager.resize_instance(
            self.context, inst, 'numa1', 'numa1', self.large)
        self.assertEqual({self.numa.provider: {'DISK_GB': 20},
                          self.cell(self.numa, 0): {
                              'VCPU': 4, 'MEMORY_MB': 4096}},
                         self.allocations(inst.uuid))
        self.assertEqual([0], [c.id for c in self.reload(
            inst).numa_topology.cells])
        self.manager.revert_resize(self.context, inst, migration)
        self.assertEqual({self.flat.provider: {
            'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}},
            self.allocations(inst.uuid))
        self.assertIsNone(self.reload(inst).numa_topology)
        self.assertEqual({}, self.usages(self.cell(self.numa, 0)))
        for tracker in (self.numa, self.flat):
            tracker.update_available_resource(self.context)
        self.assert_matches_flavor(inst.uuid, self.small)

    def test_audits_keep_every_allocation_equal_to_its_flavor(self):
        insts = []
        for _ in range(3):
            inst = self.instance(self.small)
            self.manager.build_instance(self.context, inst, 'numa1',
                                        'numa1')
            insts.append(inst)
        self.manager.resize_instance(self.context, insts[0], 'flat1',
                                     'flat1', self.large)
        for tracker in (self.numa, self.flat, self.numa):
            tracker.update_available_resource(self.context)
        self.assert_matches_flavor(insts[0].uuid, self.large)
        for inst in insts[1:]:
            self.assert_matches_flavor(inst.uuid, self.small)
        self.assertEqual(self.numa.accounting(), {
            rp: usage for rp, usage in (
                (rp, self.usages(rp)) for rp in
                [self.numa.provider] + sorted(self.numa.cells.providers))
            if usage})
