"""The older side's view of a primitive: every key it does not know."""

from resobj.objects import base
from resobj.testing import peer
from resobj.tests import base as test_base
from resobj.tests import samples

NS = base.ResobjObject.OBJ_SERIAL_NAMESPACE


def _classes():
    return base.ResobjObjectRegistry.obj_classes()


class TestEnvelopes(test_base.TestCase):

    def test_paths_of_children_and_list_items(self):
        primitive = samples.make('InstanceList').obj_to_primitive()
        paths = [path for path, _, _ in peer.envelopes(primitive)]
        self.assertEqual('InstanceList', paths[0])
        self.assertIn('InstanceList.objects[0]', paths)
        self.assertIn('InstanceList.objects[0].flavor', paths)
        self.assertIn('InstanceList.objects[0].pci_devices.objects[1]',
                      paths)

    def test_any_projects_namespace(self):
        envelope = {'other_object.name': 'Thing', 'other_object.data': {}}
        self.assertEqual('other_object', peer.serial_namespace(envelope))
        self.assertIsNone(peer.serial_namespace({'other_object.name': 'x'}))
        self.assertIsNone(peer.serial_namespace(['not', 'a', 'dict']))


class TestUnknownKeys(test_base.TestCase):

    def test_a_known_primitive_has_none(self):
        for name in ('Instance', 'ComputeNode', 'UsageList'):
            primitive = samples.make(name).obj_to_primitive()
            self.assertEqual([], peer.unknown_keys(primitive, _classes()))

    def test_fields_envelope_keys_and_objects_it_does_not_know(self):
        primitive = samples.make('Instance').obj_to_primitive()
        primitive[NS + '.data']['hostname'] = 'h'
        primitive[NS + '.data']['flavor'][NS + '.data']['zone'] = 'z'
        primitive[NS + '.data']['pci_devices'][NS + '.data']['objects'][1][
            NS + '.version'] = '2.0'
        primitive[NS + '.color'] = 'blue'
        self.assertEqual([
            'Instance 1.5 (Instance): envelope key resobj_object.color',
            'Instance 1.5 (Instance): hostname',
            'Flavor 1.1 (Instance.flavor): zone',
            'PciDevice 2.0 (Instance.pci_devices.objects[1]): no such object '
            'or version',
        ], peer.unknown_keys(primitive, _classes()))

    def test_an_older_version_is_judged_by_the_class_that_reads_it(self):
        cls = peer.class_for(_classes(), 'Flavor', '1.0')
        self.assertEqual('1.1', cls.VERSION)
        self.assertIsNone(peer.class_for(_classes(), 'Flavor', '1.2'))
        self.assertIsNone(peer.class_for(_classes(), 'Flavor', '2.0'))
        self.assertIsNone(peer.class_for(_classes(), 'NoSuch', '1.0'))


class TestLoad(test_base.TestCase):

    def test_loads_names_unknown_keys_and_errors(self):
        good = samples.make('Flavor').obj_to_primitive()
        extra = samples.make('Flavor').obj_to_primitive()
        extra[NS + '.data']['zone'] = 'z'
        bad = samples.make('Flavor').obj_to_primitive()
        bad[NS + '.data']['vcpus'] = 'many'
        answers = peer.load([], [good, extra, bad, {'x': 1}])
        self.assertEqual([], answers[0]['unknown'])
        self.assertEqual(good[NS + '.data'],
                         answers[0]['primitive'][NS + '.data'])
        self.assertEqual(['Flavor 1.1 (Flavor): zone'], answers[1]['unknown'])
        self.assertIn('MalformedPrimitive', answers[2]['error'])
        self.assertEqual({'error': 'no such object: None'}, answers[3])
