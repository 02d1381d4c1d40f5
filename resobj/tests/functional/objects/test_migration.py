"""The Migration objects over a real database, on every backend."""

from unittest import mock

from oslo_utils import uuidutils

from resobj.db.api import migration as migration_db
from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.tests.functional.db import test_migration as db_tests
from resobj.tests.functional import db_base

objects.register_all()

INSTANCE = db_tests.INSTANCE
UUID_A = db_tests.UUID_A
UUID_B = db_tests.UUID_B


class TestMigrationObject(db_base.DBTestCase):

    def _make(self, **kw):
        values = {'source_compute': 'src', 'source_node': 'src-node',
                  'dest_compute': 'dst', 'dest_node': 'dst-node',
                  'instance_uuid': INSTANCE, 'status': 'migrating',
                  'migration_type': 'live-migration'}
        values.update(kw)
        migration = objects.Migration(self.context, **values)
        migration.create()
        return migration

    def _legacy(self, **kw):
        return db_tests.insert_legacy(self.context, **kw)

    def test_create_generates_uuid_and_resets_changes(self):
        migration = self._make()
        self.assertTrue(uuidutils.is_uuid_like(migration.uuid))
        self.assertIsInstance(migration.id, int)
        self.assertFalse(migration.hidden)
        self.assertEqual(set(), migration.obj_what_changed())
        self.assertEqual(migration.uuid,
                         db_tests.raw_row(self.context, migration.id)['uuid'])

    def test_create_keeps_a_given_uuid_and_refuses_a_duplicate(self):
        self.assertEqual(UUID_A, self._make(uuid=UUID_A).uuid)
        self.assertRaises(exception.MigrationExists, self._make,
                          uuid=UUID_A)

    def test_create_stores_the_inferred_type_when_none_is_given(self):
        migration = objects.Migration(
            self.context, instance_uuid=INSTANCE, status='pre-migrating',
            old_instance_type_id=1, new_instance_type_id=2)
        migration.create()
        self.assertEqual('resize', migration.migration_type)
        self.assertEqual('resize', db_tests.raw_row(
            self.context, migration.id)['migration_type'])

    def test_create_requires_instance_and_status(self):
        for missing in ('instance_uuid', 'status'):
            values = {'instance_uuid': INSTANCE, 'status': 'migrating'}
            del values[missing]
            exc = self.assertRaises(exception.ObjectActionError,
                                    objects.Migration(self.context,
                                                      **values).create)
            self.assertIn(missing, str(exc))
        self.assertRaises(exception.ObjectActionError, self._make().create)

    def test_get_by_id_and_uuid(self):
        migration = self._make(hidden=True, old_instance_type_id=3,
                               new_instance_type_id=4, dest_host='10.0.0.2')
        for found in (
                objects.Migration.get_by_id(self.context, migration.id),
                objects.Migration.get_by_uuid(self.context,
                                              migration.uuid)):
            self.assertEqual(migration.obj_to_primitive(),
                             found.obj_to_primitive())
        exc = self.assertRaises(exception.MigrationNotFound,
                                objects.Migration.get_by_uuid,
                                self.context, UUID_B)
        self.assertIn(UUID_B, str(exc))

    def test_legacy_row_is_completed_on_read(self):
        legacy = self._legacy(new_instance_type_id=2)
        migration = objects.Migration.get_by_id(self.context, legacy)
        self.assertEqual('resize', migration.migration_type)
        self.assertFalse(migration.hidden)
        self.assertTrue(uuidutils.is_uuid_like(migration.uuid))
        self.assertEqual(set(), migration.obj_what_changed())
        row = db_tests.raw_row(self.context, legacy)
        # The uuid is written back; the type is left to the online
        # migration.
        self.assertEqual(migration.uuid, row['uuid'])
        self.assertIsNone(row['migration_type'])
        again = objects.Migration.get_by_uuid(self.context, migration.uuid)
        self.assertEqual(migration.id, again.id)

    def test_two_readers_of_a_legacy_row_agree_on_its_uuid(self):
        legacy = self._legacy()
        # Both read the row while its uuid was still NULL...
        first_row = migration_db.get(self.context, legacy)
        second_row = migration_db.get(self.context, legacy)
        self.assertIsNone(second_row['uuid'])
        with mock.patch.object(uuidutils, 'generate_uuid',
                               side_effect=[UUID_A, UUID_B]):
            first = objects.Migration._from_db_row(
                self.context, objects.Migration(), first_row)
            second = objects.Migration._from_db_row(
                self.context, objects.Migration(), second_row)
        # ...and the second, losing the compare-and-swap, takes the
        # first's uuid instead of its own candidate.
        self.assertEqual(UUID_A, first.uuid)
        self.assertEqual(UUID_A, second.uuid)
        self.assertEqual(UUID_A,
                         db_tests.raw_row(self.context, legacy)['uuid'])

    def test_saving_a_legacy_row_does_not_store_the_guessed_type(self):
        legacy = self._legacy()
        migration = objects.Migration.get_by_id(self.context, legacy)
        migration.status = 'finished'
        migration.save()
        row = db_tests.raw_row(self.context, legacy)
        self.assertEqual('finished', row['status'])
        self.assertIsNone(row['migration_type'])
        migration.migration_type = 'migration'
        migration.save()
        self.assertEqual('migration', db_tests.raw_row(
            self.context, legacy)['migration_type'])

    def test_save_writes_only_changes(self):
        migration = self._make()
        other = objects.Migration.get_by_id(self.context, migration.id)
        other.hidden = True
        other.save()
        migration.status = 'completed'
        migration.save()
        fresh = objects.Migration.get_by_id(self.context, migration.id)
        self.assertTrue(fresh.hidden)
        self.assertEqual('completed', fresh.status)
        self.assertEqual(set(), migration.obj_what_changed())

    def test_destroy(self):
        migration = self._make()
        migration.destroy()
        self.assertTrue(migration.deleted)
        self.assertIsNotNone(migration.deleted_at)
        self.assertEqual(set(), migration.obj_what_changed())
        self.assertRaises(exception.MigrationNotFound,
                          objects.Migration.get_by_id, self.context,
                          migration.id)

    def test_destroy_of_a_legacy_row_gives_it_a_uuid(self):
        legacy = self._legacy()
        migration = objects.Migration.get_by_id(self.context, legacy)
        migration.destroy()
        self.assertTrue(migration.deleted)
        self.assertEqual(migration.uuid,
                         db_tests.raw_row(self.context, legacy)['uuid'])

    def test_fields_missing_from_a_1_0_primitive(self):
        stored = self._make(old_instance_type_id=1, new_instance_type_id=1)
        primitive = stored.obj_to_primitive('1.0')
        old = base.ResobjObject.obj_from_primitive(primitive, self.context)
        # Inferred, not read: the 1.0 peer never knew it was live.
        self.assertEqual('migration', old.migration_type)
        self.assertFalse(old.hidden)
        # The uuid is the stored one.
        self.assertEqual(stored.uuid, old.uuid)
        self.assertEqual(set(), old.obj_what_changed())
        old.status = 'running'
        old.save()
        fresh = objects.Migration.get_by_id(self.context, stored.id)
        self.assertEqual('running', fresh.status)
        self.assertEqual('live-migration', fresh.migration_type)

    def test_uuid_of_a_legacy_row_from_a_1_1_primitive(self):
        legacy = self._legacy()
        data = {'id': legacy, 'instance_uuid': INSTANCE,
                'status': 'migrating', 'migration_type': 'migration',
                'hidden': False}
        old = objects.Migration(self.context, **data)
        old.obj_reset_changes()
        self.assertTrue(uuidutils.is_uuid_like(old.uuid))
        self.assertEqual(old.uuid,
                         db_tests.raw_row(self.context, legacy)['uuid'])

    def test_list_in_progress_completes_legacy_rows(self):
        mine = self._make(source_compute='h', source_node='n')
        legacy = [self._legacy(dest_compute='h', dest_node='n')
                  for _ in range(2)]
        self._make(source_compute='h', source_node='n', status='confirmed')
        found = objects.MigrationList.get_in_progress_by_host_and_node(
            self.context, 'h', 'n')
        self.assertEqual([mine.id] + legacy, [m.id for m in found])
        for migration in found:
            self.assertIsInstance(migration, objects.Migration)
            self.assertEqual(
                migration.uuid,
                db_tests.raw_row(self.context, migration.id)['uuid'])
        self.assertEqual(3, len({m.uuid for m in found}))
        self.assertEqual(['live-migration', 'migration', 'migration'],
                         [m.migration_type for m in found])

    def test_list_by_instance_uuid(self):
        first = self._make()
        self._make(instance_uuid=UUID_A)
        legacy = self._legacy()
        found = objects.MigrationList.get_by_instance_uuid(self.context,
                                                           INSTANCE)
        self.assertEqual([first.id, legacy], [m.id for m in found])
        self.assertTrue(uuidutils.is_uuid_like(found[1].uuid))
        self.assertEqual(0, len(objects.MigrationList.get_by_instance_uuid(
            self.context, UUID_B)))
