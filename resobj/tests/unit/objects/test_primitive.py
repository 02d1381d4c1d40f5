"""Malformed primitives raise resobj exceptions naming object and field.

Each case is loaded twice, as a stored blob is (``obj_from_primitive``)
and as an RPC argument is (the serializer's ``deserialize_entity``), and
both must raise the same exception. The hypothesis fuzz over every
object is in ``test_primitive_fuzz``.
"""

import copy
import json

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fixture as ovo_fixture

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import fields
from resobj.objects import primitive as primitive_mod
from resobj.objects import project
from resobj.tests import base as test_base
from resobj.tests.unit.objects import test_golden

objects.register_all()

NAME = 'resobj_object.name'
NAMESPACE = 'resobj_object.namespace'
VERSION = 'resobj_object.version'
DATA = 'resobj_object.data'
CHANGES = 'resobj_object.changes'


def golden(objname):
    """The newest golden primitive of ``objname`` (a fresh copy)."""
    cls = base.ResobjObjectRegistry.obj_classes()[objname][0]
    with open(test_golden.golden_path(objname, cls.VERSION)) as f:
        return json.load(f)


def nested_lists(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


class _Case(test_base.TestCase):

    def assert_refused(self, primitive, exc_class, objname, field,
                       cls=base.ResobjObject):
        """Both loading paths raise ``exc_class`` for ``primitive``.

        Loading never changes its input, so both paths get the same one
        (a copy of a 3000-deep value would itself exhaust the stack).
        """
        direct = self.assertRaises(exc_class, cls.obj_from_primitive,
                                   primitive)
        self.assertEqual(exc_class, type(direct))
        self.assertEqual(objname, direct.kwargs['objname'])
        if field is not None:
            self.assertEqual(field, direct.kwargs['field'])
            self.assertIn(field, str(direct))
        self.assertIn(objname, str(direct))
        if cls is base.ResobjObject and isinstance(primitive, dict) and \
                NAME in primitive:
            # The serializer loads any object; without the name key an
            # RPC argument is a plain dict.
            rpc = self.assertRaises(
                exc_class, base.ResobjObjectSerializer().deserialize_entity,
                None, {'arg': [primitive]})
            self.assertEqual(type(direct), type(rpc))
            self.assertEqual(direct.kwargs, rpc.kwargs)
        return direct


class TestEnvelope(_Case):

    def test_not_a_dict(self):
        for value in ('Service', ['Service'], None, 42):
            self.assert_refused(value, exception.MalformedPrimitive,
                                'an unnamed object', '(primitive)')
        self.assert_refused('Service', exception.MalformedPrimitive,
                            'Service', '(primitive)', cls=objects.Service)

    def test_missing_keys(self):
        for part, objname in (('name', 'an unnamed object'),
                              ('namespace', 'Service'),
                              ('version', 'Service'), ('data', 'Service')):
            primitive = golden('Service')
            del primitive['resobj_object.' + part]
            self.assert_refused(primitive, exception.MalformedPrimitive,
                                objname, 'resobj_object.' + part)

    def test_missing_changes_is_no_changes(self):
        primitive = golden('Service')
        primitive.pop(CHANGES, None)
        self.assertEqual(set(), base.ResobjObject.obj_from_primitive(
            primitive).obj_what_changed())

    def test_envelope_values_of_the_wrong_type(self):
        for part in ('name', 'namespace', 'version'):
            for value in (None, 1, 1.5, ['x'], {'x': 1}, ''):
                primitive = golden('Service')
                primitive['resobj_object.' + part] = value
                objname = 'an unnamed object' if part == 'name' \
                    else 'Service'
                self.assert_refused(primitive, exception.MalformedPrimitive,
                                    objname, 'resobj_object.' + part)

    def test_data_none_or_not_a_dict(self):
        for value in (None, [], 'data', 3):
            primitive = golden('Service')
            primitive[DATA] = value
            exc = self.assert_refused(primitive,
                                      exception.MalformedPrimitive,
                                      'Service', DATA)
            self.assertIn('dict of field values', str(exc))

    def test_changes_not_a_list_of_names(self):
        for value in (None, 'host', {'host': 1}, [['host']], [1]):
            primitive = golden('Service')
            primitive[CHANGES] = value
            self.assert_refused(primitive, exception.MalformedPrimitive,
                                'Service', CHANGES)

    def test_changes_are_kept(self):
        primitive = golden('Service')
        primitive[CHANGES] = ['host', 'no_such_field']
        loaded = base.ResobjObject.obj_from_primitive(primitive)
        self.assertEqual({'host'}, loaded.obj_what_changed())

    def test_bad_version_strings(self):
        for value in ('1', '1.', '.1', '1.x', 'a.b', '1.3\n', ' 1.3',
                      '1.3.0.1', '1,3', '\uff11.3', '1.3-beta', 'v1.3'):
            primitive = golden('Service')
            primitive[VERSION] = value
            exc = self.assert_refused(primitive,
                                      exception.MalformedPrimitive,
                                      'Service', VERSION)
            self.assertIn('is not a version', str(exc))

    def test_unreadable_version_is_a_resobj_error(self):
        primitive = golden('Service')
        primitive[VERSION] = '9.0'
        exc = self.assert_refused(primitive,
                                  exception.IncompatibleObjectVersion,
                                  'Service', None)
        self.assertEqual('9.0', exc.kwargs['objver'])

    def test_patch_version_loads(self):
        primitive = golden('Service')
        primitive[VERSION] = primitive[VERSION] + '.4'
        self.assertEqual('Service', base.ResobjObjectSerializer()
                         .deserialize_entity(None, primitive).obj_name())

    def test_foreign_namespace(self):
        primitive = golden('Service')
        primitive[NAMESPACE] = 'versionedobjects'
        exc = self.assert_refused(primitive, exception.UnsupportedObject,
                                  'versionedobjects.Service', None)
        self.assertEqual(primitive[VERSION], exc.kwargs['objver'])

    def test_unknown_name(self):
        primitive = golden('Service')
        primitive[NAME] = 'Gadget'
        self.assert_refused(primitive, exception.UnsupportedObject,
                            'Gadget', None)


class TestAnotherProjectsObject(_Case):

    def setUp(self):
        super().setUp()
        self.useFixture(ovo_fixture.VersionedObjectRegistryFixture())

        @ovo_base.VersionedObjectRegistry.register
        class Elsewhere(ovo_base.VersionedObject):
            fields = {'n': fields.IntegerField()}

    def test_registered_name_of_another_project_is_refused(self):
        # The registry is shared: the name alone would load its class.
        primitive = {NAME: 'Elsewhere', NAMESPACE: 'resobj', VERSION: '1.0',
                     DATA: {'n': 1}}
        self.assert_refused(primitive, exception.UnsupportedObject,
                            'Elsewhere', None)


class TestAnotherObjectsPrimitive(_Case):

    def test_object_class_refuses_another_class(self):
        exc = self.assert_refused(golden('Service'),
                                  exception.WrongObjectPrimitive,
                                  'Allocation', NAME,
                                  cls=objects.Allocation)
        self.assertEqual(('Allocation', 'Service'),
                         (exc.kwargs['expected'], exc.kwargs['actual']))

    def test_list_class_refuses_another_list(self):
        self.assert_refused(golden('ServiceList'),
                            exception.WrongObjectPrimitive,
                            'AllocationList', NAME,
                            cls=objects.AllocationList)
        self.assert_refused(golden('Allocation'),
                            exception.WrongObjectPrimitive,
                            'AllocationList', NAME,
                            cls=objects.AllocationList)

    def test_class_loads_its_own_and_its_subclasses(self):
        self.assertIsInstance(
            objects.Allocation.obj_from_primitive(golden('Allocation')),
            objects.Allocation)
        for objname in ('Project', 'User'):
            loaded = project.ExternalOwner.obj_from_primitive(
                golden(objname))
            self.assertEqual(objname, loaded.obj_name())
        self.assert_refused(golden('Project'),
                            exception.WrongObjectPrimitive, 'User', NAME,
                            cls=objects.User)

    def test_child_field_refuses_another_class(self):
        primitive = golden('Instance')
        primitive[DATA]['flavor'] = golden('Service')
        exc = self.assert_refused(primitive, exception.WrongObjectPrimitive,
                                  'Instance', 'flavor')
        self.assertEqual(('Flavor', 'Service'),
                         (exc.kwargs['expected'], exc.kwargs['actual']))

    def test_list_item_of_another_class(self):
        primitive = golden('ServiceList')
        primitive[DATA]['objects'].append(golden('Allocation'))
        self.assert_refused(primitive, exception.WrongObjectPrimitive,
                            'ServiceList', 'objects')

    def test_errors_inside_a_child_name_the_child(self):
        primitive = golden('Service')
        primitive[DATA]['compute_node'][DATA]['vcpus'] = 'many'
        exc = self.assert_refused(primitive, exception.MalformedPrimitive,
                                  'ComputeNode', 'vcpus')
        self.assertIn("'many'", str(exc))


class TestFieldValues(_Case):

    def test_wrong_types(self):
        for name, value in (('report_count', 'abc'), ('report_count', -1),
                            ('report_count', [1]), ('host', None),
                            ('host', {'a': 1}), ('uuid', 'nope'),
                            ('uuid', ['x']), ('last_seen_up', 'yesterday'),
                            ('last_seen_up', 7), ('disabled_reason', ['x']),
                            ('report_count', float('inf'))):
            primitive = golden('Service')
            primitive[DATA][name] = value
            exc = self.assert_refused(primitive,
                                      exception.MalformedPrimitive,
                                      'Service', name)
            # The reason is the coercion's own, not prefixed twice.
            self.assertNotIn('Service.%s:' % name, str(exc))

    def test_list_field_given_a_string_or_a_dict(self):
        for value in ('Service', {'a': 1}, 3):
            primitive = golden('ServiceList')
            primitive[DATA]['objects'] = value
            exc = self.assert_refused(primitive,
                                      exception.MalformedPrimitive,
                                      'ServiceList', 'objects')
            self.assertIn('a list of Service primitives', str(exc))

    def test_list_item_not_a_primitive(self):
        primitive = golden('ServiceList')
        primitive[DATA]['objects'].append('Service')
        self.assert_refused(primitive, exception.MalformedPrimitive,
                            'ServiceList', 'objects')

    def test_child_data_none(self):
        primitive = golden('Instance')
        primitive[DATA]['flavor'][DATA] = None
        self.assert_refused(primitive, exception.MalformedPrimitive,
                            'Flavor', DATA)

    def test_unknown_data_keys_are_ignored(self):
        primitive = golden('Service')
        primitive[DATA]['added_by_a_newer_minor'] = [1, 2]
        self.assertEqual('compute-1', base.ResobjObject.obj_from_primitive(
            primitive).host)

    def test_missing_data_keys_leave_fields_unset(self):
        primitive = golden('Service')
        del primitive[DATA]['host']
        loaded = base.ResobjObject.obj_from_primitive(primitive)
        self.assertFalse(loaded.obj_attr_is_set('host'))


class TestContainerFields(_Case):
    """Field types no resobj object uses yet: strings are not lists."""

    class Box(base.ResobjObject):
        fields = {'names': fields.ListOfStringsField(),
                  'numbers': fields.ListOfIntegersField(),
                  'tags': fields.SetOfStringsField(),
                  'labels': fields.DictOfStringsField()}

    def setUp(self):
        super().setUp()
        self.useFixture(ovo_fixture.VersionedObjectRegistryFixture())
        base.ResobjObjectRegistry.register(self.Box)
        self.valid = self.Box(names=['a'], numbers=[1], tags={'t'},
                              labels={'k': 'v'}).obj_to_primitive()

    def test_valid(self):
        box = base.ResobjObject.obj_from_primitive(
            json.loads(json.dumps(self.valid)))
        self.assertEqual((['a'], [1], {'t'}, {'k': 'v'}),
                         (box.names, box.numbers, box.tags, box.labels))

    def test_wrong_containers(self):
        for name, value in (('names', 'abc'), ('names', {'a': 'b'}),
                            ('numbers', '123'), ('tags', 'abc'),
                            ('tags', {'a': 1}), ('labels', ['k']),
                            ('labels', 'k'), ('names', [['a']])):
            primitive = copy.deepcopy(self.valid)
            primitive[DATA][name] = value
            self.assert_refused(primitive, exception.MalformedPrimitive,
                                'Box', name)


class TestNesting(_Case):

    def test_deep_list_in_a_scalar_field(self):
        for name in ('host', 'uuid', 'report_count', 'last_seen_up'):
            primitive = golden('Service')
            primitive[DATA][name] = nested_lists(3000)
            self.assert_refused(primitive, exception.MalformedPrimitive,
                                'Service', name)

    def test_deep_list_in_an_enum_field(self):
        # These coercions quote the value in their errors: its repr
        # recurses.
        primitive = golden('Allocation')
        primitive[DATA]['consumer_uuid'] = nested_lists(3000)
        self.assert_refused(primitive, exception.MalformedPrimitive,
                            'Allocation', 'consumer_uuid')
        primitive = golden('Migration')
        primitive[DATA]['migration_type'] = nested_lists(3000)
        self.assert_refused(primitive, exception.MalformedPrimitive,
                            'Migration', 'migration_type')

    def test_deeply_nested_lists_of_lists(self):
        primitive = golden('ServiceList')
        for _ in range(3000):
            primitive = {NAME: 'ServiceList', NAMESPACE: 'resobj',
                         VERSION: primitive[VERSION],
                         DATA: {'objects': [primitive]}}
        self.assert_refused(primitive, exception.WrongObjectPrimitive,
                            'ServiceList', 'objects')

    def test_deep_rpc_arguments(self):
        exc = self.assertRaises(
            exception.MalformedPrimitive,
            base.ResobjObjectSerializer().deserialize_entity, None,
            nested_lists(3000))
        self.assertEqual('an RPC argument', exc.kwargs['objname'])
        shallow = nested_lists(primitive_mod.MAX_DEPTH)
        self.assertEqual(shallow, base.ResobjObjectSerializer()
                         .deserialize_entity(None, shallow))


class TestSelfReferencingObject(_Case):
    """The depth limit, for an object type that contains itself."""

    class Node(base.ResobjObject):
        fields = {'child': fields.ObjectField('Node', nullable=True)}

    def setUp(self):
        super().setUp()
        self.useFixture(ovo_fixture.VersionedObjectRegistryFixture())
        base.ResobjObjectRegistry.register(self.Node)

    def chain(self, length):
        primitive = self.Node(child=None).obj_to_primitive()
        for _ in range(length - 1):
            primitive = {NAME: 'Node', NAMESPACE: 'resobj', VERSION: '1.0',
                         DATA: {'child': primitive}}
        return primitive

    def test_up_to_the_limit_loads(self):
        node = base.ResobjObject.obj_from_primitive(
            self.chain(primitive_mod.MAX_DEPTH + 1))
        depth = 1
        while node.child is not None:
            node, depth = node.child, depth + 1
        self.assertEqual(primitive_mod.MAX_DEPTH + 1, depth)

    def test_beyond_the_limit_is_refused(self):
        for length in (primitive_mod.MAX_DEPTH + 2, 3000):
            exc = self.assert_refused(self.chain(length),
                                      exception.MalformedPrimitive,
                                      'Node', DATA)
            self.assertIn('nested more than', str(exc))


class TestDirectHook(test_base.TestCase):
    """_obj_from_primitive, called itself, also loads children by field."""

    def test_children_loaded(self):
        instance = objects.Instance._obj_from_primitive(
            None, objects.Instance.VERSION, golden('Instance'))
        self.assertIsInstance(instance.flavor, objects.Flavor)

    def test_child_of_another_class(self):
        primitive = golden('Instance')
        primitive[DATA]['flavor'] = golden('Service')
        self.assertRaises(exception.WrongObjectPrimitive,
                          objects.Instance._obj_from_primitive, None,
                          objects.Instance.VERSION, primitive)


class TestRelabel(test_base.TestCase):
    """Stored primitives read by newer-minor relabelling never crash it."""

    def test_malformed_primitives_are_left_to_loading(self):
        for name, value in ((NAME, ['Flavor']), (VERSION, 'x.y'),
                            (VERSION, None), (DATA, None), (DATA, 'x'),
                            (DATA, {'extra_specs': nested_lists(3000)})):
            primitive = golden('Flavor')
            primitive[name] = value
            self.assertFalse(base.relabel_newer_minor_versions(primitive))

    def test_newer_minor_is_still_relabelled(self):
        primitive = golden('Flavor')
        primitive[VERSION] = '1.99'
        self.assertTrue(base.relabel_newer_minor_versions([primitive]))
        self.assertEqual(objects.Flavor.VERSION, primitive[VERSION])
