"""The Flavor objects over a real database, on every backend."""

from oslo_serialization import jsonutils

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.tests.functional import db_base

objects.register_all()


class TestFlavorObject(db_base.DBTestCase):

    def _make(self, **kw):
        values = {'flavorid': 'm1.small', 'name': 'small', 'memory_mb': 2048,
                  'vcpus': 1, 'root_gb': 20, 'ephemeral_gb': 0, 'swap': 0}
        values.update(kw)
        flavor = objects.Flavor(self.context, **values)
        flavor.create()
        return flavor

    def test_create_sets_defaults_and_resets_changes(self):
        flavor = self._make()
        self.assertIsInstance(flavor.id, int)
        self.assertEqual(1.0, flavor.rxtx_factor)
        self.assertEqual({}, flavor.extra_specs)
        self.assertTrue(flavor.is_public)
        self.assertFalse(flavor.disabled)
        self.assertIsNone(flavor.description)
        self.assertFalse(flavor.deleted)
        self.assertEqual(set(), flavor.obj_what_changed())

    def test_create_twice_is_refused(self):
        flavor = self._make()
        self.assertRaises(exception.ObjectActionError, flavor.create)

    def test_duplicate_raises_flavor_exists(self):
        self._make()
        exc = self.assertRaises(exception.FlavorExists, self._make,
                                name='other')
        self.assertEqual('m1.small', exc.kwargs['flavorid'])
        self.assertRaises(exception.FlavorExists, self._make,
                          flavorid='other')

    def test_get_by_each_key(self):
        flavor = self._make(extra_specs={'a': 'b'}, description='d',
                            rxtx_factor=2.5, swap=1024)
        for found in (objects.Flavor.get_by_id(self.context, flavor.id),
                      objects.Flavor.get_by_flavor_id(self.context,
                                                      'm1.small'),
                      objects.Flavor.get_by_name(self.context, 'small')):
            self.assertEqual(flavor.obj_to_primitive(),
                             found.obj_to_primitive())
            self.assertEqual(set(), found.obj_what_changed())

    def test_not_found_names_the_key(self):
        exc = self.assertRaises(exception.FlavorNotFound,
                                objects.Flavor.get_by_flavor_id,
                                self.context, 'm9.huge')
        self.assertEqual('flavorid=m9.huge', exc.kwargs['key'])
        exc = self.assertRaises(exception.FlavorNotFound,
                                objects.Flavor.get_by_name,
                                self.context, 'huge')
        self.assertEqual('name=huge', exc.kwargs['key'])

    def test_in_place_extra_specs_change_is_saved(self):
        self._make(extra_specs={'hw:mem_page_size': 'large'})
        flavor = objects.Flavor.get_by_name(self.context, 'small')
        flavor.extra_specs['hw:cpu_policy'] = 'dedicated'
        del flavor.extra_specs['hw:mem_page_size']
        flavor.save()
        self.assertEqual(set(), flavor.obj_what_changed())
        fresh = objects.Flavor.get_by_name(self.context, 'small')
        self.assertEqual({'hw:cpu_policy': 'dedicated'}, fresh.extra_specs)
        self.assertIsNotNone(fresh.updated_at)

    def test_save_writes_only_changes(self):
        flavor = self._make()
        other = objects.Flavor.get_by_id(self.context, flavor.id)
        other.extra_specs['k'] = 'v'
        other.save()
        flavor.description = 'general purpose'
        flavor.disabled = True
        flavor.save()
        fresh = objects.Flavor.get_by_id(self.context, flavor.id)
        # The second save did not write back its stale extra_specs.
        self.assertEqual({'k': 'v'}, fresh.extra_specs)
        self.assertEqual('general purpose', fresh.description)
        self.assertTrue(fresh.disabled)

    def test_save_refuses_size_changes(self):
        flavor = self._make()
        flavor.vcpus = 4
        self.assertRaises(exception.ObjectActionError, flavor.save)
        self.assertEqual(1, objects.Flavor.get_by_id(self.context,
                                                     flavor.id).vcpus)

    def test_saving_a_1_0_flavor_keeps_the_stored_description(self):
        flavor = self._make(description='keep me')
        old = base.ResobjObject.obj_from_primitive(
            flavor.obj_to_primitive('1.0'), self.context)
        self.assertIsNone(old.description)
        old.extra_specs['k'] = 'v'
        old.save()
        fresh = objects.Flavor.get_by_id(self.context, flavor.id)
        self.assertEqual('keep me', fresh.description)
        self.assertEqual({'k': 'v'}, fresh.extra_specs)

    def test_destroy(self):
        flavor = self._make()
        flavor.destroy()
        self.assertTrue(flavor.deleted)
        self.assertIsNotNone(flavor.deleted_at)
        self.assertEqual(set(), flavor.obj_what_changed())
        self.assertRaises(exception.FlavorNotFound,
                          objects.Flavor.get_by_id, self.context, flavor.id)
        deleted = objects.Flavor.get_by_id(
            self.context.elevated(read_deleted='yes'), flavor.id)
        self.assertTrue(deleted.deleted)
        # Both keys are free again.
        self._make()

    def test_list_get_all(self):
        self._make(flavorid='1', name='a')
        self._make(flavorid='2', name='b', is_public=False)
        self._make(flavorid='3', name='c', disabled=True)
        gone = self._make(flavorid='4', name='d')
        gone.destroy()

        def names(**kw):
            flavors = objects.FlavorList.get_all(self.context, **kw)
            for flavor in flavors:
                self.assertIsInstance(flavor, objects.Flavor)
            return [f.name for f in flavors]

        self.assertEqual(['a', 'b', 'c'], names())
        self.assertEqual(['a', 'c'], names(is_public=True))
        self.assertEqual(['b'], names(is_public=False))
        self.assertEqual(['a', 'b'], names(include_disabled=False))

    def test_stored_flavor_primitive_round_trips_through_json(self):
        self._make(extra_specs={'a': '1', 'b': ''}, description=None,
                   rxtx_factor=1.25)
        flavor = objects.Flavor.get_by_name(self.context, 'small')
        primitive = flavor.obj_to_primitive()
        loaded = base.ResobjObject.obj_from_primitive(
            jsonutils.loads(jsonutils.dumps(primitive)))
        self.assertEqual(primitive, loaded.obj_to_primitive())
