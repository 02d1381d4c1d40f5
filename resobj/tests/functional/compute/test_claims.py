"""Claims through the tracker, on every backend, with the payload rules."""

import fixtures

from resobj.compute import exception
from resobj.compute import fake_driver
from resobj.compute import tracker as rt
from resobj import objects
from resobj.tests.functional.compute import base

PCI = [{'address': '0000:81:00.%d' % i, 'vendor_id': '8086',
        'product_id': '1520'} for i in range(2)] + [
    {'address': '0000:82:00.1', 'vendor_id': '8086', 'product_id': '1521',
     'dev_type': 'type-VF'}]


class TestInstanceClaim(base.TrackerTestCase):

    def test_claims_read_placements_inventory_only_at_audits(self):
        tracker = self.tracker()
        reads = self.useFixture(fixtures.MockPatchObject(
            self.client, 'get_inventory',
            wraps=self.client.get_inventory)).mock
        tracker.instance_claim(self.context, self.instance())
        tracker.instance_claim(self.context, self.instance())
        self.assertEqual(0, reads.call_count)
        tracker.update_available_resource(self.context)
        self.assertEqual(1, reads.call_count)
        self.assertEqual(4, self.usages(tracker.provider)['VCPU'])

    def test_claim_allocates_the_payload_and_sets_host(self):
        tracker = self.tracker(vcpus=8, memory_mb=8192, local_gb=100)
        inst = self.instance(self.flavor(ephemeral_gb=5, swap=1536))
        claim = tracker.instance_claim(self.context, inst)
        self.assertIsNone(claim.migration)
        want = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20 + 5 + 2}
        self.assertEqual({tracker.provider: want},
                         self.allocations(inst.uuid))
        stored = self.reload(inst)
        self.assertEqual(('host1', 'host1'), (stored.host, stored.node))
        node = objects.ComputeNode.get_by_uuid(self.context,
                                               tracker.provider)
        self.assertEqual((2, 2048, 27), (node.vcpus_used,
                                         node.memory_mb_used,
                                         node.local_gb_used))

    def test_claim_before_the_first_audit_audits_first(self):
        self.add_service('early')
        tracker = rt.ResourceTracker('early', 'early',
                                     fake_driver.FakeDriver('early'),
                                     self.client)
        inst = self.instance()
        tracker.instance_claim(self.context, inst)
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 20}},
                         self.allocations(inst.uuid))

    def test_boot_from_volume_holds_no_root_disk(self):
        tracker = self.tracker()
        inst = self.instance(self.flavor(ephemeral_gb=1),
                             booted_from_volume=True)
        tracker.instance_claim(self.context, inst)
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 1}},
                         self.allocations(inst.uuid))

    def _snapshot(self, tracker, inst):
        devices = objects.PciDeviceList.get_by_compute_node(
            self.context, tracker.node.id)
        stored = self.reload(inst)
        return (self.usages(tracker.provider), self.allocations(inst.uuid),
                stored.host, stored.node,
                sorted((d.address, d.status, d.instance_uuid)
                       for d in devices))

    def test_failed_claim_names_shortages_and_changes_nothing(self):
        # Capacity: VCPU (4 - 1) * 4.0 = 12; MEMORY_MB (4096 - 1024) *
        # 1.0 = 3072; DISK_GB 50 - ceil(1500 MB / 1024) = 48.
        tracker = self.tracker(vcpus=4, memory_mb=4096, local_gb=50,
                               pci_devices=PCI,
                               reserved={'reserved_vcpus': 1,
                                         'reserved_memory_mb': 1024,
                                         'reserved_disk_mb': 1500})
        for name in ('m', 'm', 'n'):
            tracker.instance_claim(self.context, self.instance(
                self.flavor(name, vcpus=4 if name == 'm' else 2,
                            memory_mb=1024 if name == 'm' else 0,
                            root_gb=20 if name == 'm' else 0)))
        big = self.instance(self.flavor('big', vcpus=3, memory_mb=2048,
                                        root_gb=10))
        before = self._snapshot(tracker, big)
        exc = self.assertRaises(
            exception.ComputeResourcesUnavailable, tracker.instance_claim,
            self.context, big, [{'count': 1, 'vendor_id': '8086'}])
        self.assertEqual(
            {('DISK_GB', 10, 8, 2), ('MEMORY_MB', 2048, 1024, 1024),
             ('VCPU', 3, 2, 1)},
            {(s['resource_class'], s['requested'], s['free'], s['short'])
             for s in exc.shortages})
        self.assertIn('VCPU on %s: requested 3, free 2, short by 1'
                      % tracker.provider, str(exc))
        self.assertEqual(before, self._snapshot(tracker, big))

    def test_allocation_ratio_lets_vcpus_overcommit(self):
        tracker = self.tracker(vcpus=2, memory_mb=65536, local_gb=1000)
        # Default cpu ratio 4.0: 8 VCPU fit on 2 cores.
        for _ in range(4):
            tracker.instance_claim(self.context, self.instance())
        self.assertRaises(exception.ComputeResourcesUnavailable,
                          tracker.instance_claim, self.context,
                          self.instance())
        self.assertEqual(8, self.usages(tracker.provider)['VCPU'])

    def test_claim_context_manager_aborts_on_error(self):
        tracker = self.tracker()
        inst = self.instance()

        def build():
            with tracker.instance_claim(self.context, inst):
                raise RuntimeError('spawn failed')

        self.assertRaises(RuntimeError, build)
        self.assertEqual({}, self.allocations(inst.uuid))
        self.assertIsNone(self.reload(inst).host)
        self.assertEqual({}, self.usages(tracker.provider))

    def test_update_usage_follows_a_deleted_instance(self):
        tracker = self.tracker()
        inst = self.instance()
        tracker.instance_claim(self.context, inst)
        inst.vm_state = 'deleted'
        tracker.update_usage(self.context, inst)
        self.assertEqual({}, self.allocations(inst.uuid))
        self.assertEqual({}, tracker.accounting())


class TestPciClaims(base.TrackerTestCase):

    def _devices(self, tracker):
        return {d.address: d for d in objects.PciDeviceList
                .get_by_compute_node(self.context, tracker.node.id)}

    def test_pci_claim_allocates_devices_and_counts_type_pci(self):
        tracker = self.tracker(pci_devices=PCI)
        self.assertEqual(2, self.client.get_inventory(
            tracker.provider)[1]['PCI_DEVICE']['total'])
        inst = self.instance()
        tracker.instance_claim(self.context, inst, [
            {'count': 2, 'product_id': '1520'},
            {'count': 1, 'product_id': '1521'}])
        devices = self._devices(tracker)
        self.assertEqual(
            {'allocated'}, {d.status for d in devices.values()})
        self.assertEqual({inst.uuid},
                         {d.instance_uuid for d in devices.values()})
        # The VF is allocated but not counted as PCI_DEVICE.
        self.assertEqual(2, self.allocations(
            inst.uuid)[tracker.provider]['PCI_DEVICE'])

    def test_pci_shortage_is_named_and_claims_nothing(self):
        tracker = self.tracker(pci_devices=PCI)
        inst = self.instance()
        exc = self.assertRaises(
            exception.PciDeviceRequestFailed, tracker.instance_claim,
            self.context, inst, [{'count': 3, 'product_id': '1520'}])
        self.assertEqual([{'spec': '*:1520 x3', 'requested': 3, 'free': 2,
                           'short': 1}], exc.shortages)
        self.assertEqual({'available'}, {
            d.status for d in self._devices(tracker).values()})
        self.assertEqual({}, self.allocations(inst.uuid))

    def test_device_taken_concurrently_is_not_claimed_twice(self):
        tracker = self.tracker(pci_devices=PCI[:1])
        # Another writer takes the device after the tracker read it.
        other = objects.PciDeviceList.get_by_compute_node(
            self.context, tracker.node.id)[0]
        rival = self.instance()
        other.claim(rival.uuid)
        other.allocate(rival.uuid)
        other.save()
        inst = self.instance()
        self.assertRaises(exception.PciDeviceRequestFailed,
                          tracker.instance_claim, self.context, inst,
                          [{'count': 1}])
        device = list(self._devices(tracker).values())[0]
        self.assertEqual(rival.uuid, device.instance_uuid)
        self.assertEqual({}, self.allocations(inst.uuid))

    def test_abort_frees_devices(self):
        tracker = self.tracker(pci_devices=PCI)
        inst = self.instance()
        tracker.instance_claim(self.context, inst, [{'count': 2}])
        tracker.abort_instance_claim(self.context, inst)
        self.assertEqual({'available'}, {
            d.status for d in self._devices(tracker).values()})
        self.assertEqual({}, self.allocations(inst.uuid))
        self.assertIsNone(self.reload(inst).node)
