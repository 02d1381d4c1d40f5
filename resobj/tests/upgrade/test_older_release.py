"""resobj.testing.OlderRelease: the N-1 release, as a downstream runs it.

The fixture a downstream project uses (examples/downstream) pointed at
this repository's N-1 commit, and at a wheel of it: the older side is
really the older code, a round trip of today's samples comes back whole,
and one carrying a field the older version lacks names it.
"""

import os
import zipfile

import fixtures
import testtools

import resobj
from resobj import objects
from resobj.testing import release as release_mod
from resobj.tests import base as test_base
from resobj.tests import samples
from resobj.tests.upgrade import n_minus_1

# Objects whose versions differ between today's code and the N-1
# release's, and some that do not.
SENT = ('Instance', 'InstanceList', 'ComputeNode', 'Service', 'Flavor',
        'UsageList', 'PciDeviceList')


class TestOlderRelease(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = n_minus_1.tree()
        self.repo = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.abspath(__file__)))))
        objects.register_all()

    def from_commit(self):
        return self.useFixture(release_mod.OlderRelease(
            commit=n_minus_1.baseline_commit(), repo=self.repo))

    def test_a_commit_round_trip(self):
        release = self.from_commit()
        self.assertEqual(n_minus_1.manifest(), release.manifest)
        self.assertNotEqual(objects.Instance.VERSION,
                            release.manifest['Instance'])
        self.assertEqual([], release.round_trip(
            [samples.make(name) for name in SENT],
            converted=samples.conversions()))

    def test_a_forgotten_backport_is_named(self):
        release = self.from_commit()
        added = dict(objects.Instance.ADDED_IN)
        del added['pci_requests']
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.objects.instance.Instance.ADDED_IN', added))
        problems = release.round_trip([samples.make('Instance')])
        name = n_minus_1.baseline_commit()[:12]
        self.assertEqual([
            'resobj %s does not know Instance %s (Instance): pci_requests'
            % (name, release.manifest['Instance']),
            # Nor the object it holds.
            'resobj %s does not know InstancePCIRequest 1.0 '
            '(Instance.pci_requests[0]): no such object or version' % name,
        ], problems)

    def test_a_wheel(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        wheel = os.path.join(tmp, 'resobj-0.0.0-py3-none-any.whl')
        with zipfile.ZipFile(wheel, 'w') as archive:
            for top, _, files in os.walk(os.path.join(self.tree, 'resobj')):
                for name in files:
                    path = os.path.join(top, name)
                    archive.write(path, os.path.relpath(path, self.tree))
        release = self.useFixture(release_mod.OlderRelease(wheel=wheel))
        self.assertEqual(n_minus_1.manifest(), release.manifest)
        self.assertEqual([], release.round_trip([samples.make('Service')]))

    def test_a_release_without_resobj_is_refused(self):
        # The older side would import today's resobj (installed here):
        # every round trip would compare today's code with itself.
        tmp = self.useFixture(fixtures.TempDir()).path
        wheel = os.path.join(tmp, 'empty-0.0.0-py3-none-any.whl')
        with zipfile.ZipFile(wheel, 'w') as archive:
            archive.writestr('empty/__init__.py', '')
        fixture = release_mod.OlderRelease(wheel=wheel)
        # fixtures reports a failed set-up with the exception it raised.
        failure = self.assertRaises(testtools.MultipleExceptions,
                                    fixture.setUp)
        raised = [info[1] for info in failure.args]
        self.assertIsInstance(raised[0], release_mod.ReleaseUnavailable)
        self.assertIn('the older side imported resobj from %s'
                      % os.path.dirname(os.path.dirname(
                          os.path.abspath(resobj.__file__))), str(raised[0]))

    def test_arguments(self):
        self.assertRaises(ValueError, release_mod.OlderRelease)
        self.assertRaises(ValueError, release_mod.OlderRelease,
                          wheel='a.whl', commit='abc', repo='.')
        self.assertRaises(ValueError, release_mod.OlderRelease, commit='abc')
        self.assertRaises(release_mod.ReleaseUnavailable,
                          release_mod.export_commit, self.repo, 'f' * 40,
                          self.useFixture(fixtures.TempDir()).path)
