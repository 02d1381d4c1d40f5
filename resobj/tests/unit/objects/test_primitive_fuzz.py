"""Fuzzed primitives: only resobj exceptions come out, valid ones load.

hypothesis starts from the golden primitive of every version of every
object (``resobj/tests/data/primitives``), or a random valid object of
the newest version, and breaks one to three places in it, in the object
itself or in any object nested in it: an envelope key deleted or given a
value of the wrong type, a version that is no version, another object's
name, a field given a value of another type, a field or all the data
replaced by None, a value nested thousands deep. Loading the result, as
a stored blob (``obj_from_primitive`` on ResobjObject and on the object's
own class) or as an RPC argument (the serializer), may succeed or raise a
resobj exception, never anything else; a MalformedPrimitive names the
object and the field.
"""

import json

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from oslo_serialization import jsonutils

from resobj import exception
from resobj.objects import base
from resobj.objects import fingerprint
from resobj.tests import base as test_base
from resobj.tests import strategies
from resobj.tests.unit.objects import test_golden

PREFIX = base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.'
NAME, DATA = PREFIX + 'name', PREFIX + 'data'
ENVELOPE = [PREFIX + part for part in
            ('name', 'namespace', 'version', 'data', 'changes')]

CLASSES = {name: classes[0] for name, classes in
           sorted(fingerprint.object_classes().items())}


def _golden_files():
    files = []
    for name, cls in CLASSES.items():
        for version in test_golden.all_versions(cls):
            path = test_golden.golden_path(name, version)
            with open(path) as f:
                files.append((name, json.load(f)))
    return files


GOLDEN = _golden_files()


def _deep(depth):
    value = 'x'
    for level in range(depth):
        value = [value] if level % 2 else {'k': value}
    return value


# JSON values of every type, and a few that only Python callers send.
_SCALARS = (st.none() | st.booleans() | st.integers() |
            st.floats(allow_nan=True) | st.text(max_size=8) |
            st.sampled_from(['', '1.0', 'resobj', 'VCPU', '2026-11-21',
                             'a4f3b9e2-5c1d-4e8f-9b7a-6d2c1e0f3a5b']))
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=3) |
    st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6) | st.sampled_from([_deep(3000), _deep(40)])
_VERSIONS = st.sampled_from(
    ['1', '1.', '.1', '1.0\n', '1.0.0.0', '\uff11.0', '0.0', '1.99', '2.0',
     '1.0.3', '-1.0', '1e3']) | st.text(max_size=6)
_OTHER_PRIMITIVES = st.sampled_from([prim for _, prim in GOLDEN])


def _objects_in(primitive):
    """Every object primitive in ``primitive`` (itself included)."""
    found, todo = [], [primitive]
    while todo:
        item = todo.pop()
        if not isinstance(item, dict):
            continue
        found.append(item)
        data = item.get(DATA)
        for value in (data.values() if isinstance(data, dict) else ()):
            children = value if isinstance(value, list) else [value]
            todo.extend(c for c in children
                        if isinstance(c, dict) and NAME in c)
    return found


def _mutate(data, target):
    """Break ``target`` (an object primitive, changed in place)."""
    kind = data.draw(st.sampled_from(
        ['drop key', 'key value', 'version', 'name', 'field value',
         'field primitive', 'drop field', 'data']), label='mutation')
    fields = sorted(target.get(DATA) or {}) \
        if isinstance(target.get(DATA), dict) else []
    if kind == 'drop key':
        target.pop(data.draw(st.sampled_from(ENVELOPE)), None)
    elif kind == 'key value':
        target[data.draw(st.sampled_from(ENVELOPE))] = data.draw(_VALUES)
    elif kind == 'version':
        target[PREFIX + 'version'] = data.draw(_VERSIONS)
    elif kind == 'name':
        target[NAME] = data.draw(st.sampled_from(sorted(CLASSES)) |
                                 st.text(max_size=8))
    elif kind == 'data':
        target[DATA] = data.draw(st.none() | _VALUES)
    elif fields:
        field = data.draw(st.sampled_from(fields), label='field')
        if kind == 'drop field':
            del target[DATA][field]
        elif kind == 'field primitive':
            target[DATA][field] = json.loads(json.dumps(
                data.draw(_OTHER_PRIMITIVES)))
        else:
            target[DATA][field] = data.draw(_VALUES, label='value')


def _check_error(test, exc):
    test.assertIsInstance(exc, exception.ResobjException)
    if isinstance(exc, exception.MalformedPrimitive):
        test.assertTrue(exc.kwargs['objname'])
        test.assertTrue(exc.kwargs['field'])


def _load_every_way(test, objname, primitive):
    """Load ``primitive`` the three ways; return what loaded, if any."""
    loaded = []
    serializer = base.ResobjObjectSerializer()
    loaders = (
        base.ResobjObject.obj_from_primitive,
        CLASSES[objname].obj_from_primitive,
        lambda p: serializer.deserialize_entity(None, [p])[0])
    for load in loaders:
        try:
            loaded.append(load(primitive))
        except exception.ResobjException as exc:
            # Anything else fails the test with its own traceback.
            _check_error(test, exc)
    return loaded


class TestPrimitiveFuzz(test_base.TestCase):

    @settings(max_examples=600, deadline=None, database=None)
    @given(st.data())
    def test_malformed_primitives_raise_resobj_errors(self, data):
        objname, golden = data.draw(st.sampled_from(GOLDEN), label='golden')
        primitive = json.loads(json.dumps(golden))
        for _ in range(data.draw(st.integers(1, 3), label='mutations')):
            targets = _objects_in(primitive)
            _mutate(data, data.draw(st.sampled_from(targets), label='at'))
        if data.draw(st.booleans(), label='wrapped in a list'):
            list_name = objname + 'List' if objname + 'List' in CLASSES \
                else 'ServiceList'
            primitive = {NAME: list_name, PREFIX + 'namespace':
                         'resobj', PREFIX + 'version': '1.0',
                         DATA: {'objects': [primitive]}}
        for obj in _load_every_way(self, objname, primitive):
            if isinstance(obj, base.ResobjObject):
                self.assertIn(obj.obj_name(), CLASSES)

    @settings(max_examples=100, deadline=None, database=None)
    @given(st.data())
    def test_not_a_primitive(self, data):
        value = data.draw(_VALUES)
        for objname in ('Service', 'AllocationList'):
            self.assertEqual([], [
                obj for obj in _load_every_way(self, objname, value)
                if isinstance(obj, base.ResobjObject)])

    @settings(max_examples=10, deadline=None, database=None)
    @given(st.data())
    def test_valid_primitives_load_every_way(self, data):
        for objname, cls in CLASSES.items():
            original = data.draw(strategies.for_object(objname),
                                 label=objname)
            wire = jsonutils.loads(jsonutils.dumps(
                original.obj_to_primitive()))
            loaded = _load_every_way(self, objname, wire)
            self.assertEqual(3, len(loaded), objname)
            for obj in loaded:
                self.assertIsInstance(obj, cls)
                self.assertEqual(test_golden.dumps(wire),
                                 test_golden.dumps(obj.obj_to_primitive()))


class TestGoldenLoadEveryWay(test_base.TestCase):

    def test_golden_files_load(self):
        # The fuzz starts from these: every object has one.
        self.assertEqual(sorted(CLASSES), sorted({n for n, _ in GOLDEN}))
        for objname, golden in GOLDEN:
            loaded = _load_every_way(self, objname, golden)
            self.assertEqual(3, len(loaded), objname)
            for obj in loaded:
                self.assertEqual(objname, obj.obj_name())
