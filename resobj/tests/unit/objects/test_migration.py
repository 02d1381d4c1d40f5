"""Migration without a database: backports, lazy fields, the type rule."""

from resobj.db.api import migration as migration_db
from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import migration as migration_obj
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'
NEW_IN_1_1 = {'migration_type', 'hidden'}


class TestMigrationBackports(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.migration = samples.make('Migration')
        self.full = self.migration.obj_to_primitive()[DATA]

    def _fields(self, version):
        primitive = self.migration.obj_to_primitive(version)
        self.assertEqual(version, primitive[VERSION])
        return primitive[DATA]

    def test_1_2_keeps_everything(self):
        self.assertEqual(self.full, self._fields('1.2'))

    def test_1_1_drops_uuid(self):
        expected = dict(self.full)
        del expected['uuid']
        self.assertEqual(expected, self._fields('1.1'))
        self.assertEqual('resize', expected['migration_type'])
        self.assertTrue(expected['hidden'])

    def test_1_0_drops_type_hidden_and_uuid(self):
        expected = {k: v for k, v in self.full.items()
                    if k not in NEW_IN_1_1 | {'uuid'}}
        self.assertEqual(expected, self._fields('1.0'))

    def test_list_carries_items_to_the_manifest_version(self):
        migrations = samples.make('MigrationList')
        for item_version, dropped in (('1.0', NEW_IN_1_1 | {'uuid'}),
                                      ('1.1', {'uuid'}),
                                      ('1.2', set())):
            primitive = migrations.obj_to_primitive(
                '1.2', version_manifest={'MigrationList': '1.2',
                                         'Migration': item_version})
            self.assertEqual('1.2', primitive[VERSION])
            item = primitive[DATA]['objects'][0]
            self.assertEqual(item_version, item[VERSION])
            self.assertEqual(set(self.full) - dropped, set(item[DATA]))


class TestFieldsFromOlderPeers(test_base.TestCase):

    def _from(self, version, **changes):
        migration = samples.make('Migration')
        for name, value in changes.items():
            setattr(migration, name, value)
        migration.obj_reset_changes()
        return base.ResobjObject.obj_from_primitive(
            migration.obj_to_primitive(version))

    def test_type_and_hidden_of_a_1_0_resize(self):
        old = self._from('1.0')
        self.assertEqual('resize', old.migration_type)
        self.assertFalse(old.hidden)
        self.assertEqual(set(), old.obj_what_changed())

    def test_type_of_a_1_0_move_keeping_its_flavor(self):
        old = self._from('1.0', migration_type='live-migration',
                         new_instance_type_id=3)
        self.assertEqual('migration', old.migration_type)

    def test_type_without_flavor_ids(self):
        migration = objects.Migration(status='migrating')
        self.assertEqual('migration', migration.migration_type)

    def test_uuid_needs_a_context(self):
        old = self._from('1.1')
        self.assertEqual('resize', old.migration_type)
        self.assertRaises(exception.ObjectActionError, getattr, old, 'uuid')
        self.assertFalse(old.obj_attr_is_set('uuid'))

    def test_other_fields_do_not_load(self):
        self.assertRaises(NotImplementedError, getattr,
                          objects.Migration(), 'status')


class TestMigrationFields(test_base.TestCase):

    def test_migration_type_is_an_enum(self):
        migration = objects.Migration()
        for value in ('migration', 'resize', 'live-migration',
                      'evacuation'):
            migration.migration_type = value
        self.assertRaises(ValueError, setattr, migration, 'migration_type',
                          'teleport')

    def test_uuids_are_strict(self):
        self.assertRaises(ValueError, objects.Migration, uuid='not-a-uuid')
        self.assertRaises(ValueError, objects.Migration,
                          instance_uuid='not-a-uuid')

    def test_terminal_statuses_are_the_db_api_ones(self):
        self.assertIs(migration_db.TERMINAL_STATUSES,
                      migration_obj.TERMINAL_STATUSES)
        self.assertNotIn('finished', migration_obj.TERMINAL_STATUSES)


class TestTypeRule(test_base.TestCase):

    def test_rule(self):
        infer = migration_db._infer_migration_type
        self.assertEqual('migration', infer(1, 1))
        self.assertEqual('migration', infer(None, None))
        self.assertEqual('resize', infer(1, 2))
        self.assertEqual('resize', infer(None, 2))
        self.assertEqual('resize', infer(1, None))
