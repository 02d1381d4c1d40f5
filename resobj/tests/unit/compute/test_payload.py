"""The allocation payload rules (resobj.compute.payload), without a DB."""

from resobj.compute import payload as pl
from resobj import objects
from resobj.tests import base

objects.register_all()

NODE = 'node-rp'
POOL = 'pool-rp'


def flavor(vcpus=2, memory_mb=2048, root_gb=20, ephemeral_gb=0, swap=0):
    return objects.Flavor(vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb,
                          ephemeral_gb=ephemeral_gb, swap=swap)


def device(instance_uuid, status='allocated', dev_type='type-PCI'):
    return objects.PciDevice(instance_uuid=instance_uuid, status=status,
                             dev_type=dev_type)


UUID = '11111111-2222-3333-4444-555555555555'
OTHER = '11111111-2222-3333-4444-666666666666'


class TestSwap(base.TestCase):

    def test_swap_mb_becomes_gb_rounded_up(self):
        for swap_mb, gb in ((0, 0), (1, 1), (512, 1), (1024, 1), (1025, 2),
                            (2048, 2), (3000, 3)):
            self.assertEqual(gb, pl.swap_gb(swap_mb), swap_mb)

    def test_disk_counts_swap_in_gb_not_mb(self):
        # nova Newton added 1024 "GB" for 1024 MB of swap.
        self.assertEqual(20 + 5 + 1, pl.disk_gb(
            flavor(root_gb=20, ephemeral_gb=5, swap=1024), False))


class TestBuild(base.TestCase):

    def test_local_storage_everything_on_the_node(self):
        self.assertEqual(
            {NODE: {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 26}},
            pl.build(flavor(ephemeral_gb=5, swap=600), False, NODE))

    def test_boot_from_volume_counts_no_root_disk(self):
        self.assertEqual(
            {NODE: {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 6}},
            pl.build(flavor(ephemeral_gb=5, swap=600), True, NODE))

    def test_boot_from_volume_without_local_disks_holds_no_disk(self):
        self.assertEqual({NODE: {'VCPU': 2, 'MEMORY_MB': 2048}},
                         pl.build(flavor(), True, NODE))

    def test_shared_storage_puts_disk_on_the_pool(self):
        self.assertEqual(
            {NODE: {'VCPU': 2, 'MEMORY_MB': 2048}, POOL: {'DISK_GB': 21}},
            pl.build(flavor(swap=1), False, NODE, POOL))

    def test_shared_storage_boot_from_volume_keeps_disk_local(self):
        self.assertEqual(
            {NODE: {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 3}},
            pl.build(flavor(ephemeral_gb=3), True, NODE, POOL))

    def test_pci_devices_counted_and_zero_amounts_omitted(self):
        payload = pl.build(flavor(vcpus=0, root_gb=0), False, NODE,
                           pci_devices=2)
        self.assertEqual({NODE: {'MEMORY_MB': 2048, 'PCI_DEVICE': 2}},
                         payload)

    def test_empty_flavor_holds_nothing(self):
        self.assertEqual({}, pl.build(
            flavor(vcpus=0, memory_mb=0, root_gb=0), False, NODE, POOL))


class TestPciCount(base.TestCase):

    def test_only_allocated_type_pci_of_the_instance(self):
        devices = [device(UUID), device(UUID),
                   device(UUID, status='claimed'),
                   device(UUID, dev_type='type-VF'),
                   device(UUID, dev_type='type-PF'),
                   device(OTHER)]
        self.assertEqual(2, pl.pci_count(devices, UUID))
        self.assertEqual(1, pl.pci_count(devices, OTHER))
