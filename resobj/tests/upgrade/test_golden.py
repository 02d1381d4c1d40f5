"""The golden primitive files agree with what the N-1 code itself writes.

resobj/tests/unit/objects/test_golden checks the files against today's
code only: a file rewritten together with a changed backport would pass
there. Here the N-1 process writes, with the baseline commit's own
samples and golden helpers, every version of every object it knows, and
each must match today's file for that version byte for byte: a version
the previous release sent must still look the same, and its file must
still exist.
"""

import os

from resobj.tests import base as test_base
from resobj.tests.unit.objects import test_golden
from resobj.tests.upgrade import n_minus_1


class TestGoldenFilesAgainstNMinus1(test_base.TestCase):

    def setUp(self):
        super().setUp()
        n_minus_1.tree()

    def test_n_minus_1_writes_the_committed_files(self):
        written = n_minus_1.run('golden')
        self.assertEqual(sorted(n_minus_1.manifest()), sorted(written))
        missing, changed = [], []
        for name, versions in sorted(written.items()):
            for version, text in sorted(versions.items()):
                path = test_golden.golden_path(name, version)
                if not os.path.exists(path):
                    missing.append(path)
                    continue
                with open(path) as f:
                    if f.read() != text:
                        changed.append('%s %s' % (name, version))
        self.assertEqual([], missing, 'versions the N-1 code sends have '
                         'no golden file')
        self.assertEqual([], changed, 'the N-1 code writes these versions '
                         'differently from their golden files')
