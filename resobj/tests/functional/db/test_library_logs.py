"""The libraries' lines about a lost database connection, said once.

The server ends the service's connection at the worst moments, for
real: inside a transaction that then fails (oslo.db's rollback fails
too, and oslo.utils logs the exception it drops), and while a
connection is checked out (SQLAlchemy's pool cannot reset it when it
comes back). Neither may log an ERROR or a traceback
(resobj/db/library_logs.py); the pool's event is one warning. Fails if
the libraries stop logging them as library_logs recognises.
"""

import logging
import time

import fixtures
import sqlalchemy as sa
import testscenarios

from resobj import context
from resobj.db.api import utils
from resobj.db import facade
from resobj import exception
from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import backends
from resobj.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

_BACKEND_PID = {'postgresql': 'SELECT pg_backend_pid()',
                'mysql': 'SELECT CONNECTION_ID()'}


class _Failed(Exception):
    pass


class TestLibraryLogs(base.TestCase):
    scenarios = [('postgresql', {'backend': 'postgresql'}),
                 ('mysql', {'backend': 'mysql'})]

    def setUp(self):
        backends.provisioning_backend(self.backend)
        super().setUp()
        url = self.useFixture(api_fixtures.AppFixture(self.backend)).url
        self.admin = sa.create_engine(url, poolclass=sa.pool.NullPool,
                                      isolation_level='AUTOCOMMIT')
        self.addCleanup(self.admin.dispose)

    def _capture(self, level):
        return self.useFixture(fixtures.FakeLogger(
            name='', level=level,
            format='%(levelname)s|%(name)s|%(message)s'))

    def _end(self, pid):
        """The server ends connection ``pid``; returns once it is gone."""
        with self.admin.connect() as conn:
            if self.backend == 'postgresql':
                conn.execute(sa.text('SELECT pg_terminate_backend(:pid)'),
                             {'pid': pid})
                alive = ('SELECT count(*) FROM pg_stat_activity '
                         'WHERE pid = :pid')
            else:
                conn.execute(sa.text('KILL %d' % pid))
                alive = ('SELECT count(*) FROM information_schema.processlist '
                         'WHERE id = :pid')
            deadline = time.monotonic() + 30
            while conn.execute(sa.text(alive), {'pid': pid}).scalar():
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)

    def _fail_after_losing_the_connection(self):
        @facade.writer
        def write(ctx):
            self._end(utils.execute(
                ctx, sa.text(_BACKEND_PID[self.backend])).scalar())
            # Any failure: oslo.db rolls back, on a connection gone.
            raise _Failed()

        self.assertRaises(exception.DatabaseUnavailable, write,
                          context.get_admin_context())

    def test_a_failed_rollback_drops_the_first_error_quietly(self):
        log = self._capture(logging.INFO)
        self._fail_after_losing_the_connection()
        self.assertEqual('', log.output)

    def test_the_dropped_error_is_still_there_for_debugging(self):
        # The line the service no longer shows at INFO happened, demoted.
        log = self._capture(logging.DEBUG)
        self._fail_after_losing_the_connection()
        dropped = [line for line in log.output.splitlines()
                   if 'Original exception being dropped' in line]
        self.assertEqual(1, len(dropped), log.output)
        self.assertTrue(dropped[0].startswith('DEBUG|oslo_utils.excutils|'))
        self.assertIn('_Failed', dropped[0])
        self.assertNotIn('ERROR|', log.output)

    def test_a_connection_lost_in_the_pool_is_one_warning(self):
        log = self._capture(logging.INFO)
        raw = facade.get_engine().raw_connection()
        cursor = raw.cursor()
        cursor.execute(_BACKEND_PID[self.backend])
        pid = cursor.fetchone()[0]
        cursor.close()
        self._end(pid)
        # Back to the pool, which rolls it back first.
        raw.close()
        lines = log.output.splitlines()
        self.assertEqual(1, len(lines), lines)
        self.assertTrue(lines[0].startswith('WARNING|sqlalchemy.pool'),
                        lines[0])
        self.assertIn('failed as it was returned to the pool', lines[0])
        self.assertIn('it was discarded', lines[0])
        # The next transaction has a connection.
        self.assertEqual(1, _one(context.get_admin_context()))


@facade.reader
def _one(ctx):
    return utils.execute(ctx, sa.text('SELECT 1')).scalar()
