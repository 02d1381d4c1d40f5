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

from resobj import objects
from resobj.objects import _ovo
from resobj.objects._ovo import fixture as ovo_fixture
from resobj.objects import base


def _describe_type(field_type):
    """A nested tuple naming everything that defines a field type."""
    description = [type(field_type).__name__]
    for attr in ('_obj_name', '_subclasses', 'tzinfo_aware'):
        if hasattr(field_type, attr):
            description.append((attr, getattr(field_type, attr)))
    valid = getattr(field_type, '_valid_values', None)
    if valid is not None:
        description.append(('valid_values', tuple(valid)))
    element = getattr(field_type, '_element_type', None)
    if element is not None:
        # List/Set/Dict hold a Field around the element's type, whose
        # nullability separates e.g. DictOfStrings from
        # DictOfNullableStrings.
        description.append(('element', getattr(element, 'nullable', None),
                            _describe_type(getattr(element, '_type',
                                                   element))))
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
