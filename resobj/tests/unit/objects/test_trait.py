"""Trait without a database: backports and name rules."""

from oslo_serialization import jsonutils

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import trait
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'


def _through_json(primitive):
    return jsonutils.loads(jsonutils.dumps(primitive))


class TestBackports(test_base.TestCase):

    def test_1_1_keeps_is_standard(self):
        self.assertTrue(samples.make('Trait').obj_to_primitive('1.1')[DATA][
            'is_standard'])

    def test_1_0_drops_is_standard_only(self):
        old = samples.make('Trait').obj_to_primitive('1.0')
        self.assertEqual('1.0', old[VERSION])
        self.assertEqual({'id': 42, 'name': 'HW_CPU_X86_AVX2'}, old[DATA])

    def test_loaded_from_1_0_derives_is_standard_from_the_name(self):
        for name, standard in (('HW_CPU_X86_AVX2', True),
                               ('CUSTOM_GOLD', False)):
            old = objects.Trait(id=1, name=name, is_standard=standard)
            loaded = base.ResobjObject.obj_from_primitive(
                _through_json(old.obj_to_primitive('1.0')))
            self.assertFalse(loaded.obj_attr_is_set('is_standard'))
            self.assertEqual(standard, loaded.is_standard)
            # Derived, not a change to write anywhere.
            self.assertNotIn('is_standard', loaded.obj_what_changed())

    def test_list_carries_items_to_the_manifest_version(self):
        traits = samples.make('TraitList')
        primitive = traits.obj_to_primitive(
            '1.1', version_manifest={'TraitList': '1.1', 'Trait': '1.0'})
        for item in primitive[DATA]['objects']:
            self.assertEqual('1.0', item[VERSION])
            self.assertNotIn('is_standard', item[DATA])
        items = traits.obj_to_primitive('1.0')[DATA]['objects']
        self.assertEqual(['1.0', '1.0'], [i[VERSION] for i in items])
        items = traits.obj_to_primitive('1.1')[DATA]['objects']
        self.assertEqual([True, False], [i[DATA]['is_standard']
                                         for i in items])


class TestNames(test_base.TestCase):

    def test_rules(self):
        trait.validate_custom_name('CUSTOM_GOLD_1')
        for name in ('HW_CPU_X86_AVX2', 'CUSTOM_', 'CUSTOM_gold',
                     'CUSTOM_' + 'X' * 249, None):
            self.assertRaises(exception.InvalidTraitName,
                              trait.validate_custom_name, name)
