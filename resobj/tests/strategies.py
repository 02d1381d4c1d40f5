"""Hypothesis strategies for resobj objects, derived from their fields.

A field's strategy follows its type; a sample module can override one
field with ``samples.strategy`` where the type alone admits values the
object would refuse.
"""

import datetime

from hypothesis import strategies as st
from oslo_versionedobjects import fields as ovo_fields

from resobj.objects import base
from resobj.objects import fields
from resobj.tests import samples

_TEXT = st.text(max_size=12)
# ovo's DateTime primitive has whole seconds.
_DATETIMES = st.datetimes(
    min_value=datetime.datetime(2000, 1, 1),
    max_value=datetime.datetime(2100, 1, 1),
    timezones=st.just(datetime.timezone.utc)).map(
        lambda d: d.replace(microsecond=0))


_HEX = st.integers(min_value=0, max_value=255)


def _mac(octets):
    return ':'.join('%02x' % o for o in octets)


def _pci(parts):
    domain, bus, slot, function = parts
    return '%04x:%02x:%02x.%x' % (domain, bus, slot, function)


def _for_type(field_type, depth):
    if isinstance(field_type, ovo_fields.Enum):
        return st.sampled_from(sorted(field_type._valid_values))
    if isinstance(field_type, (fields.UUID, ovo_fields.UUID)):
        return st.uuids().map(str)
    if isinstance(field_type, ovo_fields.MACAddress):
        return st.lists(_HEX, min_size=6, max_size=6).map(_mac)
    if isinstance(field_type, ovo_fields.PCIAddress):
        return st.tuples(st.integers(0, 0xffff), _HEX,
                         st.integers(0, 0x1f), st.integers(0, 7)).map(_pci)
    if isinstance(field_type, ovo_fields.NonNegativeInteger):
        return st.integers(min_value=0, max_value=2 ** 31 - 1)
    if isinstance(field_type, ovo_fields.Integer):
        return st.integers(min_value=-2 ** 31, max_value=2 ** 31 - 1)
    if isinstance(field_type, ovo_fields.NonNegativeFloat):
        return st.floats(min_value=0, max_value=1e6, allow_nan=False)
    if isinstance(field_type, ovo_fields.Float):
        return st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
    if isinstance(field_type, (ovo_fields.Boolean,
                               ovo_fields.FlexibleBoolean)):
        return st.booleans()
    if isinstance(field_type, ovo_fields.DateTime):
        return _DATETIMES
    if isinstance(field_type, ovo_fields.IPV6Address):
        return st.ip_addresses(v=6).map(str)
    if isinstance(field_type, ovo_fields.IPAddress):
        return st.ip_addresses(v=4).map(str)
    if isinstance(field_type, ovo_fields.IPV6Network):
        return st.ip_addresses(v=6).map(lambda a: '%s/128' % a)
    if isinstance(field_type, ovo_fields.IPNetwork):
        return st.ip_addresses(v=4).map(lambda a: '%s/32' % a)
    if isinstance(field_type, ovo_fields.VersionPredicate):
        return st.tuples(st.sampled_from(['>=', '<', '==']),
                         st.integers(0, 9), st.integers(0, 9)).map(
            lambda t: '%s%d.%d' % t)
    if isinstance(field_type, ovo_fields.Object):
        return for_object(field_type._obj_name, depth + 1)
    if isinstance(field_type, ovo_fields.Dict):
        return st.dictionaries(_TEXT, _for_field(
            field_type._element_type, depth), max_size=3)
    if isinstance(field_type, (ovo_fields.List, ovo_fields.Set)):
        element = _for_field(field_type._element_type, depth)
        collection = st.lists(element, max_size=3)
        if isinstance(field_type, ovo_fields.Set):
            collection = collection.map(set)
        return collection
    if isinstance(field_type, ovo_fields.String):
        return _TEXT
    raise NotImplementedError('no strategy for %r' % field_type)


def _for_field(field, depth):
    strategy = _for_type(field._type, depth)
    if field.nullable:
        strategy = st.one_of(st.none(), strategy)
    return strategy


def for_object(objname, depth=0):
    """Objects of the newest ``objname`` with every field set."""
    cls = base.ResobjObjectRegistry.obj_classes()[objname][0]
    if depth > 3:
        return st.builds(cls)
    kwargs = {}
    for name, field in cls.fields.items():
        override = samples.field_strategy(objname, name)
        kwargs[name] = override if override is not None else _for_field(
            field, depth)
    return st.fixed_dictionaries(kwargs).map(lambda kw: cls(**kw))
