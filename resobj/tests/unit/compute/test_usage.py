"""Capacity and claim checks (resobj.compute.usage), without a DB."""

from resobj.compute import exception
from resobj.compute import fake_driver
from resobj.compute import tracker as rt
from resobj.compute import usage
from resobj import objects
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures

objects.register_all()


def node(**kw):
    values = dict(vcpus=8, memory_mb=8192, local_gb=100, vcpus_reserved=0,
                  memory_mb_reserved=512, local_gb_reserved=2,
                  cpu_allocation_ratio=2.0, ram_allocation_ratio=1.5,
                  disk_allocation_ratio=1.0)
    values.update(kw)
    return objects.ComputeNode(**values)


class TestCapacity(base.TestCase):

    def test_reserved_and_ratios(self):
        caps = usage.capacity(usage.node_inventory(node(), pci_total=3))
        self.assertEqual({'VCPU': 16, 'MEMORY_MB': int((8192 - 512) * 1.5),
                          'DISK_GB': 98, 'PCI_DEVICE': 3}, caps)

    def test_zero_totals_have_no_inventory(self):
        self.assertNotIn('DISK_GB', usage.node_inventory(
            node(local_gb=0, local_gb_reserved=0)))

    def test_reserved_disk_mb_rounds_up_to_gb(self):
        # nova Newton multiplied the MB by 1024.
        self.assertEqual(1, usage.mb_to_gb_ceil(1))
        self.assertEqual(2, usage.mb_to_gb_ceil(2048))
        self.assertEqual(3, usage.mb_to_gb_ceil(2049))


class TestCheck(base.TestCase):

    def test_names_every_shortage_and_by_how_much(self):
        caps = {'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 100}
        used = {'VCPU': 3, 'MEMORY_MB': 1024}
        exc = self.assertRaises(
            exception.ComputeResourcesUnavailable, usage.check, 'n1',
            'inst', 'rp', caps, used,
            {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 10})
        self.assertEqual(
            [{'resource_class': 'MEMORY_MB', 'provider': 'rp',
              'requested': 4096, 'free': 3072, 'short': 1024},
             {'resource_class': 'VCPU', 'provider': 'rp', 'requested': 2,
              'free': 1, 'short': 1}], exc.shortages)
        self.assertIn('VCPU on rp: requested 2, free 1, short by 1',
                      str(exc))

    def test_growth_only_counts_against_free(self):
        caps = {'VCPU': 4}
        usage.check('n1', 'inst', 'rp', caps, {'VCPU': 4}, {'VCPU': 2},
                    already={'VCPU': 2})
        exc = self.assertRaises(
            exception.ComputeResourcesUnavailable, usage.check, 'n1',
            'inst', 'rp', caps, {'VCPU': 4}, {'VCPU': 3},
            already={'VCPU': 2})
        self.assertEqual(1, exc.shortages[0]['short'])

    def test_class_without_inventory_is_short_entirely(self):
        exc = self.assertRaises(
            exception.ComputeResourcesUnavailable, usage.check, 'n1',
            'inst', 'rp', {}, {}, {'PCI_DEVICE': 1})
        self.assertEqual(0, exc.shortages[0]['free'])


class TestNodeUsage(base.TestCase):

    def test_totals_and_orphans(self):
        held = usage.NodeUsage()
        held.set('a', {'VCPU': 2, 'MEMORY_MB': 512})
        held.set('b', {'VCPU': 1})
        held.orphan_memory_mb = 256
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 768}, held.totals())
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 512},
                         held.totals(include_orphans=False))
        held.remove('a')
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 256}, held.totals())


class TestReservedFromConf(base.TestCase):

    def test_reserved_disk_mb_becomes_gb_rounded_up(self):
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(group='compute', reserved_host_cpus=1,
                    reserved_host_memory_mb=2048, reserved_host_disk_mb=1500)
        tracker = rt.ResourceTracker.from_conf(
            conf.conf, 'h', 'n', fake_driver.FakeDriver('n'), client=None)
        self.assertEqual({'vcpus': 1, 'memory_mb': 2048, 'local_gb': 2},
                         tracker.reserved)
