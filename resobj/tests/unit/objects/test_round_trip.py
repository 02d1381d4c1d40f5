"""Random valid objects survive backports to every older version.

For each object, hypothesis builds populated objects of the newest
version, backports each to every older version of its major (through JSON,
as on the wire) and loads it again with today's code. Every field the
older version still carries must come back unchanged, except fields the
object declares as converted (held in another form by older versions;
their own tests check the conversion). A value an older version cannot
represent must raise ObjectBackportError, never be dropped silently.
"""

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from oslo_serialization import jsonutils

from resobj import exception
from resobj.objects import base
from resobj.objects import fingerprint
from resobj.tests import base as test_base
from resobj.tests import samples
from resobj.tests import strategies
from resobj.tests.unit.objects import test_golden

DATA = base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.data'


def _comparable(value):
    if isinstance(value, base.ResobjObject):
        return value.obj_to_primitive()
    return value


def _assert_kept(test, original, loaded, primitive, converted):
    for name in primitive[DATA]:
        if name in converted:
            continue
        before, after = getattr(original, name), getattr(loaded, name)
        if isinstance(before, base.ResobjObject):
            # A child went through its own backport: compare what its
            # older version still holds.
            child_data = primitive[DATA][name]
            _assert_kept(test, before, after, child_data,
                         samples.converted_fields(before.obj_name()))
        elif isinstance(before, list) and before and isinstance(
                before[0], base.ResobjObject):
            for b, a, p in zip(before, after, primitive[DATA][name]):
                _assert_kept(test, b, a, p,
                             samples.converted_fields(b.obj_name()))
        else:
            test.assertEqual(_comparable(before), _comparable(after),
                             '%s.%s lost in backport to %s' % (
                                 original.obj_name(), name,
                                 primitive[base.ResobjObject
                                           .OBJ_SERIAL_NAMESPACE
                                           + '.version']))


class TestRoundTrip(test_base.TestCase):

    @settings(max_examples=40, deadline=None, database=None)
    @given(st.data())
    def test_backports_lose_nothing(self, data):
        for name, classes in sorted(fingerprint.object_classes().items()):
            cls = classes[0]
            original = data.draw(strategies.for_object(name), label=name)
            converted = samples.converted_fields(name)
            for version in test_golden.all_versions(cls):
                try:
                    primitive = test_golden.backport(original, version)
                except exception.ObjectBackportError:
                    continue
                wire = jsonutils.loads(jsonutils.dumps(primitive))
                loaded = base.ResobjObject.obj_from_primitive(wire)
                self.assertEqual(version, loaded.VERSION)
                _assert_kept(self, original, loaded, wire, converted)
