"""A connection the server ends mid-transaction is a 503, then recovers.

The server ends the very connection a writer is using, between two of
its statements (PostgreSQL ``pg_terminate_backend``, MariaDB ``KILL``):
the writer's next statement, its rollback and SQLAlchemy's bookkeeping
must surface as DatabaseUnavailable (HTTP 503), never as the
PendingRollbackError that touching the dead connection raises, and the
next call must work on a fresh connection.
"""

import sqlalchemy as sa

from resobj.api import errors
from resobj.db.api import service as service_db
from resobj.db import facade
from resobj import exception
from resobj.tests.functional import db_base


class TestLostConnection(db_base.DBTestCase):

    scenarios = [s for s in db_base.BACKEND_SCENARIOS if s[0] != 'sqlite']

    def setUp(self):
        super().setUp()
        self.admin = sa.create_engine(self.engine.url,
                                      poolclass=sa.pool.NullPool)
        self.addCleanup(self.admin.dispose)

    def _end(self, backend_id):
        kill = ('SELECT pg_terminate_backend(%d)'
                if self.backend == 'postgresql' else 'KILL %d') % backend_id
        with self.admin.connect() as conn:
            conn.execute(sa.text(kill))

    def _backend_id(self, context):
        return context.session.execute(sa.text(
            'SELECT pg_backend_pid()' if self.backend == 'postgresql'
            else 'SELECT CONNECTION_ID()')).scalar()

    def test_writer_whose_connection_ends_gets_503_then_recovers(self):
        @facade.writer
        def write_after_the_end(context):
            self._end(self._backend_id(context))
            service_db.create(context, {'host': 'h', 'binary': 'b'})

        exc = self.assertRaises(exception.DatabaseUnavailable,
                                write_after_the_end, self.context)
        error = errors.from_exception(exc)
        self.assertEqual((503, errors.DATABASE_UNAVAILABLE),
                         (error.status, error.code))
        # Says what failed, not where the server is (the log does).
        self.assertNotIn(self.engine.url.host or 'localhost', error.detail)
        service_db.create(self.context, {'host': 'h2', 'binary': 'b'})
        self.assertEqual(['h2'], [s['host'] for s in
                                  service_db.get_all(self.context)])

    def test_reader_whose_connection_ends_gets_503_then_recovers(self):
        @facade.reader
        def read_after_the_end(context):
            self._end(self._backend_id(context))
            return service_db.get_all(context)

        self.assertRaises(exception.DatabaseUnavailable,
                          read_after_the_end, self.context)
        self.assertEqual([], service_db.get_all(self.context))
