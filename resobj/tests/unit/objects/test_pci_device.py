"""PciDevice(List): backports, tolerant reading and the state machine."""

import uuid

from oslo_serialization import jsonutils

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'
INSTANCE = '5d0c1e5b-3f4a-4b8e-9a1d-2c7e6f8b9a01'
OTHER = '0e6f0c56-8d0e-4c43-9a55-7b6c1d9f2e10'
REQUEST = 'b7e2a4c9-1d3f-4e5a-8b6c-0f9d2e1a3c4b'


def backport(obj, version):
    return obj.obj_to_primitive(target_version=version)


def load(primitive):
    return base.ResobjObject.obj_from_primitive(
        jsonutils.loads(jsonutils.dumps(primitive)))


class TestPciDeviceBackport(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.device = samples.make('PciDevice')

    def test_1_2_keeps_parent_addr_and_extra_info_as_they_are(self):
        data = backport(self.device, '1.2')[DATA]
        self.assertEqual('0000:81:00.0', data['parent_addr'])
        self.assertEqual({'vf_number': '1'}, data['extra_info'])
        self.assertEqual(1, data['numa_node'])

    def test_below_1_2_parent_addr_moves_into_extra_info(self):
        for version in ('1.1', '1.0'):
            data = backport(self.device, version)[DATA]
            self.assertNotIn('parent_addr', data)
            self.assertEqual({'vf_number': '1',
                              'phys_function': '0000:81:00.0'},
                             data['extra_info'])
        # The object itself is not changed by a backport.
        self.assertEqual({'vf_number': '1'}, self.device.extra_info)

    def test_parent_addr_wins_over_a_stale_phys_function(self):
        self.device.extra_info = {'phys_function': '0000:01:00.0'}
        data = backport(self.device, '1.1')[DATA]
        self.assertEqual({'phys_function': '0000:81:00.0'},
                         data['extra_info'])

    def test_no_parent_addr_leaves_extra_info_alone(self):
        self.device.parent_addr = None
        data = backport(self.device, '1.1')[DATA]
        self.assertNotIn('parent_addr', data)
        self.assertEqual({'vf_number': '1'}, data['extra_info'])

    def test_parent_addr_without_extra_info_creates_it(self):
        self.device.obj_reset_changes()
        del self.device.extra_info
        data = backport(self.device, '1.1')[DATA]
        self.assertEqual({'phys_function': '0000:81:00.0'},
                         data['extra_info'])

    def test_1_1_keeps_request_id_and_numa_node_1_0_drops_them(self):
        data = backport(self.device, '1.1')[DATA]
        self.assertEqual((REQUEST, 1), (data['request_id'],
                                        data['numa_node']))
        data = backport(self.device, '1.0')[DATA]
        self.assertNotIn('request_id', data)
        self.assertNotIn('numa_node', data)
        self.assertEqual(INSTANCE, data['instance_uuid'])
        self.assertEqual('allocated', data['status'])

    def test_new_statuses_refuse_a_backport_below_1_3(self):
        for status in ('unavailable', 'unclaimable'):
            self.device.status = status
            self.assertEqual(status,
                             backport(self.device, '1.3')[DATA]['status'])
            for version in ('1.2', '1.1', '1.0'):
                exc = self.assertRaises(exception.ObjectBackportError,
                                        backport, self.device, version)
                self.assertIn(status, str(exc))
                self.assertIn('1.3', str(exc))

    def test_vdpa_refuses_a_backport_below_1_3(self):
        self.device.dev_type = 'type-VDPA'
        self.assertEqual('type-VDPA',
                         backport(self.device, '1.3')[DATA]['dev_type'])
        exc = self.assertRaises(exception.ObjectBackportError, backport,
                                self.device, '1.2')
        self.assertIn('type-VDPA', str(exc))

    def test_old_values_pass_every_backport(self):
        for status in ('available', 'claimed', 'allocated', 'removed',
                       'deleted'):
            for dev_type in ('type-PCI', 'type-PF', 'type-VF'):
                self.device.status = status
                self.device.dev_type = dev_type
                data = backport(self.device, '1.0')[DATA]
                self.assertEqual((status, dev_type),
                                 (data['status'], data['dev_type']))


class TestPciDeviceListBackport(test_base.TestCase):

    def test_each_list_version_carries_its_device_version(self):
        devices = samples.make('PciDeviceList')
        for version in ('1.0', '1.1', '1.2', '1.3'):
            for manifest in (None, {'PciDeviceList': version,
                                    'PciDevice': '1.3'}):
                primitive = devices.obj_to_primitive(
                    target_version=version, version_manifest=manifest)
                self.assertEqual([version, version], [
                    c[VERSION] for c in primitive[DATA]['objects']])

    def test_manifest_lowers_the_device_version(self):
        devices = samples.make('PciDeviceList')
        primitive = devices.obj_to_primitive(
            target_version='1.3',
            version_manifest={'PciDeviceList': '1.3', 'PciDevice': '1.1'})
        vf = primitive[DATA]['objects'][0]
        self.assertEqual('1.1', vf[VERSION])
        self.assertNotIn('parent_addr', vf[DATA])
        self.assertEqual('0000:81:00.0',
                         vf[DATA]['extra_info']['phys_function'])

    def test_list_backport_refuses_a_device_it_cannot_carry(self):
        devices = samples.make('PciDeviceList')
        devices[1].status = 'unclaimable'
        self.assertRaises(exception.ObjectBackportError,
                          devices.obj_to_primitive, target_version='1.2')


class TestTolerantReader(test_base.TestCase):

    def test_old_primitive_fills_parent_addr_from_phys_function(self):
        device = load(backport(samples.make('PciDevice'), '1.1'))
        self.assertEqual('1.1', device.VERSION)
        self.assertFalse(device.obj_attr_is_set('parent_addr'))
        self.assertEqual('0000:81:00.0', device.parent_addr)
        # Filled, not changed: a save must not write what was not sent.
        self.assertNotIn('parent_addr', device.obj_what_changed())

    def test_fields_an_old_primitive_lacks_read_as_none(self):
        device = load(backport(samples.make('PciDevice'), '1.0'))
        self.assertIsNone(device.request_id)
        self.assertIsNone(device.numa_node)
        self.assertEqual(set(), device.obj_what_changed())

    def test_no_or_malformed_phys_function_gives_none(self):
        for extra_info in ({}, {'phys_function': 'not-an-address'}):
            device = samples.make('PciDevice')
            device.parent_addr = None
            device.extra_info = extra_info
            loaded = load(backport(device, '1.1'))
            self.assertIsNone(loaded.parent_addr)
            self.assertEqual(extra_info, loaded.extra_info)

    def test_other_unset_fields_are_not_lazy_loadable(self):
        device = objects.PciDevice()
        exc = self.assertRaises(exception.ObjectActionError,
                                getattr, device, 'label')
        self.assertIn('label', str(exc))

    def test_row_with_only_phys_function_fills_parent_addr_as_a_change(self):
        row = dict(samples.make('PciDevice').obj_to_primitive()[DATA],
                   parent_addr=None,
                   extra_info={'phys_function': '0000:81:00.0'})
        row['deleted'] = 0
        device = objects.PciDevice._from_db_object(None, objects.PciDevice(),
                                                   row)
        self.assertEqual('0000:81:00.0', device.parent_addr)
        self.assertEqual({'parent_addr': '0000:81:00.0'},
                         device.obj_get_db_changes())

    def test_row_with_parent_addr_is_read_unchanged(self):
        row = dict(samples.make('PciDevice').obj_to_primitive()[DATA],
                   extra_info={'phys_function': '0000:01:00.0'})
        row['deleted'] = 0
        device = objects.PciDevice._from_db_object(None, objects.PciDevice(),
                                                   row)
        self.assertEqual('0000:81:00.0', device.parent_addr)
        self.assertEqual(set(), device.obj_what_changed())


class TestStateMachine(test_base.TestCase):

    def device(self, status='available', instance_uuid=None,
               request_id=None):
        device = samples.make('PciDevice')
        device.status = status
        device.instance_uuid = instance_uuid
        device.request_id = request_id
        device.obj_reset_changes()
        return device

    def assertRefused(self, device, exc_class, method, *args):
        before = device.obj_to_primitive()
        exc = self.assertRaises(exc_class, getattr(device, method), *args)
        self.assertEqual(before, device.obj_to_primitive())
        self.assertEqual(set(), device.obj_what_changed())
        return exc

    def test_claim(self):
        device = self.device()
        device.claim(uuid.UUID(INSTANCE), REQUEST.upper())
        self.assertEqual(('claimed', INSTANCE, REQUEST),
                         (device.status, device.instance_uuid,
                          device.request_id))
        self.assertEqual({'status', 'instance_uuid', 'request_id'},
                         device.obj_what_changed())

    def test_claim_without_request(self):
        device = self.device()
        device.claim(INSTANCE)
        self.assertIsNone(device.request_id)

    def test_claim_refuses_bad_uuids_changing_nothing(self):
        device = self.device()
        self.assertRefused(device, ValueError, 'claim', INSTANCE, 'bad')
        self.assertRefused(device, ValueError, 'claim', None)

    def test_allocate_a_claimed_device(self):
        device = self.device('claimed', INSTANCE, REQUEST)
        device.allocate(INSTANCE)
        self.assertEqual(('allocated', INSTANCE, REQUEST),
                         (device.status, device.instance_uuid,
                          device.request_id))

    def test_allocate_for_another_instance_is_refused(self):
        device = self.device('claimed', INSTANCE, REQUEST)
        exc = self.assertRefused(device, exception.PciDeviceInvalidOwner,
                                 'allocate', OTHER)
        self.assertIn(INSTANCE, str(exc))
        self.assertIn(OTHER, str(exc))
        self.assertIn('0000:81:00.1', str(exc))

    def test_free_a_claimed_or_allocated_device(self):
        for status in ('claimed', 'allocated'):
            for owner in (None, INSTANCE):
                device = self.device(status, INSTANCE, REQUEST)
                device.free(owner)
                self.assertEqual(('available', None, None),
                                 (device.status, device.instance_uuid,
                                  device.request_id))

    def test_free_for_another_instance_is_refused(self):
        device = self.device('allocated', INSTANCE, REQUEST)
        self.assertRefused(device, exception.PciDeviceInvalidOwner,
                           'free', OTHER)

    def test_remove_an_available_device(self):
        device = self.device()
        device.remove()
        self.assertEqual('removed', device.status)

    def test_illegal_transitions_are_refused_changing_nothing(self):
        allowed = {
            'claim': {'available'},
            'allocate': {'claimed'},
            'free': {'claimed', 'allocated'},
            'remove': {'available'},
        }
        args = {'claim': (INSTANCE,), 'allocate': (INSTANCE,),
                'free': (), 'remove': ()}
        statuses = ('available', 'claimed', 'allocated', 'removed',
                    'deleted', 'unavailable', 'unclaimable')
        for method, sources in allowed.items():
            for status in statuses:
                if status in sources:
                    continue
                device = self.device(status, INSTANCE)
                exc = self.assertRefused(device,
                                         exception.PciDeviceInvalidStatus,
                                         method, *args[method])
                self.assertEqual(
                    (method, '0000:81:00.1', status),
                    (exc.kwargs['transition'], exc.kwargs['address'],
                     exc.kwargs['status']))
                self.assertEqual(sources,
                                 set(exc.kwargs['allowed'].split(', ')))
