"""Consumer, Project and User without a database: backports, rules."""

from oslo_serialization import jsonutils

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import consumer
from resobj.objects import project
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'


class TestBackports(test_base.TestCase):

    def test_1_1_keeps_consumer_type(self):
        self.assertEqual('INSTANCE', samples.make('Consumer').obj_to_primitive(
            '1.1')[DATA]['consumer_type'])

    def test_1_0_drops_consumer_type_only(self):
        current = samples.make('Consumer')
        full = current.obj_to_primitive()[DATA]
        old = current.obj_to_primitive('1.0')
        self.assertEqual('1.0', old[VERSION])
        del full['consumer_type']
        self.assertEqual(full, old[DATA])
        self.assertEqual('1.0', old[DATA]['project'][VERSION])
        self.assertEqual('1.0', old[DATA]['user'][VERSION])

    def test_1_0_primitive_loads_without_a_type(self):
        old = samples.make('Consumer').obj_to_primitive('1.0')
        loaded = base.ResobjObject.obj_from_primitive(
            jsonutils.loads(jsonutils.dumps(old)))
        self.assertFalse(loaded.obj_attr_is_set('consumer_type'))
        self.assertEqual(('3f1e0c4a9b2d4e6f8a7b6c5d4e3f2a1b', 3),
                         (loaded.project.external_id, loaded.generation))

    def test_null_type_is_kept_by_1_1(self):
        c = samples.make('Consumer')
        c.consumer_type = None
        self.assertIsNone(c.obj_to_primitive('1.1')[DATA]['consumer_type'])


class TestRules(test_base.TestCase):

    def test_consumer_types(self):
        for name in (None, 'INSTANCE', 'MIGRATION_2'):
            consumer.validate_consumer_type(name)
        for name in ('', 'instance', 'A B', 'A' * 256, 3):
            self.assertRaises(exception.InvalidConsumerType,
                              consumer.validate_consumer_type, name)

    def test_external_ids(self):
        project.validate_external_id('project', 'x' * 255)
        for bad in ('', 'x' * 256, None, 12):
            exc = self.assertRaises(exception.InvalidExternalId,
                                    project.validate_external_id, 'user',
                                    bad)
            self.assertIn('user', str(exc))
