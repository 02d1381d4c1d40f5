"""Loading primitives: a malformed one raises a resobj exception.

A primitive is what ``obj_to_primitive()`` makes and what crosses a
process boundary (an RPC argument, a stored blob)::

    {'resobj_object.name': 'Allocation',
     'resobj_object.namespace': 'resobj',
     'resobj_object.version': '1.2',
     'resobj_object.data': {'used': 4, ...},
     'resobj_object.changes': ['used']}       # optional

oslo.versionedobjects trusts its input: a missing key is a ``KeyError``,
``data: None`` a ``TypeError``, a string in a list field is loaded as a
list of its characters, a child of the wrong class is loaded in full
before the field refuses it (so a deeply nested one exhausts the stack),
and a field loads a child with ``obj_from_primitive`` of the *parent's*
class, which therefore cannot refuse another class's primitive. Here
every primitive is checked before anything is built from it, children
are loaded by the field's own class, and each field's errors are
reported as ``MalformedPrimitive`` naming the object and the field.
"""

import re

from resobj import exception
from resobj.objects._ovo import base as ovo_base
from resobj.objects._ovo import exception as ovo_exc
from resobj.objects._ovo import fields as ovo_fields
from resobj.objects import fields

# Objects nested in objects, and containers in the serializer's RPC
# arguments. resobj's deepest tree is four objects (Service, ComputeNode,
# PciDevicePoolList, PciDevicePool); the limit stops a self-referencing
# object type from turning a hostile primitive into a RecursionError.
MAX_DEPTH = 32

# X.Y or X.Y.Z in ASCII digits, matched in full: ``$`` would let a
# trailing newline through and ``\d`` would take other scripts' digits.
_VERSION = re.compile(r'[0-9]+\.[0-9]+(\.[0-9]+)?', re.ASCII)

# What a field's coercion raises for a value of the wrong type or form.
# RecursionError: some coercions put the value's repr in their message,
# which for a deeply nested value exhausts the stack.
_VALUE_ERRORS = (ValueError, TypeError, KeyError, AttributeError,
                 IndexError, ArithmeticError, RecursionError)

_UNKNOWN = 'an unnamed object'


class Keys:
    """The envelope keys of a base class's primitives."""

    def __init__(self, serial_namespace):
        prefix = serial_namespace + '.'
        self.name = prefix + 'name'
        self.namespace = prefix + 'namespace'
        self.version = prefix + 'version'
        self.data = prefix + 'data'
        self.changes = prefix + 'changes'


_KEYS = {}


def keys(base_cls):
    """The :class:`Keys` of ``base_cls`` (ResobjObject)."""
    found = _KEYS.get(base_cls.OBJ_SERIAL_NAMESPACE)
    if found is None:
        found = _KEYS[base_cls.OBJ_SERIAL_NAMESPACE] = Keys(
            base_cls.OBJ_SERIAL_NAMESPACE)
    return found


def is_version(value):
    """Whether ``value`` is a version string a primitive may carry."""
    return isinstance(value, str) and bool(_VERSION.fullmatch(value))


def load(base_cls, primitive, context=None, expected=None, depth=0):
    """The resobj object ``primitive`` describes.

    ``base_cls`` is the project base (ResobjObject); ``expected`` the class
    the caller asked for: the primitive must be of that class, of one of
    its registered subclasses or bear its name. Raises MalformedPrimitive
    (WrongObjectPrimitive for another class's primitive), UnsupportedObject
    for an object this code does not know and IncompatibleObjectVersion
    for a well-formed version it cannot read. Never changes ``primitive``.
    """
    k = keys(base_cls)
    name, version = _check_envelope(base_cls, k, primitive, expected)
    objclass = _registered_class(base_cls, k, name, version, expected)
    if depth > MAX_DEPTH:
        raise exception.MalformedPrimitive(
            objname=name, field=k.data,
            reason='objects nested more than %d deep' % MAX_DEPTH)
    object_fields = _plan(objclass).object_fields
    if object_fields:
        # Children first, each by its field's class (module docstring).
        data = dict(primitive[k.data])
        for field_name, field in object_fields:
            if data.get(field_name) is not None:
                data[field_name] = _children(base_cls, k, name, field_name,
                                             field, data[field_name],
                                             context, depth)
        primitive = dict(primitive)
        primitive[k.data] = data
    return objclass._obj_from_primitive(context, version, primitive)


def fill(base_cls, obj, version, primitive):
    """Set ``obj``'s fields from the checked ``primitive`` (version kept).

    Fields that ``data`` lacks stay unset; keys ``obj`` does not know are
    ignored, as oslo.versionedobjects does, so that a newer minor version
    reads as this one. Returns ``obj``.
    """
    k = keys(base_cls)
    obj.VERSION = version
    data = primitive[k.data]
    for name, field, kind in _plan(type(obj)).fields:
        if name not in data:
            continue
        raw = data[name]
        try:
            if kind is _OBJECTS and raw is not None:
                # Only a caller of _obj_from_primitive itself gets here
                # with children not yet loaded (load() loads them first).
                raw = _children(base_cls, k, obj.obj_name(), name, field,
                                raw, obj.obj_context, 0)
            value = field.from_primitive(obj, name, raw)
            setattr(obj, name, value)
        except exception.ResobjException:
            raise
        except _VALUE_ERRORS as exc:
            # resobj's field setters name object and field in a ValueError
            # raised from the original one; report the original's words.
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            raise exception.MalformedPrimitive(
                objname=obj.obj_name(), field=name,
                reason=_reason(cause)) from exc
        if kind is _CONTAINER and not _same_shape(raw, value):
            # List.from_primitive iterates whatever it gets: a string
            # becomes a list of its characters and a dict the list of its
            # keys. (``value`` passed coercion, so its depth is bounded.)
            raise exception.MalformedPrimitive(
                objname=obj.obj_name(), field=name,
                reason='%s where the field holds a %s'
                % (_kind(raw), type(value).__name__))
    changes = primitive.get(k.changes)
    if not changes:
        obj.obj_reset_changes()
    else:
        # Every field set above counts as changed; the primitive says
        # which really were.
        unchanged = [name for name in obj.fields if name not in changes]
        if unchanged:
            obj.obj_reset_changes(unchanged)
    return obj


_OBJECTS = 'objects'
_CONTAINER = 'container'
_VALUE = 'value'


class _Plan:
    """A class's fields, each with how it is loaded."""

    def __init__(self, cls):
        self.fields = tuple((name, field, _field_kind(field))
                            for name, field in cls.fields.items())
        self.object_fields = tuple((name, field)
                                   for name, field, kind in self.fields
                                   if kind is _OBJECTS)


def _field_kind(field):
    if isinstance(field, (fields.ObjectField, fields.ListOfObjectsField)):
        return _OBJECTS
    # AUTO_TYPE is how a field class names its type (ListOfEnumField sets
    # it per instance); a field built on a type directly is checked too.
    auto = getattr(field, 'AUTO_TYPE', None)
    if auto is None or isinstance(
            auto, (ovo_fields.List, ovo_fields.Set, ovo_fields.Dict)):
        return _CONTAINER
    return _VALUE


# Per class, built on first use: classes and their fields never change.
_PLANS = {}


def _plan(cls):
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _Plan(cls)
    return plan


def _check_envelope(base_cls, k, primitive, expected):
    """(name, version) of a primitive whose envelope is well-formed."""
    label = expected.obj_name() if expected is not None else _UNKNOWN
    if not isinstance(primitive, dict):
        raise exception.MalformedPrimitive(
            objname=label, field='(primitive)',
            reason='a primitive is a dict, not %s' % _kind(primitive))
    name = _envelope_string(primitive, k.name, label)
    namespace = _envelope_string(primitive, k.namespace, name)
    if namespace != base_cls.OBJ_PROJECT_NAMESPACE:
        # Well-formed, but another project's object.
        version = primitive.get(k.version)
        raise exception.UnsupportedObject(
            objname='%s.%s' % (namespace, name),
            objver=version if isinstance(version, str) else '?')
    version = _envelope_string(primitive, k.version, name)
    if not _VERSION.fullmatch(version):
        raise exception.MalformedPrimitive(
            objname=name, field=k.version,
            reason='%r is not a version (X.Y or X.Y.Z)' % version[:40])
    data = primitive.get(k.data)
    if not isinstance(data, dict):
        raise exception.MalformedPrimitive(
            objname=name, field=k.data,
            reason='a dict of field values is required, not %s'
            % _kind(data))
    changes = primitive.get(k.changes, [])  # optional, as in ovo
    if not isinstance(changes, list) or not all(
            isinstance(change, str) for change in changes):
        raise exception.MalformedPrimitive(
            objname=name, field=k.changes,
            reason='a list of field names is required')
    return name, version


def _envelope_string(primitive, envelope_key, label):
    value = primitive.get(envelope_key)
    if isinstance(value, str) and value:
        return value
    raise exception.MalformedPrimitive(
        objname=label, field=envelope_key,
        reason='missing' if envelope_key not in primitive else
        'a non-empty string is required, not %s' % _kind(value))


def _registered_class(base_cls, k, name, version, expected):
    """The registered resobj class that reads ``name`` at ``version``."""
    classes = ovo_base.VersionedObjectRegistry.obj_classes().get(name)
    # The registry is shared with every project in the process.
    if not classes or not issubclass(classes[0], base_cls):
        raise exception.UnsupportedObject(objname=name, objver=version)
    if expected is not None and name != expected.obj_name() and not any(
            issubclass(cls, expected) for cls in classes):
        raise exception.WrongObjectPrimitive(
            objname=expected.obj_name(), field=k.name,
            expected=expected.obj_name(), actual=name)
    try:
        return base_cls.obj_class_from_name(name, version)
    except ovo_exc.IncompatibleObjectVersion:
        raise exception.IncompatibleObjectVersion(
            objname=name, objver=version, supported=classes[0].VERSION)


def _children(base_cls, k, parent, field_name, field, raw, context, depth):
    """The loaded child (or list of children) of an object field.

    A child already loaded (by the serializer) passes through. The field
    names its class; ``subclasses=True`` fields are not used in resobj, so
    a subclass's primitive is accepted only if registered under the name.
    """
    classes = ovo_base.VersionedObjectRegistry.obj_classes().get(
        field.objname)
    child_cls = classes[0] if classes else None

    def one(item):
        if isinstance(item, ovo_base.VersionedObject):
            return item
        if not isinstance(item, dict):
            raise exception.MalformedPrimitive(
                objname=parent, field=field_name,
                reason='a %s primitive is required, not %s'
                % (field.objname, _kind(item)))
        name = item.get(k.name)
        if isinstance(name, str) and name != field.objname:
            raise exception.WrongObjectPrimitive(
                objname=parent, field=field_name, expected=field.objname,
                actual=name)
        return load(base_cls, item, context, child_cls, depth + 1)

    if isinstance(field, fields.ListOfObjectsField):
        if not isinstance(raw, (list, tuple)):
            raise exception.MalformedPrimitive(
                objname=parent, field=field_name,
                reason='a list of %s primitives is required, not %s'
                % (field.objname, _kind(raw)))
        return [one(item) for item in raw]
    return one(raw)


def _same_shape(raw, value):
    """Whether the loaded ``value`` has the containers ``raw`` had."""
    if isinstance(value, ovo_base.VersionedObject):
        return True
    if isinstance(value, (set, frozenset)):
        # A set's primitive is a tuple, which JSON turns into a list.
        return isinstance(raw, (list, tuple))
    if isinstance(value, (list, tuple)):
        return isinstance(raw, (list, tuple)) and len(raw) == len(value) \
            and all(_same_shape(r, v) for r, v in zip(raw, value))
    if isinstance(value, dict):
        return isinstance(raw, dict) and all(
            k in raw and _same_shape(raw[k], v) for k, v in value.items())
    return True


def _reason(exc):
    if isinstance(exc, RecursionError):
        return 'the value is nested too deeply'
    text = str(exc) or type(exc).__name__
    # A message may quote the offending value, which can be huge.
    return text if len(text) <= 300 else text[:300] + '...'


def _kind(value):
    """Names a value's type for a message without quoting the value."""
    if value is None:
        return 'null'
    return 'a %s' % type(value).__name__
