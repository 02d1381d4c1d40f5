"""Comparing primitives of one object as two releases wrote them."""

from oslo_versionedobjects import fields as ovo_fields

from resobj.objects import base
from resobj.tests import samples

NS = base.ResobjObject.OBJ_SERIAL_NAMESPACE
NAME, VERSION, DATA = NS + '.name', NS + '.version', NS + '.data'


def is_envelope(value):
    return isinstance(value, dict) and NAME in value


def _field(objname, key):
    classes = base.ResobjObjectRegistry.obj_classes().get(objname)
    return classes[0].fields.get(key) if classes else None


def _plain(objname, key, value):
    # A set travels as a list in whatever order the sender's hashing
    # gave it.
    field = _field(objname, key)
    if field is not None and isinstance(field._type, ovo_fields.Set) \
            and value is not None:
        return sorted(value, key=repr)
    return value


def differences(left, right, path=''):
    """Where envelopes ``left`` and ``right`` disagree on a shared field.

    Fields that only one side carries (one release does not know them)
    and fields an older version holds in another form on purpose
    (``samples.converted``) are not compared; everything else must be
    equal, children compared the same way. A list of strings.
    """
    name = left[NAME]
    path = path or name
    if name != right[NAME]:
        return ['%s: %s became %s' % (path, name, right[NAME])]
    found = []
    skip = samples.converted_fields(name)
    shared = sorted((set(left[DATA]) & set(right[DATA])) - skip)
    for key in shared:
        a, b = left[DATA][key], right[DATA][key]
        where = '%s.%s' % (path, key)
        if is_envelope(a) and is_envelope(b):
            found += differences(a, b, where)
        elif isinstance(a, list) and isinstance(b, list) and \
                any(map(is_envelope, a + b)):
            if len(a) != len(b):
                found.append('%s: %d items became %d'
                             % (where, len(a), len(b)))
            for i, (x, y) in enumerate(zip(a, b)):
                found += differences(x, y, '%s[%d]' % (where, i))
        elif _plain(name, key, a) != _plain(name, key, b):
            found.append('%s: %r became %r' % (where, a, b))
    return found


def versions_in(envelope, found=None):
    """[(object name, version), ...] of ``envelope`` and its children."""
    found = [] if found is None else found
    found.append((envelope[NAME], envelope[VERSION]))
    for value in envelope[DATA].values():
        for item in (value if isinstance(value, list) else [value]):
            if is_envelope(item):
                versions_in(item, found)
    return found
