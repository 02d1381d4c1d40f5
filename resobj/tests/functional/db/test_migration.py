"""The migrations DB API on every backend, legacy rows included."""

import datetime
from unittest import mock

from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import migration as migration_db
from resobj.db import facade
from resobj.db.models import base as models_base
from resobj.db.models import migration as models
from resobj import exception
from resobj.tests.functional import db_base

_TABLE = models.Migration.__table__
INSTANCE = 'c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f'
UUID_A = '00000000-0000-4000-8000-00000000000a'
UUID_B = '00000000-0000-4000-8000-00000000000b'


@facade.writer
def insert_legacy(context, **values):
    """A row as old code wrote it: by default no uuid and no type."""
    row = {'source_compute': 'src', 'source_node': 'src-node',
           'dest_compute': 'dst', 'dest_node': 'dst-node',
           'instance_uuid': INSTANCE, 'status': 'migrating',
           'old_instance_type_id': 1, 'new_instance_type_id': 1,
           'created_at': models_base.utcnow(),
           # Set, so tests can see that completing a row keeps it.
           'updated_at': datetime.datetime(2020, 1, 2, 3, 4, 5)}
    row.update(values)
    return context.session.execute(
        sa.insert(_TABLE).values(row)).inserted_primary_key[0]


@facade.reader
def raw_row(context, migration_id):
    return dict(context.session.execute(
        sa.select(_TABLE).where(_TABLE.c.id == migration_id)
    ).mappings().one())


class TestMigrationDB(db_base.DBTestCase):

    def _create(self, **values):
        row = {'source_compute': 'src', 'source_node': 'src-node',
               'dest_compute': 'dst', 'dest_node': 'dst-node',
               'instance_uuid': INSTANCE, 'status': 'migrating',
               'migration_type': 'live-migration'}
        row.update(values)
        return migration_db.create(self.context, row)

    def test_create_fills_uuid_and_defaults(self):
        row = self._create()
        self.assertTrue(uuidutils.is_uuid_like(row['uuid']))
        self.assertFalse(row['hidden'])
        self.assertEqual(0, row['deleted'])
        self.assertIsNotNone(row['created_at'])
        self.assertEqual('live-migration', row['migration_type'])

    def test_duplicate_uuid_is_refused(self):
        self._create(uuid=UUID_A)
        exc = self.assertRaises(exception.MigrationExists, self._create,
                                uuid=UUID_A)
        self.assertEqual(UUID_A, exc.kwargs['uuid'])
        other = self._create()
        self.assertRaises(exception.MigrationExists, migration_db.update,
                          self.context, other['id'], {'uuid': UUID_A})

    def test_lookups_and_not_found(self):
        row = self._create()
        self.assertEqual(row, migration_db.get(self.context, row['id']))
        self.assertEqual(row, migration_db.get_by_uuid(self.context,
                                                       row['uuid']))
        exc = self.assertRaises(exception.MigrationNotFound,
                                migration_db.get, self.context, 4242)
        self.assertEqual('id=4242', exc.kwargs['key'])
        exc = self.assertRaises(exception.MigrationNotFound,
                                migration_db.get_by_uuid, self.context,
                                UUID_B)
        self.assertEqual('uuid=%s' % UUID_B, exc.kwargs['key'])

    def test_reads_infer_the_type_of_legacy_rows_without_writing_it(self):
        same = insert_legacy(self.context)
        resized = insert_legacy(self.context, new_instance_type_id=2)
        self.assertEqual('migration', migration_db.get(
            self.context, same)['migration_type'])
        self.assertEqual('resize', migration_db.get(
            self.context, resized)['migration_type'])
        self.assertIsNone(raw_row(self.context, same)['migration_type'])
        self.assertIsNone(raw_row(self.context, same)['uuid'])

    def test_ensure_uuids_stores_a_uuid_once(self):
        legacy = insert_legacy(self.context)
        modern = self._create(uuid=UUID_B)['id']
        before = raw_row(self.context, legacy)
        first = migration_db.ensure_uuids(self.context, [legacy, modern])
        self.assertTrue(uuidutils.is_uuid_like(first[legacy]))
        self.assertEqual(UUID_B, first[modern])
        stored = raw_row(self.context, legacy)
        self.assertEqual(first[legacy], stored['uuid'])
        # Completing a row is not an update of its data.
        self.assertEqual(before['updated_at'], stored['updated_at'])
        self.assertEqual(first, migration_db.ensure_uuids(
            self.context, [legacy, modern]))

    def test_ensure_uuids_keeps_the_first_writers_uuid(self):
        legacy = insert_legacy(self.context)
        with mock.patch.object(uuidutils, 'generate_uuid',
                               side_effect=[UUID_A, UUID_B]) as gen:
            # Two readers that both saw the NULL: the second one's
            # candidate loses the compare-and-swap.
            first = migration_db.ensure_uuids(self.context, [legacy])
            second = migration_db.ensure_uuids(self.context, [legacy])
        self.assertEqual({legacy: UUID_A}, first)
        self.assertEqual({legacy: UUID_A}, second)
        self.assertEqual(2, gen.call_count)
        self.assertEqual(UUID_A, raw_row(self.context, legacy)['uuid'])

    def test_ensure_uuids_of_a_missing_row_is_not_found(self):
        self.assertRaises(exception.MigrationNotFound,
                          migration_db.ensure_uuids, self.context, [4242])

    def test_update_and_destroy(self):
        row = self._create()
        updated = migration_db.update(self.context, row['id'],
                                      {'status': 'finished'})
        self.assertEqual('finished', updated['status'])
        self.assertIsNotNone(updated['updated_at'])
        deleted = migration_db.destroy(self.context, row['id'])
        self.assertEqual(row['id'], deleted['deleted'])
        self.assertIsNotNone(deleted['deleted_at'])
        self.assertRaises(exception.MigrationNotFound, migration_db.get,
                          self.context, row['id'])
        self.assertRaises(exception.MigrationNotFound, migration_db.update,
                          self.context, row['id'], {'status': 'x'})
        self.assertRaises(exception.MigrationNotFound, migration_db.destroy,
                          self.context, row['id'])

    def test_get_by_instance_uuid(self):
        first = self._create()
        other = self._create(instance_uuid=UUID_A)
        gone = self._create()
        migration_db.destroy(self.context, gone['id'])
        legacy = insert_legacy(self.context)
        self.assertEqual(
            [first['id'], legacy],
            [r['id'] for r in migration_db.get_by_instance_uuid(
                self.context, INSTANCE)])
        every = self.context.elevated(read_deleted='yes')
        self.assertEqual(
            [first['id'], gone['id'], legacy],
            [r['id'] for r in migration_db.get_by_instance_uuid(
                every, INSTANCE)])
        self.assertEqual([other['id']], [
            r['id'] for r in migration_db.get_by_instance_uuid(
                self.context, UUID_A)])

    def test_in_progress_by_host_and_node(self):
        out = self._create(source_compute='h', source_node='n')
        into = self._create(dest_compute='h', dest_node='n',
                            status='finished')
        legacy = insert_legacy(self.context, dest_compute='h',
                               dest_node='n', status='pre-migrating')
        # Same host, other node; other host, same node: not ours.
        self._create(source_compute='h', source_node='other')
        self._create(dest_compute='other', dest_node='n')
        # A node name on one side and the host on the other: not ours.
        self._create(source_compute='h', dest_node='n')
        for status in migration_db.TERMINAL_STATUSES:
            self._create(source_compute='h', source_node='n', status=status)
            self._create(dest_compute='h', dest_node='n', status=status)
        gone = self._create(source_compute='h', source_node='n')
        migration_db.destroy(self.context, gone['id'])

        # Deleted migrations never count, whatever the context shows.
        for ctx in (self.context,
                    self.context.elevated(read_deleted='yes')):
            rows = migration_db.get_in_progress_by_host_and_node(
                ctx, 'h', 'n')
            self.assertEqual([out['id'], into['id'], legacy],
                             [r['id'] for r in rows])
        self.assertEqual('migration', rows[2]['migration_type'])
        self.assertEqual([], migration_db.get_in_progress_by_host_and_node(
            self.context, 'n', 'h'))

    def test_terminal_statuses(self):
        self.assertEqual(
            {'confirmed', 'reverted', 'error', 'failed', 'completed',
             'done', 'cancelled'}, migration_db.TERMINAL_STATUSES)


class TestCompleteLegacyRows(db_base.DBTestCase):

    def test_batches_until_nothing_is_left(self):
        no_uuid = insert_legacy(self.context, migration_type='evacuation')
        no_type = insert_legacy(self.context, uuid=UUID_A,
                                new_instance_type_id=5)
        neither = insert_legacy(self.context)
        resize = insert_legacy(self.context, old_instance_type_id=None,
                               new_instance_type_id=3)
        complete = insert_legacy(self.context, uuid=UUID_B,
                                 migration_type='live-migration')
        deleted = insert_legacy(self.context)
        migration_db.destroy(self.context, deleted)
        before = {i: raw_row(self.context, i)
                  for i in (no_uuid, no_type, neither, resize)}

        self.assertEqual(4, migration_db.count_legacy_rows(self.context))
        self.assertEqual((3, 3), migration_db.complete_legacy_rows(
            self.context, 3))
        # Oldest first: the last legacy row is still untouched.
        self.assertIsNone(raw_row(self.context, resize)['uuid'])
        self.assertEqual(1, migration_db.count_legacy_rows(self.context))
        self.assertEqual((1, 1), migration_db.complete_legacy_rows(
            self.context, 3))
        self.assertEqual(0, migration_db.count_legacy_rows(self.context))
        self.assertEqual((0, 0), migration_db.complete_legacy_rows(
            self.context, 3))

        rows = {i: raw_row(self.context, i)
                for i in (no_uuid, no_type, neither, resize, complete)}
        self.assertEqual(
            {no_uuid: 'evacuation', no_type: 'resize',
             neither: 'migration', resize: 'resize',
             complete: 'live-migration'},
            {i: r['migration_type'] for i, r in rows.items()})
        self.assertEqual(UUID_A, rows[no_type]['uuid'])
        self.assertEqual(UUID_B, rows[complete]['uuid'])
        uuids = {r['uuid'] for r in rows.values()}
        self.assertEqual(5, len(uuids))
        self.assertTrue(all(uuidutils.is_uuid_like(u) for u in uuids))
        for i, row in before.items():
            self.assertEqual(row['updated_at'], rows[i]['updated_at'])
        # Live rows only: the deleted one is left as it was.
        gone = raw_row(self.context, deleted)
        self.assertIsNone(gone['uuid'])
        self.assertIsNone(gone['migration_type'])

    def test_smaller_batch_than_the_backlog(self):
        for _ in range(5):
            insert_legacy(self.context)
        found, done = migration_db.complete_legacy_rows(self.context, 2)
        self.assertEqual((2, 2), (found, done))
        self.assertLess(done, 5)
        self.assertEqual((3, 3), migration_db.complete_legacy_rows(
            self.context, 50))
        self.assertEqual((0, 0), migration_db.complete_legacy_rows(
            self.context, 50))

    def test_a_uuid_stored_by_a_reader_is_kept(self):
        legacy = insert_legacy(self.context)
        stored = migration_db.ensure_uuids(self.context, [legacy])[legacy]
        # The type is still missing, so the row is found and completed,
        # with the reader's uuid.
        self.assertEqual((1, 1), migration_db.complete_legacy_rows(
            self.context, 10))
        self.assertEqual(stored, raw_row(self.context, legacy)['uuid'])

    def test_max_count_must_be_positive(self):
        self.assertRaises(ValueError, migration_db.complete_legacy_rows,
                          self.context, 0)
