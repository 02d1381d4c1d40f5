"""The PciDevice objects over a real database, on every backend."""

from resobj.db.api import pci_device as pci_device_db
from resobj import exception
from resobj import objects
from resobj.tests.functional.db import test_pci_device as db_helpers
from resobj.tests.functional import db_base

objects.register_all()

INSTANCE = '5d0c1e5b-3f4a-4b8e-9a1d-2c7e6f8b9a01'
OTHER = '0e6f0c56-8d0e-4c43-9a55-7b6c1d9f2e10'
REQUEST = 'b7e2a4c9-1d3f-4e5a-8b6c-0f9d2e1a3c4b'


class TestPciDeviceObject(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.node = db_helpers.create_compute_node(self.context)

    def _make(self, **kw):
        values = {'compute_node_id': self.node, 'address': '0000:81:00.1',
                  'vendor_id': '8086', 'product_id': '1520',
                  'dev_type': 'type-VF', 'status': 'available',
                  'label': 'label_8086_1520'}
        values.update(kw)
        device = objects.PciDevice(self.context, **values)
        device.create()
        return device

    def _stored(self, device):
        return objects.PciDevice.get_by_id(self.context, device.id)

    def test_create_sets_db_values_and_resets_changes(self):
        device = self._make(parent_addr='0000:81:00.0', numa_node=1)
        self.assertIsInstance(device.id, int)
        self.assertEqual({}, device.extra_info)
        self.assertFalse(device.deleted)
        self.assertIsNotNone(device.created_at)
        self.assertEqual(set(), device.obj_what_changed())
        self.assertEqual(device.obj_to_primitive(),
                         self._stored(device).obj_to_primitive())

    def test_status_change_is_a_compare_and_swap(self):
        device = self._make()
        mine, theirs = self._stored(device), self._stored(device)
        theirs.claim('11111111-2222-3333-4444-555555555555')
        theirs.save()
        mine.claim('11111111-2222-3333-4444-666666666666')
        exc = self.assertRaises(exception.PciDeviceStatusChanged, mine.save)
        self.assertEqual(('available', 'claimed'),
                         (exc.kwargs['expected'], exc.kwargs['actual']))
        stored = self._stored(device)
        self.assertEqual('11111111-2222-3333-4444-555555555555',
                         stored.instance_uuid)
        # Changes other than the status need no compare.
        theirs.label = 'relabelled'
        theirs.save()
        stored.numa_node = 0
        stored.save()
        self.assertEqual(('relabelled', 0), (self._stored(device).label,
                                             self._stored(device).numa_node))

    def test_create_refuses_a_created_or_incomplete_device(self):
        device = self._make()
        self.assertRaises(exception.ObjectActionError, device.create)
        incomplete = objects.PciDevice(self.context, compute_node_id=self.node,
                                       address='0000:81:00.2')
        exc = self.assertRaises(exception.ObjectActionError,
                                incomplete.create)
        self.assertIn('vendor_id', str(exc))
        self.assertIn('label', str(exc))

    def test_duplicate_raises_exists(self):
        self._make()
        self.assertRaises(exception.PciDeviceExists, self._make)

    def test_get_by_id_not_found(self):
        self.assertRaises(exception.PciDeviceNotFound,
                          objects.PciDevice.get_by_id, self.context, 4242)

    def test_extra_info_round_trip(self):
        extra = {'capabilities': '{"network": ["rx", "tx"]}',
                 'vf_number': '3'}
        device = self._make(extra_info=extra)
        self.assertEqual(extra, self._stored(device).extra_info)

    def test_save_writes_only_changes(self):
        device = self._make()
        other = self._stored(device)
        other.numa_node = 1
        other.save()
        device.label = 'relabelled'
        device.save()
        fresh = self._stored(device)
        # The second save did not write back its stale numa_node.
        self.assertEqual(1, fresh.numa_node)
        self.assertEqual('relabelled', fresh.label)
        self.assertIsNotNone(fresh.updated_at)
        self.assertEqual(set(), device.obj_what_changed())

    def test_save_of_a_deleted_device_is_not_found(self):
        device = self._make()
        stale = self._stored(device)
        device.destroy()
        stale.label = 'x'
        self.assertRaises(exception.PciDeviceNotFound, stale.save)

    def test_destroy(self):
        device = self._make()
        device.destroy()
        self.assertTrue(device.deleted)
        self.assertIsNotNone(device.deleted_at)
        self.assertEqual('deleted', device.status)
        self.assertRaises(exception.PciDeviceNotFound,
                          objects.PciDevice.get_by_id, self.context,
                          device.id)
        # The address is free again.
        self._make()

    def test_destroy_refuses_a_device_in_use(self):
        device = self._make(status='allocated', instance_uuid=INSTANCE)
        exc = self.assertRaises(exception.PciDeviceInvalidStatus,
                                device.destroy)
        self.assertIn('allocated', str(exc))
        self.assertFalse(self._stored(device).deleted)

    def test_state_machine_persisted_through_save(self):
        device = self._make()
        device.claim(INSTANCE, REQUEST)
        self.assertEqual('available', self._stored(device).status)
        device.save()
        stored = self._stored(device)
        self.assertEqual(('claimed', INSTANCE, REQUEST),
                         (stored.status, stored.instance_uuid,
                          stored.request_id))
        stored.allocate(INSTANCE)
        stored.save()
        self.assertEqual(['allocated'], [
            d.status for d in objects.PciDeviceList.get_by_instance_uuid(
                self.context, INSTANCE)])
        stored.free(INSTANCE)
        stored.save()
        stored = self._stored(device)
        self.assertEqual(('available', None, None),
                         (stored.status, stored.instance_uuid,
                          stored.request_id))
        stored.remove()
        stored.save()
        self.assertEqual('removed', self._stored(device).status)

    def test_illegal_transition_leaves_the_database_unchanged(self):
        device = self._make(status='allocated', instance_uuid=INSTANCE,
                            request_id=REQUEST)
        before = self._stored(device).obj_to_primitive()
        self.assertRaises(exception.PciDeviceInvalidStatus, device.claim,
                          OTHER)
        self.assertRaises(exception.PciDeviceInvalidStatus, device.remove)
        self.assertRaises(exception.PciDeviceInvalidOwner, device.free,
                          OTHER)
        device.save()  # nothing changed, so nothing is written
        self.assertEqual(before, self._stored(device).obj_to_primitive())

    def test_phys_function_row_migrates_on_save(self):
        # A row written with the PF address only in extra_info, as
        # versions before 1.2 keep it.
        row = pci_device_db.create(self.context, {
            'compute_node_id': self.node, 'address': '0000:81:00.1',
            'vendor_id': '8086', 'product_id': '1520',
            'dev_type': 'type-VF', 'status': 'available', 'label': 'l',
            'extra_info': {'phys_function': '0000:81:00.0'}})
        device = objects.PciDevice.get_by_id(self.context, row['id'])
        self.assertEqual('0000:81:00.0', device.parent_addr)
        device.save()
        self.assertEqual('0000:81:00.0', pci_device_db.get(
            self.context, row['id'])['parent_addr'])
        self.assertEqual(set(), self._stored(device).obj_what_changed())

    def test_list_queries(self):
        a = self._make(address='0000:81:00.1')
        b = self._make(address='0000:81:00.2')
        other = db_helpers.create_compute_node(self.context, host='node2')
        self._make(compute_node_id=other)
        b.claim(INSTANCE)
        b.save()
        on_node = objects.PciDeviceList.get_by_compute_node(self.context,
                                                            self.node)
        self.assertEqual([a.id, b.id], [d.id for d in on_node])
        self.assertIsInstance(on_node[0], objects.PciDevice)
        self.assertEqual(set(), on_node[0].obj_what_changed())
        self.assertEqual([b.id], [
            d.id for d in objects.PciDeviceList.get_by_instance_uuid(
                self.context, INSTANCE)])
        self.assertEqual(0, len(objects.PciDeviceList.get_by_instance_uuid(
            self.context, OTHER)))
