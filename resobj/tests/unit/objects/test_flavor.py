"""Flavor without a database: backports, change tracking, primitives."""

from oslo_serialization import jsonutils

from resobj import context
from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
CHANGES = 'resobj_object.changes'


def _through_json(primitive):
    return jsonutils.loads(jsonutils.dumps(primitive))


class TestFlavorBackports(test_base.TestCase):

    def test_1_1_keeps_description(self):
        primitive = samples.make('Flavor').obj_to_primitive('1.1')
        self.assertEqual('pinned CPUs', primitive[DATA]['description'])

    def test_1_0_drops_description_only(self):
        flavor = samples.make('Flavor')
        full = flavor.obj_to_primitive()[DATA]
        old = flavor.obj_to_primitive('1.0')
        self.assertEqual('1.0', old['resobj_object.version'])
        self.assertNotIn('description', old[DATA])
        del full['description']
        self.assertEqual(full, old[DATA])

    def test_list_carries_items_to_the_manifest_version(self):
        flavors = samples.make('FlavorList')
        primitive = flavors.obj_to_primitive(
            '1.1', version_manifest={'FlavorList': '1.1', 'Flavor': '1.0'})
        item = primitive[DATA]['objects'][0]
        self.assertEqual('1.0', item['resobj_object.version'])
        self.assertNotIn('description', item[DATA])

        primitive = flavors.obj_to_primitive(
            '1.1', version_manifest={'FlavorList': '1.1', 'Flavor': '1.1'})
        item = primitive[DATA]['objects'][0]
        self.assertEqual('1.1', item['resobj_object.version'])
        self.assertEqual('pinned CPUs', item[DATA]['description'])


class TestExtraSpecsChanges(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.flavor = samples.make('Flavor')

    def test_clean_object_reports_nothing(self):
        self.assertEqual(set(), self.flavor.obj_what_changed())

    def test_setting_a_key_in_place_is_a_change(self):
        self.flavor.extra_specs['hw:numa_nodes'] = '2'
        self.assertEqual({'extra_specs'}, self.flavor.obj_what_changed())
        self.assertEqual('2', self.flavor.obj_get_changes()[
            'extra_specs']['hw:numa_nodes'])

    def test_removing_a_key_in_place_is_a_change(self):
        del self.flavor.extra_specs['hw:mem_page_size']
        self.assertEqual({'extra_specs'}, self.flavor.obj_what_changed())

    def test_mutating_back_to_the_original_is_no_change(self):
        self.flavor.extra_specs['hw:cpu_policy'] = 'shared'
        self.flavor.extra_specs['hw:cpu_policy'] = 'dedicated'
        self.assertEqual(set(), self.flavor.obj_what_changed())

    def test_reset_takes_the_new_value_as_baseline(self):
        self.flavor.extra_specs['k'] = 'v'
        self.flavor.obj_reset_changes(['extra_specs'])
        self.assertEqual(set(), self.flavor.obj_what_changed())
        self.flavor.extra_specs['k'] = 'w'
        self.assertEqual({'extra_specs'}, self.flavor.obj_what_changed())

    def test_reset_of_no_fields_means_all(self):
        self.flavor.extra_specs['k'] = 'v'
        self.flavor.obj_reset_changes([])
        self.assertEqual(set(), self.flavor.obj_what_changed())

    def test_resetting_other_fields_keeps_the_change(self):
        self.flavor.extra_specs['k'] = 'v'
        self.flavor.obj_reset_changes(['name'])
        self.assertEqual({'extra_specs'}, self.flavor.obj_what_changed())

    def test_new_object_reports_its_extra_specs(self):
        flavor = objects.Flavor(extra_specs={'a': 'b'})
        self.assertIn('extra_specs', flavor.obj_what_changed())

    def test_in_place_change_travels_in_the_primitive(self):
        self.flavor.extra_specs['k'] = 'v'
        primitive = _through_json(self.flavor.obj_to_primitive())
        self.assertEqual(['extra_specs'], primitive[CHANGES])
        loaded = base.ResobjObject.obj_from_primitive(primitive)
        self.assertEqual({'extra_specs'}, loaded.obj_what_changed())
        self.assertEqual('v', loaded.extra_specs['k'])

    def test_loaded_object_tracks_its_own_mutations(self):
        loaded = base.ResobjObject.obj_from_primitive(
            _through_json(self.flavor.obj_to_primitive()))
        self.assertEqual(set(), loaded.obj_what_changed())
        loaded.extra_specs['k'] = 'v'
        self.assertEqual({'extra_specs'}, loaded.obj_what_changed())
        # The sample it came from is a separate dict.
        self.assertNotIn('k', self.flavor.extra_specs)

    def test_clone_tracks_separately(self):
        clone = self.flavor.obj_clone()
        clone.extra_specs['k'] = 'v'
        self.assertEqual({'extra_specs'}, clone.obj_what_changed())
        self.assertEqual(set(), self.flavor.obj_what_changed())


class TestFlavorPrimitive(test_base.TestCase):

    def test_json_round_trip_is_exact(self):
        # What Instance will do with its embedded flavors.
        primitive = samples.make('Flavor').obj_to_primitive()
        loaded = base.ResobjObject.obj_from_primitive(
            _through_json(primitive))
        self.assertEqual(primitive, loaded.obj_to_primitive())
        self.assertIsInstance(loaded.rxtx_factor, float)

    def test_old_primitive_round_trips_and_reads_no_description(self):
        primitive = _through_json(
            samples.make('Flavor').obj_to_primitive('1.0'))
        loaded = base.ResobjObject.obj_from_primitive(primitive)
        self.assertEqual('1.0', loaded.VERSION)
        self.assertEqual(primitive, loaded.obj_to_primitive())
        self.assertIsNone(loaded.description)
        # A guess, not an edit: save() must not write it over the stored
        # description.
        self.assertEqual(set(), loaded.obj_what_changed())

    def test_other_missing_fields_still_refuse_to_load(self):
        flavor = objects.Flavor(name='x')
        self.assertRaises(NotImplementedError, getattr, flavor, 'vcpus')


class TestFlavorSave(test_base.TestCase):

    def test_size_fields_cannot_change(self):
        flavor = samples.make('Flavor')
        flavor._context = context.get_admin_context()
        flavor.memory_mb = 8192
        flavor.extra_specs['k'] = 'v'
        exc = self.assertRaises(exception.ObjectActionError, flavor.save)
        self.assertIn('memory_mb', str(exc))
        self.assertNotIn('extra_specs', str(exc))
