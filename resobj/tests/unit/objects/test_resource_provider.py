"""ResourceProvider and Inventory backports (no database)."""

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.tests import base as test_base
from resobj.tests.samples import inventory as inv_samples
from resobj.tests.samples import resource_provider as rp_samples

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'


def backport(obj, version, **manifest):
    full = base.obj_tree_get_versions(obj.obj_name())
    full[obj.obj_name()] = version
    full.update(manifest)
    return obj.obj_to_primitive(target_version=version,
                                version_manifest=full)


class TestResourceProviderBackports(test_base.TestCase):

    def test_1_1_keeps_the_tree(self):
        data = backport(rp_samples.child_provider(), '1.1')[DATA]
        self.assertEqual(rp_samples.ROOT, data['parent_provider_uuid'])
        self.assertEqual(rp_samples.ROOT, data['root_provider_uuid'])

    def test_root_backports_to_1_0_without_tree_fields(self):
        data = backport(rp_samples.resource_provider(), '1.0')[DATA]
        self.assertNotIn('parent_provider_uuid', data)
        self.assertNotIn('root_provider_uuid', data)
        self.assertEqual((rp_samples.ROOT, 7, 'compute-1.example.org'),
                         (data['uuid'], data['generation'], data['name']))

    def test_root_without_parent_field_set_backports(self):
        provider = rp_samples.resource_provider()
        del provider.parent_provider_uuid
        self.assertNotIn('root_provider_uuid',
                         backport(provider, '1.0')[DATA])

    def test_nested_provider_to_1_0_raises(self):
        exc = self.assertRaises(exception.ObjectBackportError, backport,
                                rp_samples.child_provider(), '1.0')
        self.assertIn(rp_samples.CHILD, str(exc))
        self.assertIn('1.0', str(exc))

    def test_list_backports_items_and_refuses_nested_ones(self):
        providers = objects.ResourceProviderList(
            objects=[rp_samples.resource_provider()])
        primitive = backport(providers, '1.0', ResourceProvider='1.0')
        item = primitive[DATA]['objects'][0]
        self.assertEqual('1.0', item[VERSION])
        self.assertNotIn('root_provider_uuid', item[DATA])
        providers.objects.append(rp_samples.child_provider())
        self.assertRaises(exception.ObjectBackportError, backport,
                          providers, '1.0', ResourceProvider='1.0')
        # 1.1 carries both.
        self.assertEqual(2, len(backport(providers, '1.1')[DATA]['objects']))


class TestInventoryBackports(test_base.TestCase):

    def test_standard_class_backports_to_1_0(self):
        primitive = backport(inv_samples.inventory(), '1.0')
        self.assertEqual('1.0', primitive[VERSION])
        self.assertEqual('VCPU', primitive[DATA]['resource_class'])
        self.assertEqual(64, primitive[DATA]['total'])

    def test_custom_class_to_1_0_raises(self):
        custom = inv_samples.inventory('CUSTOM_FPGA', 2)
        exc = self.assertRaises(exception.ObjectBackportError, backport,
                                custom, '1.0')
        self.assertIn('CUSTOM_FPGA', str(exc))
        self.assertEqual('CUSTOM_FPGA',
                         backport(custom, '1.1')[DATA]['resource_class'])

    def test_list_to_1_0_raises_for_a_custom_item(self):
        inventories = inv_samples.inventory_list()
        self.assertEqual(3, len(backport(
            inventories, '1.0', Inventory='1.0')[DATA]['objects']))
        inventories.objects.append(inv_samples.inventory('CUSTOM_FPGA', 2))
        self.assertRaises(exception.ObjectBackportError, backport,
                          inventories, '1.0', Inventory='1.0')


class TestInventory(test_base.TestCase):

    def test_capacity_truncates(self):
        # (64 - 4) * 4.0
        self.assertEqual(240, inv_samples.inventory().capacity)
        self.assertEqual(11, inv_samples.inventory(
            total=11, reserved=1, allocation_ratio=1.15).capacity)

    def test_db_values_fill_defaults(self):
        inv = objects.Inventory(resource_class='VCPU', total=8)
        self.assertEqual(
            {'resource_class': 'VCPU', 'total': 8, 'reserved': 0,
             'min_unit': 1, 'max_unit': 1, 'step_size': 1,
             'allocation_ratio': 1.0}, inv.db_values())

    def test_find(self):
        inventories = inv_samples.inventory_list()
        self.assertEqual(1800, inventories.find('DISK_GB').total)
        self.assertIsNone(inventories.find('PCI_DEVICE'))
