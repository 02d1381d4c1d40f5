"""Comparing an object with what came back from a backport.

A backport may drop fields the older version lacks; every field it
keeps must come back as it was, children compared the same way, except
fields an older version holds in another form on purpose. Those are
declared as a :class:`Conversion`: the fields, the first version that
holds them in today's form, and a key, a function of an object of
either version that both forms must agree on::

    Conversion(('root_gb',), local_root_disk, before='1.3')

``converted`` below is {object name: [Conversion, ...]}.
"""

import json
import typing

from oslo_utils import versionutils

from resobj.testing import peer


class Conversion(typing.NamedTuple):
    """Fields versions before ``before`` hold in another form.

    ``key(obj)``, for an object of either form, is what both must agree
    on: a backport that loses or garbles the value gives another key.
    """

    fields: tuple
    key: typing.Callable
    before: str


def data(envelope):
    """The field values of an object primitive."""
    return envelope[peer.serial_namespace(envelope) + '.data']


def version(envelope):
    return envelope[peer.serial_namespace(envelope) + '.version']


def without_changes(value):
    """``value`` with every envelope's list of changed fields left out."""
    if isinstance(value, dict):
        namespace = peer.serial_namespace(value)
        skip = namespace + '.changes' if namespace else None
        return {k: without_changes(v) for k, v in value.items() if k != skip}
    if isinstance(value, list):
        return [without_changes(v) for v in value]
    return value


def dumps(primitive):
    """A primitive as canonical text, without its lists of changes."""
    return json.dumps(without_changes(primitive), indent=2,
                      sort_keys=True, default=repr) + '\n'


def first_difference(left, right, path=''):
    """Where two JSON-like values first differ, as text; None if equal."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right), key=str):
            where = '%s.%s' % (path, key) if path else str(key)
            if key not in right:
                return '%s only in the first' % where
            if key not in left:
                return '%s only in the second' % where
            found = first_difference(left[key], right[key], where)
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return '%s: %d items, then %d' % (path, len(left), len(right))
        for index, (a, b) in enumerate(zip(left, right)):
            found = first_difference(a, b, '%s[%d]' % (path, index))
            if found:
                return found
        return None
    if left != right:
        return '%s: %r, then %r' % (path, left, right)
    return None


def converted_fields(conversions):
    """The field names a list of Conversions declares."""
    return {name for conversion in conversions for name in conversion.fields}


def _older(version, than):
    return versionutils.convert_version_to_tuple(version) < \
        versionutils.convert_version_to_tuple(than)


def _is_object(value):
    return hasattr(value, 'obj_to_primitive') and hasattr(value, 'fields')


def _plain(value):
    if _is_object(value):
        return dumps(value.obj_to_primitive())
    return value


def kept(original, loaded, envelope, converted, path=None):
    """Where ``loaded`` does not hold what ``original`` held.

    ``loaded`` was read from ``envelope``, a backport of ``original``;
    every field the envelope carries is compared, children through their
    own envelopes, converted fields through their keys. A list of
    strings naming the object, the version and the field.
    """
    name = original.obj_name()
    path = path or name
    label = '%s %s' % (name, version(envelope))
    conversions = [c for c in converted.get(name, ())
                   if _older(version(envelope), c.before)]
    skip = converted_fields(conversions)
    values = data(envelope)
    found = []
    for conversion in conversions:
        fields = '/'.join(conversion.fields)
        try:
            before, after = conversion.key(original), conversion.key(loaded)
        except Exception as exc:  # noqa: B902 - reported as the problem
            found.append('%s: %s: the conversion key of %s raised %s: %s'
                         % (label, path, fields, type(exc).__name__, exc))
            continue
        if before != after:
            found.append('%s: %s.%s does not convert back: %r became %r'
                         % (label, path, fields, before, after))
    for field in sorted(values):
        if field in skip or field not in original.fields:
            continue
        where = '%s.%s' % (path, field)
        if not original.obj_attr_is_set(field):
            found.append('%s: %s was not set, yet the backport carries it'
                         % (label, where))
            continue
        before = getattr(original, field)
        after = getattr(loaded, field) if loaded.obj_attr_is_set(
            field) else '(unset)'
        if _is_object(before) and _is_object(after):
            found += kept(before, after, values[field], converted, where)
        elif isinstance(before, list) and isinstance(after, list) and \
                any(map(_is_object, before + after)):
            if len(before) != len(after):
                found.append('%s: %s: %d items became %d' % (
                    label, where, len(before), len(after)))
                continue
            for index, (b, a) in enumerate(zip(before, after)):
                found += kept(b, a, values[field][index], converted,
                              '%s[%d]' % (where, index))
        elif _plain(before) != _plain(after):
            found.append('%s: %s changed in the backport: %r became %r'
                         % (label, where, before, after))
    return found
