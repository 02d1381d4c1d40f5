"""The private names of oslo.versionedobjects that resobj relies on.

Each test fails if the library changes what one of the functions of
resobj/objects/_ovo.py (or the hook resobj replaces) reads or writes:
they are listed in doc/source/contributor/architecture.rst.
"""

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields as ovo_fields
from oslo_versionedobjects import fixture as ovo_fixture

from resobj import exception
from resobj import objects
from resobj.objects import _ovo
from resobj.objects import base
from resobj.tests import base as test_base

objects.register_all()


class _Child(ovo_base.VersionedObject):
    VERSION = '1.1'
    fields = {'size': ovo_fields.IntegerField()}


class _Parent(ovo_base.VersionedObject):
    """The library's own behaviour, resobj's aside (see _TestCase)."""

    VERSION = '1.0'
    fields = {'name': ovo_fields.StringField(),
              'note': ovo_fields.StringField(nullable=True),
              'child': ovo_fields.ObjectField('_Child')}
    obj_relationships = {'child': [('1.0', '1.1')]}

    # What obj_make_compatible saw and does (see the manifest tests).
    seen_manifest = None
    new_manifest = None

    def obj_make_compatible(self, primitive, target_version):
        self.seen_manifest = _ovo.version_manifest(self)
        if self.new_manifest is not None:
            _ovo.replace_version_manifest(self, self.new_manifest)
        super().obj_make_compatible(primitive, target_version)


def _data(primitive):
    return primitive['versioned_object.data']


class _TestCase(test_base.TestCase):

    def setUp(self):
        super().setUp()
        # Registering gives the classes their field properties; the
        # fixture takes them out of the library's registry afterwards.
        self.useFixture(ovo_fixture.VersionedObjectRegistryFixture())
        for cls in (_Child, _Parent):
            ovo_base.VersionedObjectRegistry.register(cls)


class TestStoredFieldKey(_TestCase):

    def test_a_set_field_is_stored_under_the_key(self):
        obj = _Parent(name='a')
        self.assertIn(_ovo.stored_field_key('name'), obj.__dict__)
        self.assertEqual('a', obj.__dict__[_ovo.stored_field_key('name')])

    def test_an_unset_field_is_not(self):
        obj = _Parent(name='a')
        self.assertFalse(ovo_base.VersionedObject.obj_attr_is_set(
            obj, 'note'))
        self.assertNotIn(_ovo.stored_field_key('note'), obj.__dict__)


class TestChangedFields(_TestCase):

    def test_the_library_records_changes_there(self):
        obj = _Parent(name='a')
        self.assertEqual({'name'}, _ovo.changed_fields(obj))
        obj.note = 'b'
        self.assertEqual({'name', 'note'}, _ovo.changed_fields(obj))
        obj.obj_reset_changes(['name'])
        self.assertEqual({'note'}, _ovo.changed_fields(obj))

    def test_it_is_what_the_library_reports_without_children(self):
        obj = _Parent(name='a', note=None)
        obj.obj_reset_changes(['name'])
        self.assertEqual(ovo_base.VersionedObject.obj_what_changed(obj),
                         _ovo.changed_fields(obj))


class TestVersionManifest(_TestCase):

    def _parent(self):
        parent = _Parent(name='a', child=_Child(size=1))
        parent.obj_reset_changes(recursive=True)
        return parent

    def test_obj_to_primitive_stashes_the_manifest(self):
        parent = self._parent()
        manifest = {'_Parent': '1.0', '_Child': '1.1'}
        parent.obj_to_primitive(version_manifest=manifest)
        self.assertEqual(manifest, parent.seen_manifest)
        # And takes it away again once obj_make_compatible returns.
        self.assertIsNone(_ovo.version_manifest(parent))

    def test_the_replaced_manifest_is_followed(self):
        parent = self._parent()
        manifest = {'_Parent': '1.0', '_Child': '1.1'}
        child = _data(parent.obj_to_primitive(
            version_manifest=manifest))['child']
        self.assertEqual('1.1', child['versioned_object.version'])
        parent.new_manifest = {'_Parent': '1.0', '_Child': '1.0'}
        child = _data(parent.obj_to_primitive(
            version_manifest=manifest))['child']
        self.assertEqual('1.0', child['versioned_object.version'])


class TestFieldType(test_base.TestCase):

    def test_the_type_of_each_kind_of_field(self):
        self.assertIsInstance(_ovo.field_type(ovo_fields.StringField()),
                              ovo_fields.String)
        self.assertIsInstance(
            _ovo.field_type(ovo_fields.ListOfStringsField()),
            ovo_fields.List)
        self.assertIsInstance(_ovo.field_type(ovo_fields.ObjectField('X')),
                              ovo_fields.Object)

    def test_what_defines_each_kind_of_type(self):
        string = _ovo.field_type(ovo_fields.StringField())
        self.assertEqual(
            (None, None, None), (_ovo.object_target(string),
                                 _ovo.valid_values(string),
                                 _ovo.element_field(string)))
        self.assertEqual(('X', True), _ovo.object_target(_ovo.field_type(
            ovo_fields.ObjectField('X', subclasses=True))))
        self.assertEqual(('X', False), _ovo.object_target(_ovo.field_type(
            ovo_fields.ObjectField('X'))))
        self.assertEqual(['a', 'b'], list(_ovo.valid_values(_ovo.field_type(
            ovo_fields.EnumField(['a', 'b'])))))
        element = _ovo.element_field(_ovo.field_type(
            ovo_fields.DictOfNullableStringsField()))
        self.assertTrue(element.nullable)
        self.assertIsInstance(_ovo.field_type(element), ovo_fields.String)


class TestSetContext(_TestCase):

    def test_the_object_uses_the_context_set(self):
        context = object()
        obj = _Parent(name='a')
        _ovo.set_context(obj, context)
        self.assertIs(context, obj.obj_context)


class TestFromPrimitiveHook(test_base.TestCase):
    """``_obj_from_primitive``: the hook the library's loading calls.

    resobj replaces it (ResobjObject._obj_from_primitive) so that a
    primitive loaded through the library's own classmethod is checked
    as resobj checks every primitive.
    """

    def test_the_library_loads_through_resobjs_hook(self):
        primitive = objects.ResourceClass(
            id=1, name='CUSTOM_GOLD').obj_to_primitive()
        loaded = ovo_base.VersionedObject.obj_from_primitive.__func__(
            base.ResobjObject, primitive)
        self.assertEqual('CUSTOM_GOLD', loaded.name)
        primitive['resobj_object.data']['id'] = 'not a number'
        self.assertRaises(
            exception.MalformedPrimitive,
            ovo_base.VersionedObject.obj_from_primitive.__func__,
            base.ResobjObject, primitive)
