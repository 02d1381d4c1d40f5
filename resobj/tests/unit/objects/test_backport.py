"""Every sample backports right to every version, with or without manifest.

The populated samples (resobj.tests.samples, variants included) go to
every version of their object through resobj.testing.ObjectChecker:

* each backport holds exactly the fields of its version's recorded
  shape, its children at the versions recorded (a forgotten or wrong
  ``obj_make_compatible`` rule fails here, naming object and version);
* ``obj_to_primitive(target_version=...)`` without a version manifest
  works and gives what the manifest path gives, which test_golden
  compares with the golden files; and from every version, loaded, to
  every older one (every pair);
* loaded by today's code, every field kept holds the sample's value,
  and every converted field converts back (its key is equal).
"""

from resobj.tests import base
from resobj.tests import object_checks
from resobj.tests import samples
from resobj.tests.unit.objects import test_golden


class TestBackports(base.TestCase):

    def setUp(self):
        super().setUp()
        self.checker = object_checks.checker()

    def assertNoProblems(self, problems):
        if problems:
            self.fail('\n'.join(problems))

    def test_samples_set_every_field(self):
        self.assertNoProblems(self.checker.check_samples())

    def test_every_sample_backports_to_every_version(self):
        self.assertNoProblems(self.checker.check_backports())

    def test_the_plain_call_writes_the_golden_files(self):
        # oslo.versionedobjects' own call, no version manifest: children
        # go at the versions each parent version carried.
        problems = []
        for name, cls in sorted(self.checker.classes().items()):
            for version in test_golden.all_versions(cls):
                try:
                    primitive = samples.make(name).obj_to_primitive(
                        target_version=version)
                except Exception as exc:
                    problems.append('%s %s: %s: %s' % (
                        name, version, type(exc).__name__, exc))
                    continue
                with open(test_golden.golden_path(name, version)) as f:
                    if f.read() != test_golden.dumps(primitive):
                        problems.append('%s %s: the plain call differs from '
                                        'the golden file' % (name, version))
        self.assertNoProblems(problems)
