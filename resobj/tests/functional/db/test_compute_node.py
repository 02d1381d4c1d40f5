"""The compute_nodes DB API and its online migrations, on every backend."""

import sqlalchemy as sa

from resobj.db.api import compute_node as cn_db
from resobj.db import facade
from resobj.db.models import compute_node as models
from resobj import exception
from resobj.tests.functional import db_base

_TABLE = models.ComputeNode.__table__


def node_values(**kw):
    values = {'host': 'host1', 'hypervisor_hostname': 'node1',
              'hypervisor_type': 'qemu', 'hypervisor_version': 8002000,
              'cpu_info': '{}', 'vcpus': 16, 'memory_mb': 65536,
              'local_gb': 500, 'vcpus_used': 0, 'memory_mb_used': 512,
              'local_gb_used': 0}
    values.update(kw)
    return values


@facade.writer
def insert_legacy_row(context, **kw):
    """A row as old code wrote it: no uuid, and whatever ratios given."""
    values = node_values(**kw)
    return context.session.execute(
        sa.insert(_TABLE).values(values)).inserted_primary_key[0]


class TestComputeNodeDB(db_base.DBTestCase):

    def test_create_and_lookups(self):
        row = cn_db.create(self.context, node_values(stats={'a': '1'}))
        self.assertEqual(36, len(row['uuid']))
        self.assertEqual({'a': '1'}, row['stats'])
        self.assertEqual(row, cn_db.get(self.context, row['id']))
        self.assertEqual(row, cn_db.get_by_uuid(self.context, row['uuid']))
        self.assertEqual(row, cn_db.get_by_host_and_nodename(
            self.context, 'host1', 'node1'))

    def test_duplicate_host_and_node(self):
        cn_db.create(self.context, node_values())
        self.assertRaises(exception.ComputeNodeExists, cn_db.create,
                          self.context, node_values())

    def test_not_found_names_the_key(self):
        exc = self.assertRaises(exception.ComputeNodeNotFound,
                                cn_db.get_by_host_and_nodename,
                                self.context, 'h', 'n')
        self.assertIn('h/n', str(exc))

    def test_get_all_by_host(self):
        cn_db.create(self.context, node_values(hypervisor_hostname='a'))
        cn_db.create(self.context, node_values(hypervisor_hostname='b'))
        cn_db.create(self.context, node_values(host='other'))
        self.assertEqual(3, len(cn_db.get_all(self.context)))
        self.assertEqual(['a', 'b'], [r['hypervisor_hostname'] for r in
                                      cn_db.get_all(self.context,
                                                    host='host1')])

    def test_update_and_destroy(self):
        row = cn_db.create(self.context, node_values())
        updated = cn_db.update(self.context, row['id'],
                               {'vcpus_used': 4, 'stats': {'x': 'y'}})
        self.assertEqual(4, updated['vcpus_used'])
        self.assertEqual({'x': 'y'}, updated['stats'])
        deleted = cn_db.destroy(self.context, row['id'])
        self.assertEqual(row['id'], deleted['deleted'])
        self.assertRaises(exception.ComputeNodeNotFound, cn_db.update,
                          self.context, row['id'], {'vcpus_used': 1})
        # The key is free again after a soft delete.
        cn_db.create(self.context, node_values())

    def test_set_uuid_if_missing_is_compare_and_swap(self):
        node_id = insert_legacy_row(self.context)
        first = cn_db.set_uuid_if_missing(
            self.context, node_id, '11111111-1111-4111-8111-111111111111')
        second = cn_db.set_uuid_if_missing(
            self.context, node_id, '22222222-2222-4222-8222-222222222222')
        self.assertEqual('11111111-1111-4111-8111-111111111111', first)
        self.assertEqual(first, second)

    def test_backfill_uuids_in_batches(self):
        for n in range(5):
            insert_legacy_row(self.context, hypervisor_hostname='n%d' % n)
        cn_db.create(self.context, node_values(hypervisor_hostname='new'))
        self.assertEqual(5, cn_db.count_lacking_uuids(self.context))
        self.assertEqual((3, 3), cn_db.backfill_uuids(self.context, 3))
        self.assertEqual(2, cn_db.count_lacking_uuids(self.context))
        self.assertEqual((2, 2), cn_db.backfill_uuids(self.context, 3))
        self.assertEqual(0, cn_db.count_lacking_uuids(self.context))
        self.assertEqual((0, 0), cn_db.backfill_uuids(self.context, 3))
        uuids = [r['uuid'] for r in cn_db.get_all(self.context)]
        self.assertEqual(6, len(set(uuids)))
        self.assertNotIn(None, uuids)

    def test_fill_empty_ratios(self):
        defaults = {'cpu': 4.0, 'ram': 1.5, 'disk': 1.0}
        a = insert_legacy_row(self.context, hypervisor_hostname='a')
        b = insert_legacy_row(self.context, hypervisor_hostname='b',
                              cpu_allocation_ratio=0.0,
                              ram_allocation_ratio=2.0,
                              disk_allocation_ratio=3.0)
        insert_legacy_row(self.context, hypervisor_hostname='c',
                          cpu_allocation_ratio=8.0,
                          ram_allocation_ratio=2.0,
                          disk_allocation_ratio=3.0)
        self.assertEqual(2, cn_db.count_empty_ratios(self.context))
        self.assertEqual((1, 1), cn_db.fill_empty_ratios(
            self.context, 1, defaults))
        self.assertEqual(1, cn_db.count_empty_ratios(self.context))
        self.assertEqual((1, 1), cn_db.fill_empty_ratios(
            self.context, 5, defaults))
        self.assertEqual(0, cn_db.count_empty_ratios(self.context))
        self.assertEqual((0, 0), cn_db.fill_empty_ratios(
            self.context, 5, defaults))
        row_a, row_b = (cn_db.get(self.context, i) for i in (a, b))
        self.assertEqual((4.0, 1.5, 1.0), tuple(
            row_a[c] for c in cn_db.RATIO_COLUMNS))
        # Only the empty ratio changed; the set ones were kept.
        self.assertEqual((4.0, 2.0, 3.0), tuple(
            row_b[c] for c in cn_db.RATIO_COLUMNS))

    def test_ratios_keep_double_precision(self):
        # MySQL's FLOAT would read 1.1 back as 1.100000023841858.
        row = cn_db.create(self.context, node_values(
            cpu_allocation_ratio=1.1, ram_allocation_ratio=0.3,
            disk_allocation_ratio=16.7))
        row = cn_db.get(self.context, row['id'])
        self.assertEqual((1.1, 0.3, 16.7), tuple(
            row[c] for c in cn_db.RATIO_COLUMNS))
