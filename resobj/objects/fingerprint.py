"""Object fingerprints: what downstream CI pins to catch unversioned changes.

A fingerprint is ``'X.Y-<md5>'`` as oslo.versionedobjects'
``ObjectVersionChecker`` computes it, plus resobj's :func:`extra_data`,
which closes the checker's blind spots: on its own it hashes a field's
``repr``, in which ``ListOfStringsField`` and ``ListOfIntegersField`` look
alike, an ``ObjectField`` does not name its target class, and
``read_only`` does not appear at all.

``resobj-manage objects fingerprints`` and the pinned unit test both call
:func:`fingerprints`, so they cannot disagree.
"""

import typing

from resobj import objects
from resobj.objects import _ovo
from resobj.objects._ovo import fixture as ovo_fixture
from resobj.objects import base
from resobj.objects import primitive


def _describe_type(field_type):
    """A nested tuple naming everything that defines a field type."""
    description = [type(field_type).__name__]
    target = _ovo.object_target(field_type)
    if target is not None:
        # Labelled with the library's own attribute names, as the pinned
        # fingerprints hash them.
        description += [('_obj_name', target.name),
                        ('_subclasses', target.subclasses)]
    if hasattr(field_type, 'tzinfo_aware'):
        description.append(('tzinfo_aware', field_type.tzinfo_aware))
    valid = _ovo.valid_values(field_type)
    if valid is not None:
        description.append(('valid_values', tuple(valid)))
    element = _ovo.element_field(field_type)
    if element is not None:
        # List/Set/Dict hold a Field around the element's type, whose
        # nullability separates e.g. DictOfStrings from
        # DictOfNullableStrings.
        description.append(('element', element.nullable,
                            _describe_type(_ovo.field_type(element))))
    return tuple(description)


def _describe_field(field):
    return (type(field).__name__, ('read_only', field.read_only),
            _describe_type(_ovo.field_type(field)))


def extra_data(obj_class):
    """Data hashed besides the field reprs and remotable signatures."""
    return (tuple(sorted((name, _describe_field(field))
                         for name, field in obj_class.fields.items())),)


def object_classes():
    """{name: [registered classes, newest first]} for resobj objects only.

    The registry is shared with every other project in the process.
    """
    objects.register_all()
    registry = base.ResobjObjectRegistry.obj_classes()
    return {
        name: list(classes) for name, classes in registry.items()
        if classes[0].OBJ_PROJECT_NAMESPACE
        == base.ResobjObject.OBJ_PROJECT_NAMESPACE
    }


def checker(obj_classes=None):
    return ovo_fixture.ObjectVersionChecker(
        object_classes() if obj_classes is None else obj_classes)


def fingerprints(obj_classes=None):
    """{object name: 'X.Y-<md5>'} for every registered resobj object."""
    return checker(obj_classes).get_hashes(extra_data_func=extra_data)


# How a current fingerprint differs from a pinned one (Change.kind).
UNVERSIONED = 'unversioned'  # same version, other hash: never right
NEWER = 'newer'  # a new version
OLDER = 'older'  # an older version than pinned
REMOVED = 'removed'  # pinned, no longer registered
UNPINNED = 'unpinned'  # registered, not pinned


class Change(typing.NamedTuple):
    objname: str
    pinned: str | None
    current: str | None
    kind: str


def split(value):
    """('X.Y', '<md5>') of a fingerprint; ValueError if it is not one."""
    version, sep, digest = value.partition('-') if isinstance(
        value, str) else ('', '', '')
    if not sep or not digest or not primitive.is_version(version):
        raise ValueError('%r is not a fingerprint (X.Y-<md5>)' % (value,))
    return version, digest


def compare(pinned, current):
    """[Change] for every object whose fingerprint is not the pinned one.

    ``pinned`` and ``current`` are {object name: fingerprint}. Objects
    only ``current`` has are UNPINNED changes, listed last.
    """
    changes, unpinned = [], []
    for name in sorted(set(pinned) | set(current)):
        old, new = pinned.get(name), current.get(name)
        if old == new:
            continue
        if new is None:
            changes.append(Change(name, old, None, REMOVED))
        elif old is None:
            unpinned.append(Change(name, None, new, UNPINNED))
        else:
            old_version, new_version = split(old)[0], split(new)[0]
            if old_version == new_version:
                kind = UNVERSIONED
            elif base.version_tuple(new_version) > \
                    base.version_tuple(old_version):
                kind = NEWER
            else:
                kind = OLDER
            changes.append(Change(name, old, new, kind))
    return changes + unpinned
