"""Bounded waits by default, and every database outage translated to 503.

No database: the effective engine settings that the options produce, and
what translate_errors makes of the errors the drivers and SQLAlchemy
raise when a server goes away, stalls or aborts a transaction.
"""

import os
import socket
import time

import fixtures
from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.api import errors
from resobj.cmd import manage
from resobj import context as resobj_context
from resobj.db.backends import mysql
from resobj.db.backends import postgresql
from resobj.db import connection_url
from resobj.db import facade
from resobj.db import intent
from resobj.db import outage
from resobj import exception
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures


class TestDefaultBounds(base.TestCase):
    """With no option set, no wait on a server is unbounded."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(resobj_fixtures.ConfFixture())

    def url(self, connection):
        self.conf.config(connection=connection, group='database')
        return connection_url.database_url(self.conf.conf)

    def test_defaults(self):
        database = self.conf.conf.database
        self.assertEqual((5, 30, 10), (database.connect_timeout,
                                       database.statement_timeout,
                                       database.pool_timeout))
        # A stalled server is given up after 35 s at most.
        self.assertEqual(35, outage.stall_seconds(self.conf.conf))

    def test_postgresql_connect_timeout(self):
        for driver in ('psycopg', 'psycopg2'):
            url = self.url('postgresql+%s://u:p@db/resobj' % driver)
            self.assertEqual('5', url.query['connect_timeout'])

    def test_pymysql_connect_read_and_write_timeouts(self):
        url = self.url('mysql+pymysql://u:p@db/resobj')
        self.assertEqual(
            {'connect_timeout': '5', 'read_timeout': '35',
             'write_timeout': '35', 'charset': 'utf8mb4'}, dict(url.query))
        # The dialect hands them to PyMySQL as numbers.
        _, kwargs = url.get_dialect()().create_connect_args(url)
        self.assertEqual((5, 35, 35), (kwargs['connect_timeout'],
                                       kwargs['read_timeout'],
                                       kwargs['write_timeout']))

    def test_no_statement_timeout_no_read_timeout(self):
        self.conf.config(statement_timeout=0, group='database')
        self.assertIsNone(outage.stall_seconds(self.conf.conf))
        url = self.url('mysql+pymysql://u:p@db/resobj')
        self.assertNotIn('read_timeout', url.query)
        self.assertEqual('5', url.query['connect_timeout'])

    def test_manage_does_not_time_statements_out(self):
        # resobj-manage's migrations may run long: its default is 0.
        captured = {}

        def capture(conf):
            captured['timeout'] = conf.database.statement_timeout

        self.useFixture(resobj_fixtures.CommandEnvironment())
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.cmd.manage.db_version', capture))
        self.assertEqual(0, manage.main(['db', 'version']))
        self.assertEqual(0, captured['timeout'])


def _dbapi_error(orig, statement='SELECT 1'):
    return sa.exc.OperationalError(statement, {}, orig)


class _Orig(Exception):
    """A driver error with PostgreSQL's SQLSTATE or MySQL's number."""

    def __init__(self, *args, sqlstate=None):
        super().__init__(*args)
        self.sqlstate = sqlstate


class TestTranslation(base.TestCase):

    def translate(self, error):
        try:
            with facade.translate_errors():
                raise error
        except Exception as exc:  # noqa: B902 - whatever it became
            return exc
        self.fail('nothing raised')

    def assert_503(self, error, cause_contains=None):
        exc = self.translate(error)
        self.assertIsInstance(exc, exception.DatabaseUnavailable)
        http = errors.from_exception(exc)
        self.assertEqual((503, errors.DATABASE_UNAVAILABLE),
                         (http.status, http.code))
        self.assertNotIn('db.example', http.detail)
        if cause_contains:
            self.assertIn(cause_contains, exc.kwargs['cause'])
        return exc

    def test_lost_connection_names_no_host_but_keeps_the_cause(self):
        orig = _Orig('server at "db.example", port 5432 closed the '
                     'connection unexpectedly')
        self.assert_503(db_exc.DBConnectionError(_dbapi_error(orig)),
                        cause_contains='db.example')

    def test_pending_rollback_after_a_lost_connection(self):
        self.assert_503(sa.exc.PendingRollbackError(
            "Can't reconnect until invalid transaction is rolled back."))

    def test_invalidated_connection_under_any_dbapi_error(self):
        error = sa.exc.InterfaceError('SELECT 1', {}, _Orig('closed'),
                                      connection_invalidated=True)
        self.assert_503(db_exc.DBError(error))

    def test_refused_connection_without_statement(self):
        self.assert_503(sa.exc.OperationalError(
            None, None, _Orig('connection to server at "db.example" '
                              'failed: Connection refused')))

    def test_pool_timeout(self):
        self.assert_503(sa.exc.TimeoutError(
            'QueuePool limit of size 5 overflow 10 reached'))

    def test_missing_database(self):
        exc = self.assert_503(db_exc.DBNonExistentDatabase(
            'resobj', _dbapi_error(_Orig('database "resobj" does not '
                                         'exist'))))
        self.assertEqual('the database does not exist',
                         exc.kwargs['reason'])

    def test_statement_timeouts(self):
        self.assert_503(db_exc.DBError(_dbapi_error(_Orig(
            'canceling statement due to statement timeout',
            sqlstate='57014'))))
        self.assert_503(db_exc.DBError(_dbapi_error(_Orig(
            1969, 'Query execution was interrupted (max_statement_time '
            'exceeded)'))))

    def test_deadlock_and_serialization_failure(self):
        for error in (db_exc.DBDeadlock(_dbapi_error(_Orig(
                1213, 'Deadlock found when trying to get lock'))),
                db_exc.DBError(_dbapi_error(_Orig(
                    'could not serialize access', sqlstate='40001')))):
            exc = self.translate(error)
            self.assertIsInstance(exc, exception.DatabaseDeadlock)
            http = errors.from_exception(exc)
            self.assertEqual((409, errors.CONCURRENT_UPDATE),
                             (http.status, http.code))

    def test_other_errors_pass_through(self):
        error = db_exc.DBDuplicateEntry(['name'])
        self.assertIs(error, self.translate(error))
        failed = _dbapi_error(_Orig('syntax error'))
        self.assertIs(failed, self.translate(failed))


class TestExplainUnavailable(base.TestCase):

    def test_one_line_without_password(self):
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(connection='postgresql+psycopg://u:secret@db.example/r',
                    group='database')
        exc = exception.DatabaseUnavailable(
            reason='cannot connect to the database',
            cause='connection to server at "db.example" failed: refused')
        line = connection_url.explain_unavailable(conf.conf, exc)
        self.assertNotIn('secret', line)
        self.assertNotIn('\n', line)
        self.assertIn('[database] connection', line)
        self.assertIn('postgresql+psycopg://u:***@db.example/r', line)
        self.assertIn('refused', line)


class _FakeConnection:
    """A driver connection whose socket is one end of a socket pair."""

    closed = False

    def __init__(self, sock):
        self._sock = sock

    def fileno(self):
        return self._sock.fileno()


def _pair(test):
    """A fake driver connection and the server's end of its socket."""
    ours, server = socket.socketpair()
    test.addCleanup(ours.close)
    test.addCleanup(server.close)
    server.settimeout(5)
    return _FakeConnection(ours), server


class TestWatchdog(base.TestCase):

    def _pair(self):
        return _pair(self)

    def test_a_connection_waiting_too_long_is_shut_down(self):
        dog = outage.Watchdog(0.2)
        conn, server = self._pair()
        dog.arm(conn)
        # The server's end sees the connection end.
        self.assertEqual(b'', server.recv(1))
        # Counted just after the shutdown, in the watchdog's thread.
        deadline = time.monotonic() + 5
        while dog.fired == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(1, dog.fired)

    def test_a_disarmed_connection_is_left_alone(self):
        dog = outage.Watchdog(0.2)
        conn, server = self._pair()
        dog.arm(conn)
        dog.disarm(conn)
        server.settimeout(0.5)
        self.assertRaises(socket.timeout, server.recv, 1)
        self.assertEqual(0, dog.fired)

    def test_a_forked_child_watches_its_own_connections(self):
        # As an API worker forked after the master used the database.
        dog = outage.Watchdog(0.2)
        conn, _ = self._pair()
        dog.arm(conn)
        dog.disarm(conn)
        pid = os.fork()
        if pid == 0:
            code = 2
            try:
                child_conn, server = self._pair()
                dog.arm(child_conn)
                code = 0 if server.recv(1) == b'' else 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(0, os.waitstatus_to_exitcode(status))


class TestRequestDeadline(base.TestCase):
    """An API request's deadline bounds its waits on the server."""

    def _pair(self):
        return _pair(self)

    def test_watchdog_cuts_at_the_request_deadline(self):
        dog = outage.Watchdog(30)
        # A first connection armed with the watchdog's own bound: the
        # thread sleeps towards it when the second is armed.
        first, first_server = self._pair()
        dog.arm(first)
        conn, server = self._pair()
        start = time.monotonic()
        with intent.answer_by(start + 0.3):
            dog.arm(conn)
        self.assertEqual(b'', server.recv(1))
        self.assertLess(time.monotonic() - start, 3)
        first_server.settimeout(0.2)
        self.assertRaises(socket.timeout, first_server.recv, 1)

    def test_a_later_request_deadline_leaves_the_bound(self):
        dog = outage.Watchdog(0.2)
        conn, server = self._pair()
        with intent.answer_by(time.monotonic() + 60):
            dog.arm(conn)
        start = time.monotonic()
        self.assertEqual(b'', server.recv(1))
        self.assertLess(time.monotonic() - start, 3)

    def test_connect_timeouts_are_cut_to_the_time_left(self):
        breaker = outage.Breaker(mysql._connect_within)
        cparams = {'connect_timeout': 5, 'read_timeout': 35,
                   'write_timeout': 35, 'charset': 'utf8mb4'}
        self.assertEqual((cparams, False),
                         breaker._within_deadline(cparams, _DBAPI))
        with intent.answer_by(time.monotonic() + 60):
            self.assertEqual((cparams, False),
                             breaker._within_deadline(cparams, _DBAPI))
        with intent.answer_by(time.monotonic() + 12.5):
            self.assertEqual(
                ({'connect_timeout': 5, 'read_timeout': 12,
                  'write_timeout': 12, 'charset': 'utf8mb4'}, True),
                breaker._within_deadline(cparams, _DBAPI))
        with intent.answer_by(time.monotonic() + 3.5):
            self.assertEqual(
                ({'connect_timeout': 3}, False),
                outage.Breaker(postgresql._connect_within)._within_deadline(
                    {'connect_timeout': '5'}, _DBAPI))
        with intent.answer_by(time.monotonic() + 0.9):
            self.assertRaises(_DBAPI.OperationalError,
                              breaker._within_deadline, cparams, _DBAPI)

    def test_answer_by_keeps_the_outer_deadline(self):
        self.assertIsNone(intent.deadline())
        with intent.answer_by(10.0):
            with intent.answer_by(20.0):
                self.assertEqual(10.0, intent.deadline())
            with intent.answer_by(None):
                self.assertEqual(10.0, intent.deadline())
        self.assertIsNone(intent.deadline())


class _DBAPI:
    class OperationalError(Exception):
        pass


class TestLateRequest(base.TestCase):
    """A request past its deadline does not wait on the database at all."""

    def setUp(self):
        super().setUp()
        # As facade.configure sets it from the defaults.
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.db.facade._stall_seconds', 35))

        @facade.reader
        def read(context):
            raise AssertionError('the database was reached')
        self.read = read

    def test_late_request_is_503_before_the_database(self):
        ctx = resobj_context.RequestContext(arrived=time.monotonic() - 36)
        exc = self.assertRaises(exception.DatabaseUnavailable,
                                self.read, ctx)
        self.assertEqual(
            "The database is unavailable: no answer from the database "
            "within the request's time limit", str(exc))
        self.assertIn('the request arrived 36.', exc.kwargs['cause'])
        self.assertEqual(503, errors.from_exception(exc).status)

    def test_deadline_counts_from_arrival(self):
        arrived = time.monotonic() - 5
        self.assertEqual(arrived + 35, facade._deadline(
            (resobj_context.RequestContext(arrived=arrived),)))
        # Other contexts (services, RPC) have no deadline; neither has a
        # configuration without a stall bound.
        self.assertIsNone(facade._deadline(
            (resobj_context.get_admin_context(),)))
        self.assertIsNone(facade._deadline(()))
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.db.facade._stall_seconds', None))
        self.assertIsNone(facade._deadline(
            (resobj_context.RequestContext(arrived=arrived),)))
