"""Random valid objects survive backports between every pair of versions.

For each object, hypothesis builds populated objects of the newest
version, backports each to every version of its major (through JSON, as
on the wire) and loads it again with today's code; then backports that
loaded object, as a peer at that version holds it, to every older version
and loads it again. Every field the older version still carries must come
back unchanged, except fields the object declares as converted (held in
another form by older versions; their own tests check the conversion),
which must convert back: their key (resobj.testing.compare.Conversion)
is equal. The backport from an intermediate version must give the same
primitive as the one straight from the newest. A value an older version
cannot represent must raise ObjectBackportError, never be dropped
silently.

Every field type of oslo.versionedobjects has a strategy (checked
below), so a new field of any type is covered as soon as it exists.
"""

import inspect

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from oslo_serialization import jsonutils
from oslo_versionedobjects import fields as ovo_fields

from resobj import exception
from resobj.objects import base
from resobj.objects import fingerprint
from resobj.testing import compare
from resobj.tests import base as test_base
from resobj.tests import samples
from resobj.tests import strategies
from resobj.tests.unit.objects import test_golden


def _assert_kept(test, original, loaded, primitive):
    problems = compare.kept(original, loaded, primitive,
                            samples.conversions())
    if problems:
        test.fail('\n'.join(problems))


def _wire(primitive):
    return jsonutils.loads(jsonutils.dumps(primitive))


def _load(wire):
    return base.ResobjObject.obj_from_primitive(wire)


class TestRoundTrip(test_base.TestCase):

    @settings(max_examples=25, deadline=None, database=None)
    @given(st.data())
    def test_backports_between_every_pair_lose_nothing(self, data):
        for name, classes in sorted(fingerprint.object_classes().items()):
            cls = classes[0]
            original = data.draw(strategies.for_object(name), label=name)
            versions = test_golden.all_versions(cls)
            direct = {}
            for version in versions:
                try:
                    direct[version] = _wire(test_golden.backport(
                        original, version))
                except exception.ObjectBackportError:
                    continue
            for newer in versions:
                if newer not in direct:
                    continue
                held = _load(direct[newer])
                self.assertEqual(newer, held.VERSION)
                _assert_kept(self, original, held, direct[newer])
                for older in versions[:versions.index(newer)]:
                    try:
                        wire = _wire(test_golden.backport(held, older))
                    except exception.ObjectBackportError:
                        continue
                    loaded = _load(wire)
                    self.assertEqual(older, loaded.VERSION)
                    _assert_kept(self, held, loaded, wire)
                    if older in direct:
                        self.assertEqual(
                            test_golden.dumps(direct[older]),
                            test_golden.dumps(wire),
                            '%s %s -> %s differs from %s -> %s' % (
                                name, newer, older, cls.VERSION, older))


class TestStrategies(test_base.TestCase):

    def test_every_ovo_field_type_has_a_strategy(self):
        missing, made = [], {}
        for name, field_cls in sorted(vars(ovo_fields).items()):
            if not (inspect.isclass(field_cls) and
                    issubclass(field_cls, ovo_fields.AutoTypedField) and
                    getattr(field_cls, 'AUTO_TYPE', None) is not None):
                continue
            try:
                field = field_cls()
            except TypeError:
                # Needs arguments (an enum's values, an object's name):
                # their types are covered through the objects using them.
                continue
            try:
                made[name] = (field, strategies._for_field(field, 0))
            except NotImplementedError:
                missing.append(name)
        self.assertEqual([], missing)

        # And what they draw is valid for the field.
        @settings(max_examples=10, deadline=None, database=None)
        @given(st.data())
        def coerce_each(data):
            for name, (field, strategy) in sorted(made.items()):
                field.coerce(None, name, data.draw(strategy, label=name))

        coerce_each()
