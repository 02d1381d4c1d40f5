"""An object version's shape: its field names and what each field holds.

The shape is what a peer at that version can read: for every field, its
type as it travels (``'NonNegativeInteger or None'``, ``'Dict(String or
None)'``, ``'Enum(available, claimed)'``), and for a child object the
version the parent carries it at (``'Object(Flavor 1.1) or None'``).
Defaults, ``read_only`` and remotable methods do not travel; the
fingerprint (resobj.objects.fingerprint) covers them.

The shapes of every version are recorded once and committed
(``resobj/tests/data/shapes``); resobj.testing checks the code against
the record. Types are named by the oslo.versionedobjects type they
derive from, so renaming a project's own type class changes nothing on
the wire and nothing here.
"""

from oslo_utils import versionutils

from resobj.objects import _ovo
from resobj.objects._ovo import fields as ovo_fields


def _version_tuple(version):
    return versionutils.convert_version_to_tuple(version)


def _wire_type_name(field_type):
    """The oslo.versionedobjects type ``field_type`` is, or derives from."""
    for klass in type(field_type).__mro__:
        if klass.__module__ == ovo_fields.__name__:
            return klass.__name__
    return type(field_type).__name__


def _describe_type(field_type, child_version=None):
    name = _wire_type_name(field_type)
    # What defines each of the library's types (fingerprint.py reads the
    # same).
    target = _ovo.object_target(field_type)
    if target is not None:
        inner = target.name
        if child_version is not None:
            inner += ' ' + child_version
        if target.subclasses:
            inner += ', subclasses'
        return '%s(%s)' % (name, inner)
    valid = _ovo.valid_values(field_type)
    if valid is not None:
        return '%s(%s)' % (name, ', '.join(str(v) for v in valid))
    element = _ovo.element_field(field_type)
    if element is not None:
        return '%s(%s)' % (name, describe_field(element, child_version))
    if getattr(field_type, 'tzinfo_aware', True) is False:
        return '%s(naive)' % name
    return name


def describe_field(field, child_version=None):
    """What ``field`` holds on the wire, as one line of text.

    ``child_version``: for an object field (or a list of objects), the
    version of the child the parent carries.
    """
    text = _describe_type(_ovo.field_type(field), child_version)
    return text + ' or None' if field.nullable else text


def carried_version(cls, name, version):
    """The child version ``cls`` at ``version`` carries in field ``name``.

    Read from ``obj_relationships`` as oslo.versionedobjects reads it for
    a backport without a version manifest: the pair for ``version``, or
    the last one before it. None when the field has no pairs or
    ``version`` predates them.
    """
    carried = None
    for own, child in getattr(cls, 'obj_relationships', {}).get(name, ()):
        if _version_tuple(version) >= _version_tuple(own):
            carried = child
    return carried


def is_object_field(field):
    return isinstance(field, (ovo_fields.ObjectField,
                              ovo_fields.ListOfObjectsField))


def of_class(cls):
    """{field name: description} of ``cls`` at its own VERSION."""
    return {
        name: describe_field(field, carried_version(cls, name, cls.VERSION)
                             if is_object_field(field) else None)
        for name, field in cls.fields.items()}
