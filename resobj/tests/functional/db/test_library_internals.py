"""The private uses of SQLAlchemy and oslo.db still do what resobj needs.

One test per function of resobj/db/_sqlalchemy.py and _oslo_db.py, on
SQLite files (what they touch is the same on every backend): each fails
if the library changes what the function relies on.
"""

import os

import fixtures
from oslo_db.sqlalchemy import engines
import sqlalchemy as sa

from resobj.db import _oslo_db
from resobj.db import _sqlalchemy
from resobj.tests import base


class _TracedEngine(base.TestCase):
    """An engine on a SQLite file whose connections log their SQL."""

    def setUp(self):
        super().setUp()
        self.url = 'sqlite:///' + os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'db.sqlite')
        self.sql = []

    def trace(self, engine):
        self.addCleanup(engine.dispose)

        # sqlite3's own log of what each connection runs, whoever asks.
        @sa.event.listens_for(engine.pool, 'connect')
        def _trace(dbapi_connection, record):
            dbapi_connection.set_trace_callback(self.sql.append)
        return engine


class TestStopPrePing(_TracedEngine):

    def checkouts(self, engine):
        """The SQL of three checkouts of the pooled connection."""
        with engine.connect():
            pass
        del self.sql[:]
        for _ in range(3):
            with engine.connect():
                pass
        return list(self.sql)

    def test_a_pooled_connection_is_checked_out_without_a_ping(self):
        engine = self.trace(sa.create_engine(
            self.url, poolclass=sa.pool.QueuePool, pool_pre_ping=True))
        # What the test looks for: the pool's ping, a statement.
        self.assertEqual(3, len(self.checkouts(engine)))
        _sqlalchemy.stop_pre_ping(engine.pool)
        self.assertEqual([], self.checkouts(engine))
        # dispose() builds a new pool, as the old one was.
        engine.dispose()
        self.assertEqual([], self.checkouts(engine))


class TestListeners(base.TestCase):

    def test_the_listeners_of_an_event_in_order(self):
        engine = sa.create_engine('sqlite://')
        self.addCleanup(engine.dispose)

        def first(conn):
            pass

        def second(conn):
            pass

        before = _sqlalchemy.listeners(engine, 'begin')
        sa.event.listen(engine, 'begin', first)
        sa.event.listen(engine, 'begin', second)
        self.assertEqual(before + [first, second],
                         _sqlalchemy.listeners(engine, 'begin'))


class TestReplaceSQLiteBegin(_TracedEngine):

    def test_transactions_begin_as_told_and_end_as_oslo_db_ends_them(self):
        # oslo.db's own engine, with its SQLite hooks.
        engine = self.trace(engines.create_engine(self.url, max_retries=0))
        begins = []

        def emit_begin(conn):
            begins.append(conn)
            conn.exec_driver_sql('BEGIN IMMEDIATE')

        self.assertEqual(1, _oslo_db.replace_sqlite_begin(engine,
                                                          emit_begin))
        with engine.connect() as conn:
            for end in (conn.commit, conn.rollback):
                conn.execute(sa.text('SELECT 1'))
                end()
        self.assertEqual(2, len(begins))
        # Each transaction begun once, by emit_begin, and ended: oslo.db's
        # commit and rollback hooks cleared the mark.
        self.assertEqual(['BEGIN IMMEDIATE', 'SELECT 1', 'COMMIT',
                          'BEGIN IMMEDIATE', 'SELECT 1', 'ROLLBACK'],
                         [s for s in self.sql if 'PRAGMA' not in s])
