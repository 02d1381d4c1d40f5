"""Golden primitives: what every version of every object looks like.

For each object and each version ``X.0 .. X.Y`` a committed file
``resobj/tests/data/primitives/<Object>/<X.Y>.json`` holds the primitive
of the object's populated sample (``resobj/tests/samples``) backported to
that version. The tests prove that

* every version of every object has its file, so a new version cannot be
  added without one;
* today's code, backporting today's sample, reproduces each file exactly,
  so a backport never changes silently;
* today's code loads every file, so primitives sent by old peers stay
  readable.

Create the file for a new version with::

    GENERATE_GOLDEN=1 tox -e py3 -- resobj.tests.unit.objects.test_golden

which writes missing files only: an existing file is never rewritten.
Changing one means deleting it on purpose, which review will see.
"""

import json
import os

from resobj.objects import base
from resobj.objects import fingerprint
from resobj.tests import base as test_base
from resobj.tests import samples

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'data', 'primitives')
CHANGES = base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.changes'


def all_versions(cls):
    major, minor = base.version_tuple(cls.VERSION)
    return ['%d.%d' % (major, m) for m in range(minor + 1)]


def backport(obj, version):
    """``obj`` as a peer whose tree has ``obj`` at ``version`` reads it."""
    manifest = base.obj_tree_get_versions(obj.obj_name())
    manifest[obj.obj_name()] = version
    return obj.obj_to_primitive(target_version=version,
                                version_manifest=manifest)


def _strip_changes(value):
    if isinstance(value, dict):
        return {k: _strip_changes(v) for k, v in value.items()
                if k != CHANGES}
    if isinstance(value, list):
        return [_strip_changes(v) for v in value]
    return value


def dumps(primitive):
    return json.dumps(_strip_changes(primitive), indent=2,
                      sort_keys=True) + '\n'


def golden_path(objname, version):
    return os.path.join(DATA, objname, '%s.json' % version)


class TestGoldenPrimitives(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.classes = {name: classes[0] for name, classes in
                        fingerprint.object_classes().items()}
        if os.environ.get('GENERATE_GOLDEN'):
            self._generate_missing()

    def _generate_missing(self):
        for name, cls in self.classes.items():
            if name not in samples.factories():
                continue
            for version in all_versions(cls):
                path = golden_path(name, version)
                if not os.path.exists(path):
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, 'w') as f:
                        f.write(dumps(backport(samples.make(name),
                                               version)))

    def test_every_object_has_a_sample(self):
        self.assertEqual([], sorted(set(self.classes)
                                    - set(samples.factories())))

    def test_every_version_has_a_golden_file(self):
        missing = [golden_path(name, version)
                   for name, cls in sorted(self.classes.items())
                   for version in all_versions(cls)
                   if not os.path.exists(golden_path(name, version))]
        self.assertEqual([], missing, 'run with GENERATE_GOLDEN=1 to create '
                         'them (see the module docstring)')

    def test_no_golden_file_for_unknown_versions(self):
        stray = []
        for name in sorted(os.listdir(DATA)):
            known = set(all_versions(self.classes[name])) \
                if name in self.classes else set()
            stray += [os.path.join(name, f) for f in
                      sorted(os.listdir(os.path.join(DATA, name)))
                      if f[:-len('.json')] not in known]
        self.assertEqual([], stray)

    def test_backports_reproduce_the_golden_files(self):
        for name, cls in sorted(self.classes.items()):
            for version in all_versions(cls):
                with open(golden_path(name, version)) as f:
                    expected = f.read()
                actual = dumps(backport(samples.make(name), version))
                self.assertEqual(expected, actual,
                                 '%s %s backport changed' % (name, version))

    def test_golden_files_load(self):
        for name, cls in sorted(self.classes.items()):
            for version in all_versions(cls):
                with open(golden_path(name, version)) as f:
                    primitive = json.load(f)
                loaded = base.ResobjObject.obj_from_primitive(primitive)
                self.assertEqual(name, loaded.obj_name())
                self.assertEqual(version, loaded.VERSION)
                # Nothing read was dropped or altered on the way in.
                self.assertEqual(dumps(primitive),
                                 dumps(loaded.obj_to_primitive()))
