"""Run functional tests on SQLite, PostgreSQL and MariaDB/MySQL.

A test class derived from :class:`DBTestCase` runs each test once per
backend (scenarios ``sqlite``, ``postgresql``, ``mysql``), each on an
empty schema (on PostgreSQL and MySQL built once per test database and
emptied after each test). PostgreSQL and MySQL use oslo.db's
opportunistic provisioning with the ``openstack_citest`` account
(``tools/test-setup.sh``); when a server is missing, or refuses that
account, those tests are skipped with the reason
(``resobj.tests.backends`` decides once per backend), unless
``RESOBJ_TEST_REQUIRE_BACKENDS`` is set, which turns every such skip into
a failure (CI sets it).

PostgreSQL runs on psycopg (3), the driver resobj recommends, unless
``OS_TEST_DBAPI_ADMIN_CONNECTION`` names other URLs (set in
``resobj/tests/__init__.py``); psycopg2 is covered by
``functional/db/test_postgresql_drivers.py``.
"""

from oslo_db.sqlalchemy import test_fixtures

import sqlalchemy as sa

from resobj import context
from resobj.db.api import consumer as consumer_db
from resobj.db.api import inventory as inventory_db
from resobj.db import facade
from resobj.db import migration
from resobj.db import models
from resobj.tests import backends
from resobj.tests import base


class _FacadeMixin:
    def get_enginefacade(self):
        # Without this oslo.db patches its global facade, which resobj does
        # not use.
        return facade.get_context_manager()


class _ModelsSchema(_FacadeMixin, test_fixtures.GeneratesSchema):
    def generate_schema_create_all(self, engine):
        models.BASE.metadata.create_all(engine)


class _KeptSchema(test_fixtures.DeletesFromSchema, _ModelsSchema):
    """The schema built once per test database, emptied after each test.

    On PostgreSQL and MariaDB, creating and dropping the tables, indexes
    and triggers was most of a short test's time; deleting the rows
    costs a statement per table. Ids keep counting from one test to the
    next, as they do in a deployment.
    """

    def delete_from_schema(self, engine):
        with engine.begin() as conn:
            # MySQL checks foreign keys row by row, so a table that
            # refers to itself (a provider to its root and parent) cannot
            # be emptied in one statement with the checks on.
            unchecked = engine.dialect.name == 'mysql'
            if unchecked:
                conn.exec_driver_sql('SET FOREIGN_KEY_CHECKS = 0')
            try:
                for table in reversed(models.BASE.metadata.sorted_tables):
                    conn.execute(table.delete())
            finally:
                if unchecked:
                    conn.exec_driver_sql('SET FOREIGN_KEY_CHECKS = 1')


class SQLiteFixture(_ModelsSchema, test_fixtures.OpportunisticDbFixture):
    DRIVER = 'sqlite'


class PostgreSQLFixture(_KeptSchema, test_fixtures.OpportunisticDbFixture):
    DRIVER = 'postgresql'


class MySQLFixture(_KeptSchema, test_fixtures.OpportunisticDbFixture):
    DRIVER = 'mysql'


# An empty database per backend, for tests that build the schema
# themselves (migrations).
class EmptySQLiteFixture(_FacadeMixin, test_fixtures.OpportunisticDbFixture):
    DRIVER = 'sqlite'


class EmptyPostgreSQLFixture(_FacadeMixin,
                             test_fixtures.OpportunisticDbFixture):
    DRIVER = 'postgresql'


class EmptyMySQLFixture(_FacadeMixin, test_fixtures.OpportunisticDbFixture):
    DRIVER = 'mysql'


BACKEND_SCENARIOS = [
    ('sqlite', {'FIXTURE': SQLiteFixture}),
    ('postgresql', {'FIXTURE': PostgreSQLFixture}),
    ('mysql', {'FIXTURE': MySQLFixture}),
]

EMPTY_BACKEND_SCENARIOS = [
    ('sqlite', {'FIXTURE': EmptySQLiteFixture}),
    ('postgresql', {'FIXTURE': EmptyPostgreSQLFixture}),
    ('mysql', {'FIXTURE': EmptyMySQLFixture}),
]


class DBTestCase(test_fixtures.OpportunisticDBTestMixin, base.TestCase):
    """Each test runs on every backend, on an empty schema."""

    scenarios = BACKEND_SCENARIOS
    SKIP_ON_UNAVAILABLE_DB = not backends.REQUIRE_BACKENDS

    def setUp(self):
        # Decided before oslo.db's fixtures run: their own skip says only
        # "Could not connect", and costs a connection attempt per test
        # class; this one names the cause and is probed once per run.
        if self.FIXTURE.DRIVER != 'sqlite':
            backends.require(self.FIXTURE.DRIVER)
        super().setUp()
        self.context = context.get_admin_context()
        if self.backend == 'sqlite':
            # resobj runs SQLite with foreign keys on (facade.configure);
            # oslo.db's test database does not. Its in-memory database has
            # one connection, so setting it there, outside a transaction,
            # holds for the test. Off again first at cleanup: the fixture
            # drops tables in an order foreign keys would refuse.
            self.assertEqual(1, self._sqlite_foreign_keys('ON'))
            self.addCleanup(self._sqlite_foreign_keys, 'OFF')
        self.addCleanup(self.assert_copies_kept)

    def assert_copies_kept(self):
        """What the database's triggers copy or count is right.

        Checked after every test, whatever it wrote: every inventory's
        ``used`` is the sum of its allocations (models/inventory_usage.py)
        and every allocation has its consumer's project and user
        (models/allocation_owner.py).
        """
        inspector = sa.inspect(self.engine)
        ctx = context.get_admin_context()
        if self._has_column(inspector, 'inventories', 'used'):
            self.assertEqual([], inventory_db.find_wrong_usage(ctx),
                             'inventories whose usage is not the sum of '
                             'their allocations')
        if self._has_column(inspector, 'allocations', 'project_id'):
            self.assertEqual([], consumer_db.find_wrong_owners(ctx),
                             "allocations without their consumer's "
                             "project and user")

    @staticmethod
    def _has_column(inspector, table, column):
        # A migration test's schema may predate it.
        return inspector.has_table(table) and column in {
            c['name'] for c in inspector.get_columns(table)}

    def _sqlite_foreign_keys(self, value):
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute('PRAGMA foreign_keys=%s' % value)
            cursor.execute('PRAGMA foreign_keys')
            return cursor.fetchone()[0]
        finally:
            raw.close()

    @property
    def engine(self):
        return facade.get_engine()

    @property
    def backend(self):
        return self.engine.dialect.name


def sync_schema(engine):
    """Build the schema with the migrations, as ``db sync`` does."""
    migration.db_sync(engine)
