"""The upgrade tests' own machinery (resobj/tests/upgrade), without N-1."""

import re
import unittest

import fixtures

from resobj.tests import backends
from resobj.tests import base
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import primitives


def _envelope(objname, version, **data):
    return {primitives.NAME: objname, primitives.VERSION: version,
            primitives.DATA: data}


class TestBaseline(base.TestCase):

    def test_names_one_full_commit(self):
        self.assertTrue(re.fullmatch('[0-9a-f]{40}',
                                     n_minus_1.baseline_commit()))

    def test_unknown_commit_skips_with_the_reason(self):
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.tests.upgrade.n_minus_1.baseline_commit',
            lambda: 'f' * 40))
        n_minus_1._materialise.cache_clear()
        self.addCleanup(n_minus_1._materialise.cache_clear)
        exc = self.assertRaises(unittest.SkipTest, n_minus_1.tree)
        reason = str(exc)
        self.assertTrue(reason.startswith(n_minus_1.SKIP_PREFIX), reason)
        self.assertIn('is not in this repository', reason)
        # Not a backend skip: CI's full run must fail on it.
        self.assertFalse(reason.startswith(backends.SKIP_PREFIX))


class TestDifferences(base.TestCase):

    def test_equal_and_one_sided_fields(self):
        old = _envelope('Flavor', '1.0', name='a', vcpus=2)
        new = _envelope('Flavor', '1.1', name='a', vcpus=2, description='x')
        self.assertEqual([], primitives.differences(old, new))

    def test_a_changed_field_is_named(self):
        old = _envelope('Flavor', '1.0', name='a', vcpus=2)
        new = _envelope('Flavor', '1.0', name='a', vcpus=3)
        self.assertEqual(['Flavor.vcpus: 2 became 3'],
                         primitives.differences(old, new))

    def test_children_are_compared(self):
        child = _envelope('Flavor', '1.0', name='a', vcpus=2)
        changed = _envelope('Flavor', '1.0', name='b', vcpus=2)
        old = _envelope('Instance', '1.0', flavor=child, uuid='u')
        new = _envelope('Instance', '1.0', flavor=changed, uuid='u')
        self.assertEqual(["Instance.flavor.name: 'a' became 'b'"],
                         primitives.differences(old, new))

    def test_versions_in(self):
        child = _envelope('Flavor', '1.0', name='a')
        parent = _envelope('InstanceList', '1.2', objects=[
            _envelope('Instance', '1.1', flavor=child)])
        self.assertEqual([('InstanceList', '1.2'), ('Instance', '1.1'),
                          ('Flavor', '1.0')],
                         primitives.versions_in(parent))
