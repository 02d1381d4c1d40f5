"""The pci_devices DB API on every backend."""

import sqlalchemy as sa

from resobj.db.api import pci_device as pci_device_db
from resobj.db import facade
from resobj.db import models
from resobj import exception
from resobj.tests.functional import db_base


@facade.writer
def create_compute_node(context, host='node1'):
    """A compute_nodes row with its required columns; returns its id.

    The compute node DB API is not ours to write; devices only need a row
    their foreign key can point at.
    """
    table = models.compute_node.ComputeNode.__table__
    result = context.session.execute(sa.insert(table).values(
        host=host, hypervisor_hostname=host, hypervisor_type='QEMU',
        hypervisor_version=8002000, cpu_info='{}', vcpus=8,
        memory_mb=16384, local_gb=100, vcpus_used=0, memory_mb_used=0,
        local_gb_used=0))
    return result.inserted_primary_key[0]


def device_values(compute_node_id, address='0000:81:00.1', **kw):
    values = {'compute_node_id': compute_node_id, 'address': address,
              'vendor_id': '8086', 'product_id': '1520',
              'dev_type': 'type-VF', 'status': 'available',
              'label': 'label_8086_1520', 'extra_info': {}}
    values.update(kw)
    return values


@facade.reader
def raw_extra_info(context, device_id):
    table = models.pci_device.PciDevice.__table__
    return context.session.execute(sa.select(table.c.extra_info).where(
        table.c.id == device_id)).scalar_one()


class TestPciDeviceDB(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.node = create_compute_node(self.context)

    def _create(self, **kw):
        return pci_device_db.create(self.context,
                                    device_values(self.node, **kw))

    def test_create_fills_defaults_and_get_returns_the_row(self):
        row = self._create(numa_node=1, parent_addr='0000:81:00.0')
        self.assertIsInstance(row['id'], int)
        self.assertIsNotNone(row['created_at'])
        self.assertIsNone(row['updated_at'])
        self.assertEqual(0, row['deleted'])
        self.assertEqual('0000:81:00.0', row['parent_addr'])
        self.assertEqual(1, row['numa_node'])
        self.assertEqual(row, pci_device_db.get(self.context, row['id']))

    def test_extra_info_is_stored_as_json_and_read_as_a_dict(self):
        extra = {'phys_function': '0000:81:00.0', 'capabilities': 'é,"x"'}
        row = self._create(extra_info=extra)
        self.assertEqual(extra, row['extra_info'])
        self.assertIsInstance(raw_extra_info(self.context, row['id']), str)
        updated = pci_device_db.update(self.context, row['id'],
                                       {'extra_info': {'a': '1'}})
        self.assertEqual({'a': '1'}, updated['extra_info'])

    def test_null_extra_info_reads_as_an_empty_dict(self):
        row = self._create(extra_info=None)
        self.assertIsNone(raw_extra_info(self.context, row['id']))
        self.assertEqual({}, row['extra_info'])

    def test_same_address_on_one_node_is_refused(self):
        self._create()
        exc = self.assertRaises(exception.PciDeviceExists, self._create)
        self.assertEqual('0000:81:00.1', exc.kwargs['address'])
        self.assertEqual(self.node, exc.kwargs['compute_node_id'])

    def test_same_address_on_another_node_is_fine(self):
        self._create()
        other = create_compute_node(self.context, host='node2')
        row = pci_device_db.create(self.context, device_values(other))
        self.assertEqual(other, row['compute_node_id'])

    def test_unknown_compute_node_is_refused(self):
        exc = self.assertRaises(
            exception.PciDeviceComputeNodeNotFound, pci_device_db.create,
            self.context, device_values(self.node + 1000))
        self.assertIn(str(self.node + 1000), str(exc))

    def test_lookups_by_node_and_instance(self):
        instance = '5d0c1e5b-3f4a-4b8e-9a1d-2c7e6f8b9a01'
        a = self._create(address='0000:81:00.1', instance_uuid=instance,
                         status='allocated')
        b = self._create(address='0000:81:00.2')
        c = self._create(address='0000:81:00.3', instance_uuid=instance,
                         status='claimed')
        other = create_compute_node(self.context, host='node2')
        d = pci_device_db.create(self.context, device_values(other))
        self.assertEqual(
            [a['id'], b['id'], c['id']],
            [r['id'] for r in pci_device_db.get_all_by_compute_node(
                self.context, self.node)])
        self.assertEqual([d['id']], [
            r['id'] for r in pci_device_db.get_all_by_compute_node(
                self.context, other)])
        self.assertEqual([a['id'], c['id']], [
            r['id'] for r in pci_device_db.get_all_by_instance_uuid(
                self.context, instance)])
        self.assertEqual([], pci_device_db.get_all_by_compute_node(
            self.context, other + 1000))

    def test_not_found_names_the_key(self):
        exc = self.assertRaises(exception.PciDeviceNotFound,
                                pci_device_db.get, self.context, 4242)
        self.assertIn('id=4242', str(exc))

    def test_update(self):
        row = self._create()
        updated = pci_device_db.update(
            self.context, row['id'],
            {'status': 'claimed',
             'instance_uuid': '5d0c1e5b-3f4a-4b8e-9a1d-2c7e6f8b9a01'})
        self.assertEqual('claimed', updated['status'])
        self.assertEqual('5d0c1e5b-3f4a-4b8e-9a1d-2c7e6f8b9a01',
                         updated['instance_uuid'])
        self.assertIsNotNone(updated['updated_at'])
        # Columns not named are kept.
        self.assertEqual('label_8086_1520', updated['label'])

    def test_update_into_a_duplicate_address_is_refused(self):
        self._create(address='0000:81:00.1')
        b = self._create(address='0000:81:00.2')
        exc = self.assertRaises(exception.PciDeviceExists,
                                pci_device_db.update, self.context, b['id'],
                                {'address': '0000:81:00.1'})
        # The node id comes from the row: the update did not name it.
        self.assertEqual(self.node, exc.kwargs['compute_node_id'])
        self.assertEqual('0000:81:00.2',
                         pci_device_db.get(self.context, b['id'])['address'])

    def test_update_of_missing_or_deleted_row_is_not_found(self):
        self.assertRaises(exception.PciDeviceNotFound, pci_device_db.update,
                          self.context, 4242, {'status': 'claimed'})
        row = self._create()
        pci_device_db.destroy(self.context, row['id'])
        self.assertRaises(exception.PciDeviceNotFound, pci_device_db.update,
                          self.context, row['id'], {'status': 'claimed'})
        # Even a context that reads deleted rows cannot write them.
        self.assertRaises(exception.PciDeviceNotFound, pci_device_db.update,
                          self.context.elevated(read_deleted='yes'),
                          row['id'], {'status': 'claimed'})

    def test_destroy_soft_deletes_and_frees_the_address(self):
        first = self._create()
        gone = pci_device_db.destroy(self.context, first['id'])
        self.assertEqual(first['id'], gone['deleted'])
        self.assertIsNotNone(gone['deleted_at'])
        self.assertEqual('deleted', gone['status'])
        self.assertIsNone(gone['updated_at'])
        self.assertRaises(exception.PciDeviceNotFound, pci_device_db.get,
                          self.context, first['id'])
        self.assertEqual([], pci_device_db.get_all_by_compute_node(
            self.context, self.node))
        second = self._create()
        every = self.context.elevated(read_deleted='yes')
        self.assertEqual(
            [(first['id'], first['id']), (second['id'], 0)],
            [(r['id'], r['deleted']) for r in
             pci_device_db.get_all_by_compute_node(every, self.node)])
        only = self.context.elevated(read_deleted='only')
        self.assertEqual(first['id'],
                         pci_device_db.get(only, first['id'])['id'])

    def test_destroy_of_missing_or_deleted_row_is_not_found(self):
        self.assertRaises(exception.PciDeviceNotFound, pci_device_db.destroy,
                          self.context, 4242)
        row = self._create(status='removed')
        pci_device_db.destroy(self.context, row['id'])
        self.assertRaises(exception.PciDeviceNotFound, pci_device_db.destroy,
                          self.context, row['id'])

    def test_unique_constraint_includes_deleted(self):
        names = {tuple(c['column_names']) for c in sa.inspect(
            self.engine).get_unique_constraints('pci_devices')}
        self.assertIn(('compute_node_id', 'address', 'deleted'), names)
