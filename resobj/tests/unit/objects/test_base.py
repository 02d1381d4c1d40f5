"""The objects core: registry hook, fields, persistence helpers, serializer."""

import uuid

import fixtures
from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fixture as ovo_fixture

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.objects import fields
from resobj.tests import base as test_base

# The registry fixture copies the process registry, which exists once
# something is registered.
objects.register_all()


def _widget_classes():
    """Widget 1.0 and 1.1 (1.1 adds 'colour'), unregistered."""

    class WidgetV1_0(base.ResobjObject):
        # Version 1.0: initial version
        VERSION = '1.0'
        fields = {'name': fields.StringField()}

        @classmethod
        def obj_name(cls):
            return 'Widget'

    class Widget(base.ResobjObject):
        # Version 1.0: initial version
        # Version 1.1: adds colour
        VERSION = '1.1'
        fields = {'name': fields.StringField(),
                  'colour': fields.StringField(nullable=True)}

        def obj_make_compatible(self, primitive, target_version):
            super().obj_make_compatible(primitive, target_version)
            if versionutils.convert_version_to_tuple(target_version) < (
                    1, 1):
                primitive.pop('colour', None)

    return WidgetV1_0, Widget


class _RegistryTestCase(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(ovo_fixture.VersionedObjectRegistryFixture())
        self.addCleanup(self._forget_widget)

    def _forget_widget(self):
        if hasattr(objects, 'Widget'):
            delattr(objects, 'Widget')


class TestRegistry(_RegistryTestCase):

    def test_newest_version_is_published_whatever_the_order(self):
        old, new = _widget_classes()
        base.ResobjObjectRegistry.register(new)
        base.ResobjObjectRegistry.register(old)
        self.assertIs(new, objects.Widget)

    def test_newer_registration_replaces_older(self):
        old, new = _widget_classes()
        base.ResobjObjectRegistry.register(old)
        self.assertIs(old, objects.Widget)
        base.ResobjObjectRegistry.register(new)
        self.assertIs(new, objects.Widget)

    def test_register_all_publishes_service(self):
        objects.register_all()
        self.assertEqual('Service', objects.Service.obj_name())
        self.assertEqual('ServiceList', objects.ServiceList.obj_name())

    def test_primitive_uses_resobj_namespaces(self):
        _, new = _widget_classes()
        base.ResobjObjectRegistry.register(new)
        primitive = new(name='w').obj_to_primitive()
        self.assertEqual('resobj', primitive['resobj_object.namespace'])
        self.assertEqual('Widget', primitive['resobj_object.name'])


class TestUUIDField(test_base.TestCase):

    class Holder(base.ResobjObject):
        fields = {'uuid': fields.UUIDField(),
                  'maybe': fields.UUIDField(nullable=True)}

    def setUp(self):
        super().setUp()
        self.useFixture(ovo_fixture.VersionedObjectRegistryFixture())
        base.ResobjObjectRegistry.register(self.Holder)

    def test_valid_values_are_canonical(self):
        value = uuid.uuid4()
        holder = self.Holder(uuid=str(value).upper())
        self.assertEqual(str(value), holder.uuid)
        holder.uuid = value
        self.assertEqual(str(value), holder.uuid)

    def test_invalid_value_raises_value_error_naming_the_field(self):
        holder = self.Holder()
        exc = self.assertRaises(ValueError, setattr, holder, 'uuid',
                                'not-a-uuid')
        self.assertIn('uuid', str(exc))
        self.assertIn('not-a-uuid', str(exc))
        self.assertFalse(holder.obj_attr_is_set('uuid'))

    def test_invalid_value_in_a_primitive_is_refused(self):
        primitive = self.Holder(uuid=str(uuid.uuid4())).obj_to_primitive()
        primitive['resobj_object.data']['uuid'] = 'garbage'
        self.assertRaises(ValueError, base.ResobjObject.obj_from_primitive,
                          primitive)

    def test_nullable(self):
        self.assertIsNone(self.Holder(maybe=None).maybe)


class TestPersistentObject(test_base.TestCase):

    class Thing(base.ResobjPersistentObject, base.ResobjObject):
        fields = {'id': fields.IntegerField(read_only=True),
                  'name': fields.StringField()}

    def setUp(self):
        super().setUp()
        self.useFixture(ovo_fixture.VersionedObjectRegistryFixture())
        base.ResobjObjectRegistry.register(self.Thing)

    def test_persistent_fields_are_added(self):
        for name in ('created_at', 'updated_at', 'deleted_at', 'deleted'):
            self.assertIn(name, self.Thing.fields)

    def test_from_db_object_sets_fields_and_resets_changes(self):
        row = {'id': 4, 'name': 'n', 'deleted': 4, 'deleted_at': None,
               'created_at': None, 'updated_at': None, 'extra': 'x'}
        ctx = object()
        thing = self.Thing._from_db_object(ctx, self.Thing(), row)
        self.assertEqual(4, thing.id)
        self.assertTrue(thing.deleted)
        self.assertIs(ctx, thing._context)
        self.assertEqual(set(), thing.obj_what_changed())

    def test_from_db_object_skips_what_the_caller_converts(self):
        thing = self.Thing._from_db_object(
            None, self.Thing(), {'id': 1, 'name': 'n'}, skip=('name',))
        self.assertFalse(thing.obj_attr_is_set('name'))

    def test_db_changes_exclude_db_owned_fields(self):
        thing = self.Thing(name='n', deleted=False, created_at=None)
        self.assertEqual({'name': 'n'}, thing.obj_get_db_changes())


class _FakeNewerNode(ovo_base.VersionedObjectIndirectionAPI):
    """Plays a node running newer code that backports for older peers."""

    def __init__(self, newest_class):
        self.newest_class = newest_class
        self.backports = []

    def object_action(self, context, objinst, objmethod, args, kwargs):
        raise NotImplementedError()

    def object_class_action_versions(self, context, objname, objmethod,
                                     object_versions, args, kwargs):
        raise NotImplementedError()

    def object_backport_versions(self, context, objinst, object_versions):
        self.backports.append(object_versions)
        version = objinst['resobj_object.version']
        newer = self.newest_class._obj_from_primitive(
            context, version, objinst)
        backported = newer.obj_to_primitive(
            target_version=object_versions[newer.obj_name()],
            version_manifest=object_versions)
        self.sent_fields = sorted(backported['resobj_object.data'])
        # The reply crosses the wire again and is read with the old code.
        return base.ResobjObject.obj_from_primitive(backported, context)


class TestSerializer(_RegistryTestCase):

    def setUp(self):
        super().setUp()
        self.old, self.new = _widget_classes()
        # Field properties for the newer class without registering it: the
        # process plays the old node, which does not know Widget 1.1.
        base.ResobjObjectRegistry.objectify(self.new)
        self.serializer = base.ResobjObjectSerializer()
        self.newer_primitive = self.new(name='w', colour='red') \
            .obj_to_primitive()

    def _old_node(self, indirection=None):
        # This process plays the old node: only Widget 1.0 is known.
        base.ResobjObjectRegistry.register(self.old)
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.objects.base.ResobjObject.indirection_api', indirection))

    def test_round_trip_through_json(self):
        base.ResobjObjectRegistry.register(self.new)
        from oslo_serialization import jsonutils
        wire = jsonutils.loads(jsonutils.dumps(
            self.serializer.serialize_entity(None, {'w': [self.new(
                name='w', colour='blue')]})))
        result = self.serializer.deserialize_entity(None, wire)
        self.assertEqual('blue', result['w'][0].colour)

    def test_patch_version_is_read_as_minor(self):
        self._old_node()
        primitive = self.old(name='w').obj_to_primitive()
        primitive['resobj_object.version'] = '1.0.7'
        result = self.serializer.deserialize_entity(None, primitive)
        self.assertEqual('w', result.name)
        self.assertEqual('1.0', result.VERSION)

    def test_unreadable_version_is_backported_to_our_manifest(self):
        newer_node = _FakeNewerNode(self.new)
        self._old_node(newer_node)
        result = self.serializer.deserialize_entity(None,
                                                    self.newer_primitive)
        self.assertEqual([{'Widget': '1.0'}], newer_node.backports)
        self.assertIsInstance(result, self.old)
        self.assertEqual('1.0', result.VERSION)
        self.assertEqual('w', result.name)
        self.assertEqual(['name'], newer_node.sent_fields)

    def test_a_refused_backport_fails_the_receipt(self):
        # The conductor cannot represent the object at this node's
        # version: the receiving call fails with its reason, before any
        # of it runs.
        class Refusing:
            def object_backport_versions(self, context, objinst, versions):
                raise exception.ObjectBackportError(
                    objname='Widget', target=versions['Widget'],
                    reason="colour='red' needs version 1.1")
        self._old_node(Refusing())
        exc = self.assertRaises(exception.ObjectBackportError,
                                self.serializer.deserialize_entity, None,
                                self.newer_primitive)
        self.assertIn("colour='red' needs version 1.1", str(exc))

    def test_unreadable_version_without_indirection_names_the_object(self):
        self._old_node()
        exc = self.assertRaises(exception.IncompatibleObjectVersion,
                                self.serializer.deserialize_entity, None,
                                self.newer_primitive)
        self.assertEqual('Widget', exc.kwargs['objname'])
        self.assertEqual('1.1', exc.kwargs['objver'])
        self.assertIn('Widget version 1.1', str(exc))

    def test_unknown_object_is_a_resobj_error(self):
        self._old_node()
        self.newer_primitive['resobj_object.name'] = 'Gadget'
        exc = self.assertRaises(exception.UnsupportedObject,
                                self.serializer.deserialize_entity, None,
                                self.newer_primitive)
        self.assertIn('Gadget', str(exc))

    def test_foreign_namespace_is_refused(self):
        self._old_node()
        primitive = self.old(name='w').obj_to_primitive()
        primitive['resobj_object.namespace'] = 'elsewhere'
        self.assertRaises(exception.UnsupportedObject,
                          self.serializer.deserialize_entity, None,
                          primitive)


class TestFastChangeTracking(_RegistryTestCase):
    """resobj's obj_what_changed/obj_attr_is_set agree with the stock ones."""

    def setUp(self):
        super().setUp()

        class Child(base.ResobjObject):
            fields = {'n': fields.IntegerField()}

        class Parent(base.ResobjObject):
            fields = {'name': fields.StringField(),
                      'child': fields.ObjectField('Child', nullable=True),
                      'tags': fields.ListOfStringsField(default=[])}
            obj_extra_fields = ['label']

            @property
            def label(self):
                return 'x'

        base.ResobjObjectRegistry.register(Child)
        base.ResobjObjectRegistry.register(Parent)
        self.Child, self.Parent = Child, Parent

    def _assert_same(self, obj):
        self.assertEqual(ovo_base.VersionedObject.obj_what_changed(obj),
                         obj.obj_what_changed())
        for name in list(obj.fields) + obj.obj_extra_fields:
            self.assertEqual(
                ovo_base.VersionedObject.obj_attr_is_set(obj, name),
                obj.obj_attr_is_set(name))

    def test_states(self):
        parent = self.Parent()
        self._assert_same(parent)
        parent.name = 'p'
        self._assert_same(parent)
        parent.child = self.Child(n=1)
        self._assert_same(parent)
        parent.obj_reset_changes(recursive=True)
        self.assertEqual(set(), parent.obj_what_changed())
        self._assert_same(parent)
        parent.child.n = 2
        self.assertEqual({'child'}, parent.obj_what_changed())
        self._assert_same(parent)
        parent.child = None
        self._assert_same(parent)

    def test_unknown_attribute(self):
        parent = self.Parent()
        self.assertRaises(AttributeError, parent.obj_attr_is_set, 'nope')
        self.assertRaises(AttributeError,
                          ovo_base.VersionedObject.obj_attr_is_set, parent,
                          'nope')
        self.assertTrue(parent.obj_attr_is_set('label') is False)


class TestInvalidValues(test_base.TestCase):

    def test_errors_name_object_and_field(self):
        service = objects.Service()
        for name, value in (('report_count', 'abc'), ('report_count', -1),
                            ('host', None), ('uuid', 'nope'),
                            ('last_seen_up', 'yesterday')):
            exc = self.assertRaises(ValueError, setattr, service, name,
                                    value)
            self.assertIn('Service.%s: ' % name, str(exc))
            self.assertFalse(service.obj_attr_is_set(name))

    def test_other_attributes_are_untouched(self):
        service = objects.Service()
        service.anything = 1
        self.assertEqual(1, service.anything)
