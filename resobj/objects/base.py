"""The base classes every resobj object is built on.

Versioning contract (see doc/source/contributor/objects.rst):

* every change to an object's fields or remotable methods bumps its
  ``VERSION`` and adds a ``# Version X.Y: ...`` line above it;
* ``obj_make_compatible`` calls ``super()`` first, then removes or converts
  what older versions lack, and raises when a value cannot be represented;
* the fingerprint pinned in ``resobj/tests/unit/objects/test_objects.py``
  changes with it.
"""

from oslo_utils import versionutils

from resobj import exception
from resobj.objects import _ovo
from resobj.objects._ovo import base as ovo_base
from resobj.objects._ovo import exception as ovo_exc
from resobj.objects import fields
from resobj.objects import primitive as primitive_mod

remotable = ovo_base.remotable
obj_make_list = ovo_base.obj_make_list
obj_tree_get_versions = ovo_base.obj_tree_get_versions


def version_tuple(version):
    return versionutils.convert_version_to_tuple(version)


def drop_fields_added_after(primitive, target_version, added_in):
    """Pop every field that ``target_version`` predates.

    ``added_in`` maps a field name to the version that added it, e.g.
    ``{'description': '1.1'}``; ``primitive`` is the object's data dict as
    ``obj_make_compatible`` receives it.
    """
    target = version_tuple(target_version)
    for name, version in added_in.items():
        if target < version_tuple(version):
            primitive.pop(name, None)


def relabel_newer_minor_versions(primitive, _depth=0):
    """Read stored primitives written by newer code: same major, newer minor.

    Minor versions only add fields, and loading ignores fields this code
    does not know, so a newer minor version of a known object is read as
    the newest version known here. Walks children too. Returns whether
    anything was relabelled; raises nothing for unknown objects, newer
    majors or malformed primitives, which loading then reports.
    """
    if _depth > primitive_mod.MAX_DEPTH:
        return False
    relabelled = False
    if isinstance(primitive, list):
        for item in primitive:
            relabelled = relabel_newer_minor_versions(
                item, _depth + 1) or relabelled
        return relabelled
    if not isinstance(primitive, dict):
        return False
    prefix = ResobjObject.OBJ_SERIAL_NAMESPACE + '.'
    name = primitive.get(prefix + 'name')
    version = primitive.get(prefix + 'version')
    classes = ResobjObjectRegistry.obj_classes().get(name) \
        if isinstance(name, str) else None
    if classes and primitive_mod.is_version(version):
        known = classes[0].VERSION
        ours, theirs = version_tuple(known), version_tuple(version)
        if ours[0] == theirs[0] and theirs > ours:
            primitive[prefix + 'version'] = known
            relabelled = True
    data = primitive.get(prefix + 'data')
    for value in (data.values() if isinstance(data, dict) else ()):
        relabelled = relabel_newer_minor_versions(
            value, _depth + 1) or relabelled
    return relabelled


def raise_on_too_new_values(objname, target_version, primitive, name,
                            value_added_in):
    """Refuse to send a value the receiver's version cannot represent.

    ``value_added_in`` maps an (enum) value of field ``name`` to the
    version that introduced it. Dropping or rewriting such a value would
    hand the older peer something false, so the backport fails instead.
    """
    value = primitive.get(name)
    added = value_added_in.get(value)
    if added is not None and version_tuple(target_version) < \
            version_tuple(added):
        raise exception.ObjectBackportError(
            objname=objname, target=target_version,
            reason='%s=%r needs version %s or newer' % (name, value, added))


def _name_fields_in_errors(cls):
    """Make every field setter of ``cls`` name the field in its errors.

    oslo.versionedobjects' coercion errors often omit it ("invalid literal
    for int()"). Wrapping the setters it generated, rather than
    __setattr__, costs nothing for the attributes that are not fields.
    """
    for name in cls.fields:
        prop = cls.__dict__.get(name)
        if not isinstance(prop, property) or getattr(
                prop.fset, 'names_field', False):
            continue

        def fset(self, value, _set=prop.fset, _name=name):
            try:
                _set(self, value)
            except ValueError as exc:
                raise ValueError('%s.%s: %s' % (self.obj_name(), _name, exc)) \
                    from exc

        fset.names_field = True
        setattr(cls, name, property(prop.fget, fset, prop.fdel, prop.__doc__))


def newest_class(objname):
    """The newest registered resobj class named ``objname``.

    For an object module that calls another object it cannot import
    without a circle (ComputeNode asks Service for the minimum service
    version; the service module imports the compute node's): looked up
    in the registry when called, once every module is imported.
    """
    return ResobjObjectRegistry.obj_classes()[objname][0]


def class_from_name(objname, objver):
    """The resobj class that reads ``objname`` at version ``objver``.

    For a peer naming an object and version (the conductor's callers):
    UnsupportedObject for a name resobj does not know (another project's
    object in the shared registry included), IncompatibleObjectVersion
    for a version this code cannot read.
    """
    classes = ovo_base.VersionedObjectRegistry.obj_classes().get(objname)
    if not classes or not issubclass(classes[0], ResobjObject):
        raise exception.UnsupportedObject(objname=objname, objver=objver)
    try:
        return ResobjObject.obj_class_from_name(objname, objver)
    except ovo_exc.IncompatibleObjectVersion:
        raise exception.IncompatibleObjectVersion(
            objname=objname, objver=objver, supported=classes[0].VERSION)


class ResobjObjectRegistry(ovo_base.VersionedObjectRegistry):
    """Registers objects and publishes the newest as ``resobj.objects.X``.

    oslo.versionedobjects keeps one registry per process, shared by every
    subclass; this class exists for its hook, not for isolation.
    """

    def registration_hook(self, cls, index):
        _name_fields_in_errors(cls)
        # Imported here: resobj.objects imports this module.
        from resobj import objects
        current = getattr(objects, cls.obj_name(), None)
        version = versionutils.convert_version_to_tuple(cls.VERSION)
        if current is None or version >= versionutils.\
                convert_version_to_tuple(current.VERSION):
            setattr(objects, cls.obj_name(), cls)


class ResobjObject(ovo_base.VersionedObject):
    """The base of every resobj object.

    Its own namespaces keep resobj primitives apart from those of any other
    project that shares the process-wide registry.
    """

    OBJ_SERIAL_NAMESPACE = 'resobj_object'
    OBJ_PROJECT_NAMESPACE = 'resobj'

    @classmethod
    def obj_from_primitive(cls, primitive, context=None):
        """The object a primitive describes, checked before it is built.

        Called on ResobjObject, any resobj object loads; called on a
        subclass, only a primitive of that class (or of its registered
        subclasses) does: ``Allocation.obj_from_primitive()`` refuses a
        Service's. Anything malformed raises MalformedPrimitive naming the
        object and the field (see resobj.objects.primitive).
        """
        return primitive_mod.load(
            ResobjObject, primitive, context,
            expected=None if cls is ResobjObject else cls)

    @classmethod
    def _obj_from_primitive(cls, context, objver, primitive):
        # oslo.versionedobjects' hook, replaced: its loop would let every
        # field's errors out as they come and load children through the
        # parent's class. Subclasses override it and call super().
        return primitive_mod.fill(ResobjObject, cls(context=context),
                                  objver, primitive)

    def obj_make_compatible(self, primitive, target_version):
        # Children go at the version this object's target version carried
        # (obj_relationships), never newer; see the function.
        _cap_manifest_to_relationships(self, target_version)
        super().obj_make_compatible(primitive, target_version)

    # The two overrides below keep oslo.versionedobjects' contract but not
    # its cost: there, obj_attr_is_set() rebuilds the list of field names
    # on every call, and obj_to_primitive() calls it once per field and
    # obj_what_changed() (twice) once more per field, so dehydrating an
    # object is quadratic in its fields, and children multiply it
    # (bench/roundtrip.py). Neither is remotable nor a field, so object
    # fingerprints do not change.

    def obj_attr_is_set(self, attrname):
        if attrname not in self.fields and \
                attrname not in self.obj_extra_fields:
            raise AttributeError("%s object has no attribute '%s'"
                                 % (self.obj_name(), attrname))
        return _ovo.stored_field_key(attrname) in self.__dict__

    def obj_what_changed(self):
        changes = {name for name in _ovo.changed_fields(self)
                   if name in self.fields}
        values = self.__dict__
        for name in self.fields:
            # Set fields live in the instance dict; reading it directly
            # never triggers a lazy load, as the stock check never did.
            value = values.get(_ovo.stored_field_key(name))
            if isinstance(value, ovo_base.VersionedObject) and \
                    value.obj_what_changed():
                changes.add(name)
        return changes

    @staticmethod
    def _from_db_object(context, obj, db_row, skip=()):
        """Fill ``obj`` from a DB API row (a dict) and mark it unchanged.

        Every field present in the row is set, except those in ``skip``,
        which the caller converts itself.
        """
        for name in obj.fields:
            if name in skip or name not in db_row:
                continue
            setattr(obj, name, db_row[name])
        _ovo.set_context(obj, context)
        obj.obj_reset_changes()
        return obj


class ResobjPersistentObject:
    """Fields of objects stored in a soft-delete table.

    ``deleted`` is an integer in the database (0, or the row id once
    deleted) and a boolean here.
    """

    fields = {
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'deleted_at': fields.DateTimeField(nullable=True),
        'deleted': fields.BooleanField(default=False),
    }

    def obj_get_db_changes(self):
        """The changed fields to write, without the DB-owned ones.

        The DB API sets timestamps and soft-deletes rows itself; writing
        the object's copies back could only undo that (or, for the boolean
        ``deleted``, break the integer column).
        """
        changes = self.obj_get_changes()
        for name in ResobjPersistentObject.fields:
            changes.pop(name, None)
        return changes


def _cap_manifest_to_relationships(obj, target_version):
    """Never send a child newer than ``target_version`` of ``obj`` carried.

    An object (or list) whose children have several versions declares,
    per field, which child version each of its own versions carries::

        obj_relationships = {'objects': [('1.0', '1.0'), ('1.1', '1.1')]}

    A backport then carries the children at that version, or at an older
    one when the receiver's manifest names one. oslo.versionedobjects
    alone follows the manifest even where it names a child version newer
    than the target version ever carried, which would put a child of a
    version the parent's history rules out into its primitive.
    """
    manifest = _ovo.version_manifest(obj)
    if not manifest:
        return
    capped = dict(manifest)
    for field, pairs in getattr(obj, 'obj_relationships', {}).items():
        carried = None
        for own_version, child_version in pairs:
            if version_tuple(target_version) >= version_tuple(own_version):
                carried = child_version
        child = obj.fields[field].objname
        if carried and child in capped and \
                version_tuple(capped[child]) > version_tuple(carried):
            capped[child] = carried
    # ovo removes the stashed manifest once obj_make_compatible returns.
    _ovo.replace_version_manifest(obj, capped)


class ObjectListBase(ovo_base.ObjectListBase):
    """Base of list objects: ``class XList(ObjectListBase, ResobjObject)``.

    The order of the bases matters: with ResobjObject first, ``objects``
    is never initialised.

    A list declares which item version each of its versions carries in
    ``obj_relationships`` (see _cap_manifest_to_relationships).
    """

    def obj_make_compatible(self, primitive, target_version):
        _cap_manifest_to_relationships(self, target_version)
        super().obj_make_compatible(primitive, target_version)


class ResobjObjectSerializer(ovo_base.VersionedObjectSerializer):
    """Turns objects into primitives and back across process boundaries.

    On receipt, a version ``X.Y.Z`` is read as ``X.Y``; a version this
    process cannot read is sent to the indirection API (a node running
    newer code) for a backport to this process's version manifest
    (``obj_tree_get_versions``). When that is not possible the error says
    which object and version could not be read. A malformed primitive
    raises what ``ResobjObject.obj_from_primitive`` raises for it, and
    arguments nested deeper than ``primitive.MAX_DEPTH`` raise
    MalformedPrimitive.

    Receiving is written here rather than inherited: oslo.versionedobjects
    catches only its own IncompatibleObjectVersion to backport, while
    resobj's loading raises resobj's.
    """

    OBJ_BASE_CLASS = ResobjObject

    def deserialize_entity(self, context, entity):
        return self._deserialize(context, entity, 0)

    def _deserialize(self, context, entity, depth):
        if depth > primitive_mod.MAX_DEPTH:
            raise exception.MalformedPrimitive(
                objname='an RPC argument', field='(nesting)',
                reason='containers nested more than %d deep'
                % primitive_mod.MAX_DEPTH)
        name_key = primitive_mod.keys(self.OBJ_BASE_CLASS).name
        if isinstance(entity, dict) and name_key in entity:
            return self._object(context, entity)
        if isinstance(entity, dict):
            return {k: self._deserialize(context, v, depth + 1)
                    for k, v in entity.items()}
        if isinstance(entity, tuple):
            return tuple(self._deserialize(context, v, depth + 1)
                         for v in entity)
        if isinstance(entity, (list, set)):
            # As oslo.versionedobjects does: a set may hold no dicts.
            return [self._deserialize(context, v, depth + 1)
                    for v in entity]
        return entity

    def _object(self, context, primitive):
        base_cls = self.OBJ_BASE_CLASS
        try:
            return base_cls.obj_from_primitive(primitive, context)
        except exception.IncompatibleObjectVersion:
            # Raised only for a well-formed envelope of a known object.
            version_key = primitive_mod.keys(base_cls).version
            version = primitive[version_key]
            if version.count('.') == 2:
                relabelled = dict(primitive)
                relabelled[version_key] = version.rsplit('.', 1)[0]
                return self._object(context, relabelled)
            if base_cls.indirection_api is None:
                raise
        name = primitive[primitive_mod.keys(base_cls).name]
        return self._backport(context, primitive, name)

    def _backport(self, context, primitive, name):
        indirection = self.OBJ_BASE_CLASS.indirection_api
        try:
            return indirection.object_backport_versions(
                context, primitive, obj_tree_get_versions(name))
        except NotImplementedError:
            # An indirection API that predates version manifests.
            newest = ResobjObjectRegistry.obj_classes()[name][0]
            return indirection.object_backport(context, primitive,
                                               newest.VERSION)
