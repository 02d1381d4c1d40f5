"""hostreport's objects under resobj.testing.ObjectChecker, and resobj's pins.

After a deliberate change to an object (a new version, its history line
and backport), record the new version's shape and pin its fingerprint::

    GENERATE_SHAPES=1 GENERATE_HASHES=1 python -m unittest \
        hostreport.tests.test_objects

Existing shape records are never rewritten. The resobj objects hostreport
uses are pinned in data/resobj-fingerprints.json; ``resobj-manage objects
fingerprints --check`` says what changed when resobj is upgraded.
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

from resobj import testing

from hostreport import objects  # noqa: F401 - registers the objects
from hostreport.tests import samples

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
SHAPES = os.path.join(DATA, 'shapes')
FINGERPRINTS = os.path.join(DATA, 'fingerprints.json')
RESOBJ_PINS = os.path.join(DATA, 'resobj-fingerprints.json')


def checker():
    with open(FINGERPRINTS) as f:
        pinned = json.load(f)
    return testing.ObjectChecker(
        'hostreport', samples.SAMPLES, SHAPES, fingerprints=pinned,
        record_hint='GENERATE_SHAPES=1 python -m unittest '
                    'hostreport.tests.test_objects')


class TestObjects(unittest.TestCase):

    def setUp(self):
        super().setUp()
        self.checker = checker()
        if os.environ.get('GENERATE_SHAPES'):
            self.checker.record_missing_shapes()
        if os.environ.get('GENERATE_HASHES'):
            with open(FINGERPRINTS, 'w') as f:
                json.dump(self.checker.fingerprints(), f, indent=4,
                          sort_keys=True)
                f.write('\n')
            self.fail('GENERATE_HASHES is set: %s was rewritten; review '
                      'the diff and run again without it' % FINGERPRINTS)

    def assertNoProblems(self, problems):
        if problems:
            self.fail('\n'.join(problems))

    def test_fingerprints_are_pinned(self):
        self.assertNoProblems(self.checker.check_fingerprints())

    def test_every_version_has_a_history_line(self):
        self.assertNoProblems(self.checker.check_history())

    def test_children_versions_are_named(self):
        self.assertNoProblems(self.checker.check_relationships())

    def test_every_version_is_recorded(self):
        self.assertNoProblems(self.checker.check_shapes())

    def test_samples_set_every_field(self):
        self.assertNoProblems(self.checker.check_samples())

    def test_every_sample_backports_to_every_version(self):
        self.assertNoProblems(self.checker.check_backports())


def _resobj_manage():
    beside = os.path.join(os.path.dirname(sys.executable), 'resobj-manage')
    return beside if os.path.exists(beside) else shutil.which(
        'resobj-manage')


class TestResobjPins(unittest.TestCase):

    def test_the_resobj_objects_we_use_are_as_pinned(self):
        proc = subprocess.run(
            [_resobj_manage(), 'objects', 'fingerprints', '--check',
             RESOBJ_PINS], capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
