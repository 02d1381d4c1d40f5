"""Runs every YAML file in gabbits/ in-process, on each backend.

Each file gets its own fresh database (see fixtures.APIFixture). Test
ids end in ``(sqlite)``, ``(postgresql)`` or ``(mysql)`` like every other
functional test, so CI can tell that the server-backed ones ran.
"""

import os
import types

from gabbi import driver

from resobj.tests.api import fixtures

TESTS_DIR = os.path.join(os.path.dirname(__file__), 'gabbits')
BACKENDS = ('sqlite', 'postgresql', 'mysql')


def load_tests(loader, tests, pattern):
    for backend in BACKENDS:
        module = types.SimpleNamespace(APIFixture=fixtures.make_fixture(
            backend))
        suite = driver.build_tests(
            TESTS_DIR, loader, intercept=fixtures.setup_app,
            fixture_module=module,
            test_loader_name='%s.%s' % (__name__, backend))
        tests.addTest(suite)
    return tests
