"""The facade as configured for real use: embedded SQLite, replica, errors."""

import functools
import socket
import threading

import fixtures
from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.api import errors
from resobj import context
from resobj.db.api import service as service_db
from resobj.db import facade
from resobj.db import migration
from resobj.db.models import consumer as consumer_models
from resobj import exception
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional import db_base


def closed_port():
    """A local TCP port nothing listens on."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@facade.reader
def _pragma(context, name):
    return context.session.execute(
        sa.text('PRAGMA %s' % name)).scalar()


@facade.replica_reader
def _replica_hosts(context):
    return [r['host'] for r in service_db.get_all(context)]


class TestEmbeddedSQLite(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(resobj_fixtures.FacadeFixture())
        self.conf = self.useFixture(resobj_fixtures.ConfFixture())
        self.state = self.useFixture(fixtures.TempDir()).path
        self.conf.config(state_dir=self.state + '/sub/dir')
        self.context = context.get_admin_context()

    def test_default_database_is_created_in_the_state_dir(self):
        facade.configure(self.conf.conf)
        migration.db_sync()
        service_db.create(self.context, {'host': 'h', 'binary': 'b'})
        engine = facade.get_engine()
        self.assertEqual(self.state + '/sub/dir/resobj.sqlite',
                         engine.url.database)
        self.assertEqual('wal', _pragma(self.context, 'journal_mode'))
        self.assertEqual(1, _pragma(self.context, 'foreign_keys'))
        self.assertEqual(30000, _pragma(self.context, 'busy_timeout'))

    def test_busy_timeout_is_configurable(self):
        self.conf.config(sqlite_busy_timeout=3, group='database')
        facade.configure(self.conf.conf)
        self.assertEqual(3000, _pragma(self.context, 'busy_timeout'))

    def test_replica_reader_reads_the_replica(self):
        replica = 'sqlite:///%s/replica.sqlite' % self.state
        self.conf.config(slave_connection=replica, group='database')
        facade.configure(self.conf.conf)
        migration.db_sync()
        migration.db_sync(facade.get_engine(use_replica=True))
        service_db.create(self.context, {'host': 'primary', 'binary': 'b'})
        with facade.get_engine(use_replica=True).begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO services (uuid, host, \"binary\") "
                "VALUES ('0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9', "
                "'replica', 'b')"))
        self.assertEqual(['replica'], _replica_hosts(self.context))
        self.assertEqual(['primary'], [
            r['host'] for r in service_db.get_all(self.context)])

    def test_missing_schema_says_to_sync(self):
        facade.configure(self.conf.conf)
        exc = self.assertRaises(exception.DatabaseSchemaError,
                                service_db.get_all, self.context)
        self.assertIn('resobj-manage db sync', str(exc))

    def test_unwritable_state_dir(self):
        blocker = self.state + '/file'
        open(blocker, 'w').close()
        self.conf.config(state_dir=blocker + '/resobj')
        self.assertRaises(exception.StateDirectoryNotWritable,
                          facade.configure, self.conf.conf)

    def test_an_engine_oslo_db_did_not_test_knows_its_version(self):
        # With max_retries 0 (resobj-manage's default) oslo.db makes no
        # first connection; reflection needs the version all the same.
        self.conf.config(max_retries=0, group='database')
        facade.configure(self.conf.conf)
        migration.db_sync()
        self.assertIsNotNone(facade.get_engine().dialect.server_version_info)

    def test_configure_after_first_use_is_refused(self):
        facade.configure(self.conf.conf)
        facade.get_engine()
        self.assertRaises(exception.ConfigurationError, facade.configure,
                          self.conf.conf)


class TestUnreachableServer(base.TestCase):

    # Needs the drivers, not the servers: named apart from the backend
    # scenarios, which CI requires to run against a real server.
    scenarios = [
        ('psycopg2-closed-port',
         {'url': 'postgresql+psycopg2://u:secret@127.0.0.1:%d/x'}),
        ('pymysql-closed-port',
         {'url': 'mysql+pymysql://u:secret@127.0.0.1:%d/x'}),
    ]

    def test_unreachable_server_is_database_unavailable(self):
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(connection=self.url % closed_port(), max_retries=0,
                    group='database')
        facade.configure(conf.conf)
        exc = self.assertRaises(exception.DatabaseUnavailable,
                                service_db.get_all,
                                context.get_admin_context())
        self.assertIn('The database is unavailable', str(exc))
        self.assertNotIn('secret', str(exc))
        self.assertNotIn('\n', str(exc))


class TestSQLiteTransactions(base.TestCase):

    def test_writers_take_the_write_lock_at_begin(self):
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(state_dir=self.useFixture(fixtures.TempDir()).path)
        facade.configure(conf.conf)
        counter = self.useFixture(resobj_fixtures.StatementCounter(
            facade.get_engine()))

        @facade.writer
        def write(context):
            # A reader nested in a writer joins its transaction.
            return _pragma(context, 'user_version')

        ctx = context.get_admin_context()
        write(ctx)
        _pragma(ctx, 'user_version')
        begins = [s for s in counter.statements if s.startswith('BEGIN')]
        self.assertEqual(['BEGIN IMMEDIATE', 'BEGIN'], begins)

    def test_pooled_file_connections_are_not_pinged(self):
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(state_dir=self.useFixture(fixtures.TempDir()).path)
        facade.configure(conf.conf)
        ctx = context.get_admin_context()
        _pragma(ctx, 'user_version')
        counter = self.useFixture(resobj_fixtures.StatementCounter(
            facade.get_engine()))
        pings = self.useFixture(fixtures.MockPatchObject(
            facade.get_engine().dialect, 'do_ping')).mock
        for _ in range(3):
            _pragma(ctx, 'user_version')
        self.assertEqual(0, pings.call_count)
        self.assertEqual(['BEGIN', 'PRAGMA user_version'] * 3,
                         counter.statements)

    def test_file_connections_are_reused_latest_first(self):
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(state_dir=self.useFixture(fixtures.TempDir()).path)
        facade.configure(conf.conf)
        first, second, later = _checkout_order(
            facade.get_engine(),
            lambda conn: id(conn.connection.dbapi_connection))
        self.assertNotEqual(first, second)
        self.assertEqual([second] * 3, later)


class TestRetryingWriter(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(state_dir=self.useFixture(fixtures.TempDir()).path)
        facade.configure(conf.conf)
        self.attempts = []

        class Conflict(Exception):
            pass

        self.Conflict = Conflict

        @facade.retrying_writer(Conflict)
        def flaky(context, failures):
            self.attempts.append(1)
            if len(self.attempts) <= failures:
                raise Conflict()
            return len(self.attempts)

        self.flaky = flaky

    def test_retries_in_fresh_transactions_then_gives_up(self):
        ctx = context.get_admin_context()
        self.assertEqual(3, self.flaky(ctx, 2))
        self.attempts.clear()
        self.assertRaises(self.Conflict, self.flaky, ctx, 5, max_retries=2)
        self.assertEqual(3, len(self.attempts))

    def test_every_writer_retries_deadlocks_then_answers_409(self):
        deadlocks = []

        @facade.writer
        def deadlocking(context, failures):
            deadlocks.append(1)
            if len(deadlocks) <= failures:
                raise db_exc.DBDeadlock()
            return len(deadlocks)

        ctx = context.get_admin_context()
        self.assertEqual(3, deadlocking(ctx, 2))
        deadlocks.clear()
        exc = self.assertRaises(exception.DatabaseDeadlock, deadlocking,
                                ctx, 5, max_retries=2)
        self.assertEqual(3, len(deadlocks))
        error = errors.from_exception(exc)
        self.assertEqual((409, errors.CONCURRENT_UPDATE),
                         (error.status, error.code))

    def test_a_prerequisite_is_prepared_by_the_outermost_writer(self):
        prepared = []
        runs = []

        @facade.writer
        def prepare(context):
            prepared.append(context.session.connection() is not None)

        @facade.writer
        def needs(context):
            runs.append('inner')
            if not prepared:
                raise facade.Prerequisite(functools.partial(prepare,
                                                            context))
            return 'done'

        @facade.writer
        def outer(context):
            runs.append('outer')
            return needs(context)

        self.assertEqual('done', outer(context.get_admin_context()))
        # Prepared once, in a transaction of its own, between two runs
        # of the whole outer transaction.
        self.assertEqual([True], prepared)
        self.assertEqual(['outer', 'inner'] * 2, runs)

    def test_a_prerequisite_spends_no_retry(self):
        prepared = []

        @facade.writer
        def needs(context):
            if not prepared:
                raise facade.Prerequisite(lambda: prepared.append(1))
            return 'done'

        # Even a writer that may not retry a conflict prepares and runs
        # again.
        self.assertEqual('done', needs(context.get_admin_context(),
                                       max_retries=0))

    def test_a_prerequisite_that_never_holds_gives_up(self):
        prepared = []

        @facade.writer
        def needs(context):
            raise facade.Prerequisite(lambda: prepared.append(1))

        self.assertRaises(exception.DatabaseDeadlock, needs,
                          context.get_admin_context(), max_retries=50)
        self.assertEqual(facade.PREREQUISITES_PER_CALL, len(prepared))

    def test_inside_another_writer_it_runs_once(self):
        @facade.writer
        def outer(context):
            return self.flaky(context, 1)

        self.assertRaises(self.Conflict, outer, context.get_admin_context())
        self.assertEqual(1, len(self.attempts))


class TestDeadlockInSavepoint(db_base.DBTestCase):
    """A real deadlock inside a savepoint is retried as any deadlock.

    MariaDB rolls the deadlock's whole transaction back, savepoint
    included, so rolling back to the savepoint fails after it; that
    failure is the deadlock all the same. (SQLite has one writer at a
    time: no deadlock.)
    """

    scenarios = [s for s in db_base.BACKEND_SCENARIOS if s[0] != 'sqlite']

    def test_deadlock_in_a_savepoint_is_retried(self):
        table = consumer_models.Project.__table__
        ids = [_insert_project(self.context, table, name)
               for name in ('a', 'b')]
        barrier = threading.Barrier(2, timeout=60)
        attempts = []
        outcomes = []

        @facade.writer
        def cross(context, first, second):
            attempts.append(first)

            def touch(row_id):
                context.session.connection().execute(
                    sa.update(table).where(table.c.id == row_id)
                    .values(updated_at=sa.func.now()))

            touch(first)
            if attempts.count(first) == 1:
                # Both hold their first row before either asks for its
                # second: one of them is the deadlock's victim.
                barrier.wait()
            with context.session.begin_nested():
                touch(second)

        def run(first, second):
            try:
                cross(context.get_admin_context(), first, second)
                outcomes.append('done')
            except Exception as exc:
                outcomes.append(repr(exc))

        threads = [threading.Thread(target=run, args=pair)
                   for pair in (ids, ids[::-1])]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        self.assertEqual(['done', 'done'], outcomes)
        # The victim ran twice.
        self.assertEqual(3, len(attempts))


@facade.writer
def _insert_project(context, table, name):
    return context.session.connection().execute(
        sa.insert(table).values(external_id=name)).inserted_primary_key[0]


class _PooledConnections(db_base.DBTestCase):
    """An engine of its own, whose pings (``dialect.do_ping``) are counted."""

    def setUp(self):
        super().setUp()
        self.pinged = self.useFixture(
            engine_fixture(self.engine.url)).engine
        self.pings = self.useFixture(fixtures.MockPatchObject(
            self.pinged.dialect, 'do_ping',
            wraps=self.pinged.dialect.do_ping)).mock

    def _backend_pid(self):
        query = ('SELECT pg_backend_pid()' if self.backend == 'postgresql'
                 else 'SELECT CONNECTION_ID()')
        with self.pinged.connect() as conn:
            return conn.execute(sa.text(query)).scalar()


class TestPrePing(_PooledConnections):
    """A pooled server connection the server ended is replaced at checkout.

    (On PostgreSQL tested because its socket shows that the server spoke,
    see resobj.db.outage.ping_when_suspect; on MySQL oslo.db's
    ``pool_pre_ping``.)
    """

    scenarios = [s for s in db_base.BACKEND_SCENARIOS if s[0] != 'sqlite']

    def test_connection_found_dead_is_replaced(self):
        dead = self._backend_pid()
        kill = ('SELECT pg_terminate_backend(%d)' if
                self.backend == 'postgresql' else 'KILL %d') % dead
        with self.engine.connect() as conn:
            conn.execute(sa.text(kill))
        self.pings.reset_mock()
        self.assertNotEqual(dead, self._backend_pid())
        self.assertEqual(1, self.pings.call_count)


class TestPingWhenSuspect(_PooledConnections):
    """On PostgreSQL a live pooled connection is used without a ping.

    Also a check of resobj.db._sqlalchemy.stop_pre_ping, which sets a
    private attribute of SQLAlchemy's pool: were it renamed, SQLAlchemy
    would ping at every checkout again.
    """

    scenarios = [s for s in db_base.BACKEND_SCENARIOS
                 if s[0] == 'postgresql']

    def test_live_pooled_connection_is_used_without_a_ping(self):
        first = self._backend_pid()
        self.pings.reset_mock()
        for _ in range(3):
            # The same pooled connection each time, never pinged.
            self.assertEqual(first, self._backend_pid())
        self.assertEqual(0, self.pings.call_count)


def _checkout_order(engine, identify):
    """Which connections sequential checkouts get after a burst of two.

    Two connections are held at once, the first returned first; then
    three checkouts one after the other. Returns (first, second,
    [the three]), each as ``identify(connection)`` says.
    """
    first, second = engine.connect(), engine.connect()
    held = [identify(first), identify(second)]
    first.close()
    second.close()
    later = []
    for _ in range(3):
        with engine.connect() as conn:
            later.append(identify(conn))
    return held[0], held[1], later


@facade.reader
def _reading_in_block(context):
    return facade.in_transaction_block(context)


class TestTransactionBlock(db_base.DBTestCase):
    """Only PostgreSQL runs pure reads outside a transaction block.

    (PostgreSQL: functional/db/test_postgresql_drivers.py, on a facade
    configured as in a deployment.)
    """

    scenarios = [s for s in db_base.BACKEND_SCENARIOS
                 if s[0] != 'postgresql']

    def test_a_reader_runs_in_a_block(self):
        self.assertTrue(_reading_in_block(self.context))


class engine_fixture(fixtures.Fixture):
    """An oslo.db engine for ``url`` with resobj's engine hooks."""

    def __init__(self, url):
        super().__init__()
        self.url = url

    def _setUp(self):
        from oslo_db.sqlalchemy import engines
        self.engine = engines.create_engine(
            self.url.render_as_string(hide_password=False))
        self.addCleanup(self.engine.dispose)
        facade._on_engine_create(self.engine)
