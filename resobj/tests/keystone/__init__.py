"""resobj-api behind a real Keystone: ``tox -e keystone``.

These tests need Keystone's virtualenv (``tools/keystone_venv.py``),
named by ``RESOBJ_TEST_KEYSTONE_VENV``, which ``tox -e keystone`` sets.
Without it the package holds no tests, so that ``tox -e py3`` runs with
Python alone; with it a test never skips, and CI fails if one does
(``tools/check_test_results.py --keystone``).
"""

import os

VENV_VARIABLE = 'RESOBJ_TEST_KEYSTONE_VENV'


def load_tests(loader, tests, pattern):
    if os.environ.get(VENV_VARIABLE):
        tests.addTests(loader.discover(
            start_dir=os.path.dirname(__file__), pattern=pattern or 'test*.py',
            top_level_dir=os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.dirname(os.path.abspath(__file__)))))))
    return tests
