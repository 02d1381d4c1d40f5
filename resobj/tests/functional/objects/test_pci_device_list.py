"""PciDeviceList's all-or-nothing transitions, on every backend.

claim_for_instance, allocate_for_instance and free_for_instance move
several devices in one transaction: either every device moves or none
does, whichever writer got there first.
"""

import threading

from resobj import context as resobj_context
from resobj import exception
from resobj import objects
from resobj.tests.functional.db import test_pci_device as db_helpers
from resobj.tests.functional import db_base

objects.register_all()

INSTANCE = '5d0c1e5b-3f4a-4b8e-9a1d-2c7e6f8b9a01'
OTHER = '0e6f0c56-8d0e-4c43-9a55-7b6c1d9f2e10'


class _Devices:

    def setUp(self):
        super().setUp()
        self.node = db_helpers.create_compute_node(self.context)
        self.devices = [self._make('0000:81:00.%d' % i) for i in range(4)]
        self.ids = [d.id for d in self.devices]

    def _make(self, address):
        device = objects.PciDevice(
            self.context, compute_node_id=self.node, address=address,
            vendor_id='8086', product_id='1520', dev_type='type-PCI',
            status='available', label='label_8086_1520')
        device.create()
        return device

    def _states(self):
        return {d.address: (d.status, d.instance_uuid) for d in
                objects.PciDeviceList.get_by_compute_node(self.context,
                                                          self.node)}


class TestPciDeviceListTransitions(_Devices, db_base.DBTestCase):

    def test_claim_allocate_free_round_trip(self):
        claimed = objects.PciDeviceList.claim_for_instance(
            self.context, self.ids[:2], INSTANCE)
        self.assertEqual([('claimed', INSTANCE)] * 2,
                         [(d.status, d.instance_uuid) for d in claimed])
        allocated = objects.PciDeviceList.allocate_for_instance(
            self.context, self.ids[:2], INSTANCE)
        self.assertEqual(['allocated'] * 2, [d.status for d in allocated])
        self.assertEqual(2, len(objects.PciDeviceList.get_by_instance_uuid(
            self.context, INSTANCE)))
        freed = objects.PciDeviceList.free_for_instance(
            self.context, self.ids[:2], INSTANCE)
        self.assertEqual([('available', None)] * 2,
                         [(d.status, d.instance_uuid) for d in freed])
        self.assertEqual({('available', None)}, set(self._states().values()))

    def test_claim_of_a_taken_device_changes_nothing(self):
        objects.PciDeviceList.claim_for_instance(
            self.context, [self.ids[2]], OTHER)
        before = self._states()
        exc = self.assertRaises(
            exception.PciDeviceInvalidStatus,
            objects.PciDeviceList.claim_for_instance, self.context,
            self.ids[:3], INSTANCE)
        self.assertEqual('0000:81:00.2', exc.kwargs['address'])
        self.assertEqual('claimed', exc.kwargs['status'])
        self.assertEqual(before, self._states())

    def test_allocate_and_free_refuse_another_instances_devices(self):
        objects.PciDeviceList.claim_for_instance(
            self.context, self.ids[:2], INSTANCE)
        objects.PciDeviceList.claim_for_instance(
            self.context, [self.ids[2]], OTHER)
        before = self._states()
        for method in (objects.PciDeviceList.allocate_for_instance,
                       objects.PciDeviceList.free_for_instance):
            exc = self.assertRaises(exception.PciDeviceInvalidOwner, method,
                                    self.context, self.ids[:3], INSTANCE)
            self.assertEqual(OTHER, exc.kwargs['owner'])
            self.assertEqual(before, self._states())

    def test_deleted_device_is_not_found_and_nothing_moves(self):
        self.devices[3].destroy()
        self.assertRaises(exception.PciDeviceNotFound,
                          objects.PciDeviceList.claim_for_instance,
                          self.context, self.ids, INSTANCE)
        self.assertEqual({('available', None)}, {
            v for k, v in self._states().items() if k != '0000:81:00.3'})

    def test_race_between_two_readers_one_wins(self):
        # Both read the devices available; the first to write wins; the
        # other's overlapping claim leaves nothing claimed.
        objects.PciDeviceList.claim_for_instance(
            self.context, self.ids[1:3], OTHER)
        self.assertRaises(exception.PciDeviceInvalidStatus,
                          objects.PciDeviceList.claim_for_instance,
                          self.context, self.ids[:2], INSTANCE)
        self.assertEqual({'0000:81:00.1': ('claimed', OTHER),
                          '0000:81:00.2': ('claimed', OTHER),
                          '0000:81:00.0': ('available', None),
                          '0000:81:00.3': ('available', None)},
                         self._states())

    def test_refresh_from_takes_the_stored_state(self):
        device = self.devices[0]
        stored = objects.PciDeviceList.claim_for_instance(
            self.context, [device.id], INSTANCE)[0]
        device.refresh_from(stored)
        self.assertEqual(('claimed', INSTANCE),
                         (device.status, device.instance_uuid))
        self.assertEqual(set(), device.obj_what_changed())
        # The next save compares against the refreshed status.
        device.free(INSTANCE)
        device.save()
        self.assertEqual(('available', None),
                         self._states()['0000:81:00.0'])
        self.assertRaises(exception.ObjectActionError,
                          device.refresh_from, self.devices[1])


class TestConcurrentPciClaims(_Devices, db_base.DBTestCase):
    """Two threads at once, each with its own connection.

    PostgreSQL and MariaDB only: the test's in-memory SQLite database is
    one connection shared by every thread, which cannot hold two
    transactions (SQLite runs one writer at a time anyway).
    """

    scenarios = [s for s in db_base.BACKEND_SCENARIOS if s[0] != 'sqlite']

    def test_overlapping_claims_exactly_one_wins(self):
        for round_ in range(5):
            start = threading.Barrier(2)
            outcome = {}

            def claim(instance, ids):
                ctx = resobj_context.get_admin_context()
                start.wait()
                try:
                    objects.PciDeviceList.claim_for_instance(ctx, ids,
                                                             instance)
                    outcome[instance] = 'won'
                except Exception as exc:
                    outcome[instance] = exc

            threads = [
                threading.Thread(target=claim,
                                 args=(INSTANCE, self.ids[:3])),
                threading.Thread(target=claim, args=(OTHER, self.ids[1:]))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            winners = [i for i, o in outcome.items() if o == 'won']
            self.assertEqual(1, len(winners), outcome)
            loser = OTHER if winners == [INSTANCE] else INSTANCE
            self.assertIsInstance(outcome[loser], exception.Conflict)
            held = {v[1] for v in self._states().values()}
            self.assertNotIn(loser, held)
            self.assertEqual(3, len(objects.PciDeviceList.get_by_instance_uuid(
                self.context, winners[0])))
            objects.PciDeviceList.free_for_instance(
                self.context, self.ids[:3] if winners == [INSTANCE]
                else self.ids[1:], winners[0])
