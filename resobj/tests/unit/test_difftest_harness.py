"""The differential harness's own unit tests, in the unit suite.

``tools/difftest`` lives outside the package (it drives placement from
another virtualenv), so stestr's discovery under ``resobj/tests`` does
not reach its tests; the ``load_tests`` protocol adds them here, under
their own ids (``tools.difftest.tests.*``). They are pure functions over
answers and seeded generators, and need no database.
"""

import os

import resobj

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(resobj.__file__)))
_TESTS = os.path.join(_ROOT, 'tools', 'difftest', 'tests')


def load_tests(loader, standard_tests, pattern):
    if not os.path.isdir(_TESTS):
        # An installed resobj (no checkout around it) has no harness:
        # nothing to add, and nothing to fail.
        return standard_tests
    standard_tests.addTests(
        loader.discover(_TESTS, pattern='test_*.py', top_level_dir=_ROOT))
    return standard_tests
