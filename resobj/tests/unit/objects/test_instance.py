"""Instance backports, dict compatibility and stored flavors (no DB)."""

import warnings

import fixtures
from oslo_serialization import jsonutils

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import instance as instance_obj
from resobj.tests import base as test_base
from resobj.tests.samples import instance as samples

DATA = 'resobj_object.data'


def backport(obj, version, **manifest):
    full = base.obj_tree_get_versions(obj.obj_name())
    full[obj.obj_name()] = version
    full.update(manifest)
    return obj.obj_to_primitive(target_version=version,
                                version_manifest=full)[DATA]


class TestBackports(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.instance = samples.instance()

    def test_each_version_drops_what_it_lacks(self):
        expected_missing = {
            '1.3': set(),
            '1.2': {'booted_from_volume'},
            '1.1': {'booted_from_volume', 'pci_devices'},
            '1.0': {'booted_from_volume', 'pci_devices', 'old_flavor',
                    'new_flavor'},
        }
        every = set(backport(self.instance, '1.3'))
        for version, missing in expected_missing.items():
            self.assertEqual(every - missing,
                             set(backport(self.instance, version)), version)

    def test_volume_backed_root_disk_is_zero_for_old_peers(self):
        self.instance.booted_from_volume = True
        self.assertEqual(0, backport(self.instance, '1.2')['root_gb'])
        self.assertEqual(40, backport(self.instance, '1.3')['root_gb'])
        self.instance.booted_from_volume = False
        self.assertEqual(40, backport(self.instance, '1.2')['root_gb'])

    def test_flavor_follows_the_manifest(self):
        data = backport(self.instance, '1.3', Flavor='1.0')
        flavor = data['flavor']
        self.assertEqual('1.0', flavor['resobj_object.version'])
        self.assertNotIn('description', flavor[DATA])


class TestDictCompat(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.objects.instance._DICT_ACCESS_WARNED', set()))
        self.instance = samples.instance()

    def test_old_style_access_works_and_warns_once_per_attribute(self):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter('always')
            self.assertEqual(4, self.instance['vcpus'])
            self.assertEqual(4, self.instance['vcpus'])
            self.instance['memory_mb'] = 4096
            self.assertEqual(4096, self.instance.get('memory_mb'))
        messages = [str(w.message) for w in seen
                    if issubclass(w.category, DeprecationWarning)]
        self.assertEqual(2, len(messages), messages)
        self.assertIn("Instance['vcpus'] is deprecated", messages[0])
        self.assertIn('memory_mb', messages[1])
        self.assertEqual(4096, self.instance.memory_mb)
        self.assertIn('memory_mb', self.instance.obj_what_changed())

    def test_get_gives_the_default_of_an_unset_field_only(self):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.assertEqual(4, self.instance.get('vcpus', 99))
            self.assertEqual(4, self.instance.get('vcpus'))
            self.instance.obj_reset_changes()
            del self.instance.vcpus
            self.assertEqual(99, self.instance.get('vcpus', 99))
            self.assertIsNone(self.instance.get('vcpus', None))
            # Without a default, as an attribute: loaded, or refused.
            self.assertRaises(exception.ObjectActionError,
                              self.instance.get, 'vcpus')

    def test_unknown_key_still_fails(self):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.assertRaises(AttributeError, self.instance.get, 'nope')


class TestStoredFlavor(test_base.TestCase):

    def test_round_trip(self):
        flavor = samples.instance().flavor
        self.assertNotEqual(set(), flavor.obj_what_changed())
        stored = instance_obj.flavor_to_db(flavor)
        self.assertNotIn('changes', stored)
        again = instance_obj.flavor_from_db(None, stored)
        self.assertEqual(set(), again.obj_what_changed())
        flavor.obj_reset_changes(recursive=True)
        self.assertEqual(flavor.obj_to_primitive(), again.obj_to_primitive())
        self.assertIsNone(instance_obj.flavor_from_db(None, None))

    def test_newer_minor_written_by_newer_code_is_read(self):
        flavor = samples.instance().flavor
        primitive = flavor.obj_to_primitive()
        major, minor = base.version_tuple(flavor.VERSION)
        primitive['resobj_object.version'] = '%d.%d' % (major, minor + 5)
        primitive[DATA]['a_future_field'] = 'x'
        again = instance_obj.flavor_from_db(None, jsonutils.dumps(primitive))
        self.assertEqual(flavor.name, again.name)
        self.assertEqual(flavor.VERSION, again.VERSION)

    def test_newer_major_is_refused(self):
        primitive = samples.instance().flavor.obj_to_primitive()
        primitive['resobj_object.version'] = '9.0'
        exc = self.assertRaises(exception.IncompatibleObjectVersion,
                                instance_obj.flavor_from_db, None,
                                jsonutils.dumps(primitive))
        self.assertIn('9.0', str(exc))


class TestInstanceList(test_base.TestCase):

    def test_list_backports_items(self):
        instances = objects.InstanceList(objects=[samples.instance()])
        manifest = base.obj_tree_get_versions('InstanceList')
        manifest.update(InstanceList='1.1', Instance='1.1')
        item = instances.obj_to_primitive(
            target_version='1.1', version_manifest=manifest)[DATA][
                'objects'][0]
        self.assertEqual('1.1', item['resobj_object.version'])
        self.assertNotIn('pci_devices', item[DATA])
