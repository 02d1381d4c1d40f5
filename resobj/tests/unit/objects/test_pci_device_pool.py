"""PciDevicePool(List): backports, the legacy dict and pci_stats."""

from oslo_serialization import jsonutils

from resobj import exception
from resobj import objects
from resobj.objects import pci_device_pool
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'


def legacy(**kw):
    pool = {'product_id': '1520', 'vendor_id': '8086', 'count': 2,
            'numa_node': 1, 'physical_network': 'physnet1'}
    pool.update(kw)
    return pool


class TestPciDevicePoolBackport(test_base.TestCase):

    def test_1_0_drops_numa_node_and_keeps_the_rest(self):
        pool = samples.make('PciDevicePool')
        primitive = pool.obj_to_primitive(target_version='1.0')
        self.assertEqual('1.0', primitive[VERSION])
        self.assertEqual({'product_id': '1520', 'vendor_id': '8086',
                          'count': 6, 'tags': pool.tags},
                         primitive[DATA])

    def test_1_1_keeps_numa_node(self):
        primitive = samples.make('PciDevicePool').obj_to_primitive(
            target_version='1.1')
        self.assertEqual(1, primitive[DATA]['numa_node'])

    def test_list_1_1_carries_pools_at_the_manifest_version(self):
        pools = samples.make('PciDevicePoolList')
        primitive = pools.obj_to_primitive(
            target_version='1.1',
            version_manifest={'PciDevicePoolList': '1.1',
                              'PciDevicePool': '1.0'})
        self.assertEqual('1.1', primitive[VERSION])
        children = primitive[DATA]['objects']
        self.assertEqual(['1.0', '1.0'], [c[VERSION] for c in children])
        self.assertEqual([False, False],
                         ['numa_node' in c[DATA] for c in children])
        self.assertEqual(['1520', '1521'],
                         [c[DATA]['product_id'] for c in children])

    def test_list_1_0_carries_pools_1_0(self):
        # Without a manifest the list's own history decides; with one that
        # names a newer pool than list 1.0 ever carried, so does it.
        pools = samples.make('PciDevicePoolList')
        for manifest in (None, {'PciDevicePoolList': '1.0',
                                'PciDevicePool': '1.1'}):
            primitive = pools.obj_to_primitive(target_version='1.0',
                                               version_manifest=manifest)
            children = primitive[DATA]['objects']
            self.assertEqual(['1.0', '1.0'], [c[VERSION] for c in children])
            self.assertNotIn('numa_node', children[0][DATA])

    def test_list_1_1_keeps_pools_1_1(self):
        primitive = samples.make('PciDevicePoolList').obj_to_primitive(
            target_version='1.1')
        children = primitive[DATA]['objects']
        self.assertEqual(['1.1', '1.1'], [c[VERSION] for c in children])
        self.assertEqual(1, children[0][DATA]['numa_node'])


class TestLegacyDict(test_base.TestCase):

    def test_from_dict_splits_fields_and_tags(self):
        pool = objects.PciDevicePool.from_dict(legacy(trusted=None))
        self.assertEqual(('1520', '8086', 2, 1),
                         (pool.product_id, pool.vendor_id, pool.count,
                          pool.numa_node))
        self.assertEqual({'physical_network': 'physnet1', 'trusted': None},
                         pool.tags)

    def test_from_dict_without_numa_node_leaves_it_unset(self):
        value = legacy()
        del value['numa_node']
        pool = objects.PciDevicePool.from_dict(value)
        self.assertFalse(pool.obj_attr_is_set('numa_node'))
        self.assertNotIn('numa_node', pool.to_dict())

    def test_to_dict_is_the_inverse(self):
        value = legacy(dev_type='type-VF')
        self.assertEqual(value,
                         objects.PciDevicePool.from_dict(value).to_dict())
        pool = samples.make('PciDevicePool')
        self.assertEqual(
            pool.obj_to_primitive()[DATA],
            objects.PciDevicePool.from_dict(pool.to_dict())
            .obj_to_primitive()[DATA])

    def test_from_dict_names_what_is_missing(self):
        value = legacy()
        del value['vendor_id']
        del value['count']
        exc = self.assertRaises(ValueError,
                                objects.PciDevicePool.from_dict, value)
        self.assertIn('vendor_id, count', str(exc))

    def test_from_dict_refuses_bad_values(self):
        self.assertRaises(ValueError, objects.PciDevicePool.from_dict,
                          legacy(count='many'))
        self.assertRaises(ValueError, objects.PciDevicePool.from_dict,
                          legacy(physical_network=['a']))
        self.assertRaises(ValueError, objects.PciDevicePool.from_dict,
                          ['not', 'a', 'dict'])

    def test_to_dict_refuses_a_tag_named_like_a_field(self):
        pool = samples.make('PciDevicePool')
        pool.tags = {'count': '3'}
        exc = self.assertRaises(ValueError, pool.to_dict)
        self.assertIn('count', str(exc))


class TestFromPciStats(test_base.TestCase):

    def assertPools(self, expected, pools):
        self.assertIsInstance(pools, objects.PciDevicePoolList)
        self.assertEqual(expected, [p.to_dict() for p in pools])

    def test_nothing_gives_none(self):
        for value in (None, '', '  ', b'', 'null', '[]', '{}', [], {},
                      {'pci_stats': []}, '{"pci_stats": null}'):
            self.assertIsNone(pci_device_pool.from_pci_stats(value),
                              repr(value))

    def test_primitive_of_each_version(self):
        pools = samples.make('PciDevicePoolList')
        for version, numa in (('1.1', [1, None]), ('1.0', [None, None])):
            text = jsonutils.dumps(pools.obj_to_primitive(
                target_version=version))
            for value in (text, jsonutils.loads(text)):
                read = pci_device_pool.from_pci_stats(value)
                self.assertEqual(version, read.VERSION)
                self.assertEqual(['1520', '1521'],
                                 [p.product_id for p in read])
                self.assertEqual(numa, [p.numa_node if 'numa_node' in p
                                        else None for p in read])

    def test_one_legacy_dict(self):
        for value in (legacy(), jsonutils.dumps(legacy())):
            self.assertPools([legacy()],
                             pci_device_pool.from_pci_stats(value))

    def test_legacy_list_and_wrapped_list(self):
        second = legacy(product_id='1521', count=1, numa_node=None)
        for value in ([legacy(), second], {'pci_stats': [legacy(), second]},
                      jsonutils.dumps({'pci_stats': [legacy(), second]})):
            self.assertPools([legacy(), second],
                             pci_device_pool.from_pci_stats(value))

    def test_bad_input_says_what_is_wrong(self):
        cases = [
            ('{"count": ', 'not JSON'),
            ('42', 'not int'),
            ([legacy(), 'x'], 'item 1'),
            ([legacy(), legacy(count=None)], 'item 1'),
            ({'pci_stats': [legacy()], 'extra': 1}, "beside 'pci_stats'"),
            ({'pci_stats': 'x'}, "'pci_stats' must be a list"),
            ({'product_id': '1520'}, 'vendor_id, count'),
            (samples.make('PciDevicePool').obj_to_primitive(),
             'a PciDevicePool primitive'),
            ({'nova_object.name': 'PciDevicePoolList',
              'nova_object.data': {}}, 'another project'),
        ]
        for value, text in cases:
            exc = self.assertRaises(exception.InvalidPciStats,
                                    pci_device_pool.from_pci_stats, value)
            self.assertIsInstance(exc, ValueError)
            self.assertIn(text, str(exc), repr(value))

    def test_too_new_primitive_is_refused(self):
        primitive = samples.make('PciDevicePoolList').obj_to_primitive()
        primitive[VERSION] = '1.9'
        exc = self.assertRaises(exception.InvalidPciStats,
                                pci_device_pool.from_pci_stats, primitive)
        self.assertIn('PciDevicePoolList', str(exc))

    def test_to_pci_stats_round_trip(self):
        self.assertIsNone(pci_device_pool.to_pci_stats(None))
        pools = samples.make('PciDevicePoolList')
        pools[0].count = 5  # a pending change is not stored
        text = pci_device_pool.to_pci_stats(pools)
        self.assertNotIn('changes', text)
        read = pci_device_pool.from_pci_stats(text)
        self.assertEqual(pools.VERSION, read.VERSION)
        self.assertEqual([p.to_dict() for p in pools],
                         [p.to_dict() for p in read])
        self.assertEqual(set(), read.obj_what_changed())

    def test_to_pci_stats_of_an_empty_list_reads_back_empty(self):
        text = pci_device_pool.to_pci_stats(
            objects.PciDevicePoolList(objects=[]))
        self.assertEqual([], list(pci_device_pool.from_pci_stats(text)))
