"""A released version never changes: checked against the N-1 code itself.

The pinned fingerprints (unit/objects/test_objects.py) and the shape
records (resobj/tests/data/shapes) are files, and a change can rewrite
them together with the code: ``GENERATE_HASHES=1`` refreshes the pins
whatever changed. The N-1 release cannot be rewritten. Its own code
computes its fingerprints here (``old_side.py fingerprints``), and

* an object at the same version today must have the same fingerprint,
  whatever the pinned file says;
* every version the N-1 release sends has a shape record, and a record
  that holds a fingerprint holds the N-1 release's: a released
  version's record is never recorded again.
"""

import functools

from resobj.objects import base
from resobj.objects import fingerprint
from resobj.testing import records
from resobj.tests import base as test_base
from resobj.tests import object_checks
from resobj.tests.upgrade import n_minus_1


@functools.lru_cache(maxsize=None)
def _n_minus_1_fingerprints():
    return n_minus_1.run('fingerprints')


class TestVersionsAgainstNMinus1(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.baseline = n_minus_1.baseline_commit()[:12]
        n_minus_1.tree()
        self.old = _n_minus_1_fingerprints()

    def assertNoProblems(self, problems):
        if problems:
            self.fail('\n'.join(problems))

    def test_a_version_keeps_its_fingerprint(self):
        today = fingerprint.fingerprints()
        problems = []
        for name, old in sorted(self.old.items()):
            new = today.get(name)
            if new is None or new == old:
                continue
            old_version, new_version = (fingerprint.split(old)[0],
                                        fingerprint.split(new)[0])
            if old_version == new_version:
                problems.append(
                    '%s %s: the N-1 release (%s) has fingerprint %s, today\'s '
                    'code %s: a released version never changes; bump %s '
                    '(history line, backport)' % (
                        name, new_version, self.baseline, old, new, name))
            elif base.version_tuple(new_version) < \
                    base.version_tuple(old_version):
                problems.append('%s: the N-1 release (%s) has %s, today\'s '
                                'code only %s' % (name, self.baseline,
                                                  old_version, new_version))
        self.assertNoProblems(problems)

    def test_released_versions_keep_their_records(self):
        problems = []
        for name, old in sorted(self.old.items()):
            version = fingerprint.split(old)[0]
            path = records.path(object_checks.SHAPES, name, version)
            record = records.read(object_checks.SHAPES, name, version)
            if record is None:
                problems.append('%s %s: the N-1 release (%s) sends it, but '
                                'it has no shape record (%s)' % (
                                    name, version, self.baseline, path))
            elif record.fingerprint and record.fingerprint != old:
                problems.append(
                    '%s %s: the record %s holds fingerprint %s, the N-1 '
                    'release (%s) %s: a released version\'s record was '
                    'recorded again; restore it from version control' % (
                        name, version, path, record.fingerprint,
                        self.baseline, old))
        self.assertNoProblems(problems)
