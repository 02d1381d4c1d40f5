"""Which conductor calls are recorded, and how answers are kept."""

from oslo_serialization import jsonutils

from resobj.conductor import idempotency
from resobj import context
from resobj import objects
from resobj.objects import base as objects_base
from resobj.tests import base


def _remotable():
    """"Class.method" of every remotable method of every object."""
    objects.register_all()
    names = set()
    registered = objects_base.ResobjObjectRegistry.obj_classes()
    for name, classes in registered.items():
        for cls in classes:
            names.update('%s.%s' % (name, attr) for attr in dir(cls)
                         if getattr(getattr(cls, attr, None), 'remotable',
                                    False))
    return names


class TestReadOnly(base.TestCase):

    def test_every_read_only_name_is_a_remotable_method(self):
        # A renamed or removed method must leave the table with it.
        self.assertEqual(set(), idempotency.READ_ONLY - _remotable())

    def test_methods_that_write_are_recorded(self):
        writers = _remotable() - idempotency.READ_ONLY
        for name in ('AllocationList.replace_all', 'Service.heartbeat',
                     'Instance.save', 'Project.get_or_create',
                     'PciDeviceList.claim_for_instance'):
            self.assertIn(name, writers)
            self.assertTrue(idempotency.recorded(*name.split('.')))
        self.assertFalse(idempotency.recorded('Service',
                                              'get_minimum_version'))

    def test_an_unknown_method_is_recorded(self):
        # The safe side: recording a read costs a row, not recording a
        # write may run it twice.
        self.assertTrue(idempotency.recorded('NewObject', 'get_thing'))


class TestAnswers(base.TestCase):

    def test_an_answer_is_kept_as_the_caller_receives_it(self):
        objects.register_all()
        ctx = context.get_admin_context()
        flavor = objects.Flavor(ctx, flavorid='f1', name='f1', vcpus=1)
        kept = idempotency.as_sent(ctx, ({'name': flavor}, (1, 2)))
        self.assertIsInstance(kept, str)
        updates, result = jsonutils.loads(kept)
        self.assertEqual([1, 2], result)
        self.assertEqual('Flavor', updates['name']['resobj_object.name'])
