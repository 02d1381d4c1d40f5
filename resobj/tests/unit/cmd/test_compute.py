"""resobj-compute refuses a configuration that gives it no database."""

import io
import os

import fixtures

from resobj.cmd import compute
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures


class TestNoDatabaseAccess(base.TestCase):

    def test_neither_database_nor_conductor_is_one_error_line(self):
        home = self.useFixture(resobj_fixtures.CommandEnvironment()).path
        path = os.path.join(home, 'cmp1.conf')
        with open(path, 'w') as f:
            # The upgrade guide's compute host, without use_local = false.
            f.write('[DEFAULT]\nhost = cmp1\n'
                    'transport_url = rabbit://u:p@127.0.0.1:1/\n')
        err = io.StringIO()
        with fixtures.MonkeyPatch('sys.stderr', err):
            code = compute.main(['--config-file', path])
        self.assertEqual(1, code)
        lines = err.getvalue().splitlines()
        self.assertEqual(1, len(lines), lines)
        self.assertTrue(lines[0].startswith(
            'resobj-compute: error: no database access is configured: '
            'set [conductor] use_local = false'), lines[0])
        self.assertIn('[database] connection', lines[0])
        # No embedded database was created for it.
        self.assertFalse(os.path.exists(os.path.join(home, 'state')))
