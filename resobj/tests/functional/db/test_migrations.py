"""The alembic migrations build exactly the schema the models describe."""

import os
import re
import subprocess
import sys

from alembic import operations as alembic_operations
from alembic.runtime import migration as alembic_migration
import fixtures
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa

from resobj.db.api import resource_class as rc_db
from resobj.db.api import usage as usage_db
from resobj.db import migration
from resobj.db.migrations import resumable
from resobj.db import models
from resobj.db.models import allocation_owner
from resobj.db.models import inventory_usage
from resobj import exception
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base


class TestMigrationsMatchModels(test_migrations.ModelsMigrationsSync,
                                db_base.DBTestCase):
    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def db_sync(self, engine):
        migration.db_sync(engine)

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.BASE.metadata


class TestDbSync(db_base.DBTestCase):
    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def test_version_before_and_after_sync(self):
        self.assertIsNone(migration.db_version(self.engine))
        migration.db_sync(self.engine)
        self.assertEqual(migration.head_revision(),
                         migration.db_version(self.engine))

    def test_sync_twice_is_harmless(self):
        migration.db_sync(self.engine)
        migration.db_sync(self.engine)
        self.assertEqual(migration.head_revision(),
                         migration.db_version(self.engine))

    def test_newer_schema_is_refused_unless_newer_ok(self):
        migration.db_sync(self.engine)
        with self.engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = "
                                 "'9999_from_a_newer_release'"))
        self.assertRaises(exception.DatabaseSchemaError,
                          migration.db_sync, self.engine)
        self.assertEqual('9999_from_a_newer_release',
                         migration.db_sync(self.engine, newer_ok=True))
        self.assertEqual('9999_from_a_newer_release',
                         migration.db_version(self.engine))

    def test_newer_ok_still_creates_and_upgrades(self):
        self.assertIsNone(migration.db_sync(
            self.engine, '0003_resource_providers', newer_ok=True))
        self.assertIsNone(migration.db_sync(self.engine, newer_ok=True))
        self.assertEqual(migration.head_revision(),
                         migration.db_version(self.engine))


class TestUsageCoveringIndexes(db_base.DBTestCase):
    """0004 widens two indexes of a database that holds allocations."""

    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def _indexes(self, table):
        return {index['name']: index['column_names'] for index in
                sa.inspect(self.engine).get_indexes(table)}

    def test_upgrade_keeps_rows_and_swaps_the_indexes(self):
        migration.db_sync(self.engine, '0003_resource_providers')
        self.assertIn('ix_allocations_consumer_id',
                      self._indexes('allocations'))
        rc_db.ensure_sync(self.context)
        rp = fx.provider(self.context)
        fx.inventory(self.context, rp, 0, total=64)
        fx.inventory(self.context, rp, 1, total=4096)
        first = fx.consumer(self.context, 'p1', 'u1', 'INSTANCE')
        second = fx.consumer(self.context, 'p1', 'u2')
        fx.allocate(self.context, (rp, first, 0, 2), (rp, first, 1, 512),
                    (rp, second, 0, 4))

        migration.db_sync(self.engine)

        allocations = self._indexes('allocations')
        consumers = self._indexes('consumers')
        self.assertEqual(['consumer_id', 'resource_class_id', 'used'],
                         allocations['ix_allocations_consumer_id_rc_used'])
        self.assertNotIn('ix_allocations_consumer_id', allocations)
        self.assertEqual(
            ['project_id', 'user_id', 'consumer_type_id'],
            consumers['ix_consumers_project_id_user_id_type_id'])
        self.assertNotIn('ix_consumers_project_id_user_id', consumers)
        self.assertEqual(
            [{'resource_class': 'MEMORY_MB', 'usage': 512,
              'consumer_type': 'INSTANCE', 'consumer_count': 1},
             {'resource_class': 'VCPU', 'usage': 2,
              'consumer_type': 'INSTANCE', 'consumer_count': 1},
             {'resource_class': 'VCPU', 'usage': 4,
              'consumer_type': 'unknown', 'consumer_count': 1}],
            usage_db.get_all_by_project_user(self.context, 'p1'))


class TestInventoryUsageMigration(db_base.DBTestCase):
    """0005 gives each inventory its usage and the triggers that keep it."""

    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def test_upgrade_counts_the_allocations_then_keeps_counting(self):
        migration.db_sync(self.engine, '0004_usage_covering_indexes')
        rc_db.ensure_sync(self.context)
        rp = fx.provider(self.context)
        other = fx.provider(self.context)
        fx.inventory(self.context, rp, 0, total=64)
        fx.inventory(self.context, rp, 1, total=4096)
        fx.inventory(self.context, other, 0, total=8)
        first = fx.consumer(self.context, 'p1', 'u1')
        second = fx.consumer(self.context, 'p1', 'u2')
        # DISK_GB without inventory: allocations an older release left.
        fx.allocate(self.context, (rp, first, 0, 2), (rp, first, 1, 512),
                    (rp, second, 0, 4), (other, second, 0, 1),
                    (rp, second, 2, 30))

        migration.db_sync(self.engine)

        self.assertEqual({'VCPU': 6, 'MEMORY_MB': 512},
                         fx.usage(self.context, rp))
        self.assertEqual({'VCPU': 1}, fx.usage(self.context, other))
        fx.allocate(self.context, (other, first, 0, 3))
        fx.inventory(self.context, rp, 2, total=100)
        self.assertEqual({'VCPU': 6, 'MEMORY_MB': 512, 'DISK_GB': 30},
                         fx.usage(self.context, rp))
        self.assertEqual({'VCPU': 4}, fx.usage(self.context, other))


class TestAllocationOwnerMigration(db_base.DBTestCase):
    """0006 copies each consumer's owner to its allocations, then keeps it."""

    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def test_upgrade_copies_the_owners_then_keeps_copying(self):
        migration.db_sync(self.engine, '0005_inventory_usage')
        rc_db.ensure_sync(self.context)
        rp = fx.provider(self.context)
        fx.inventory(self.context, rp, 0, total=64)
        first = fx.consumer(self.context, 'p1', 'u1')
        second = fx.consumer(self.context, 'p1', 'u2')
        other = fx.consumer(self.context, 'p2', 'u1')
        fx.allocate(self.context, (rp, first, 0, 2), (rp, second, 0, 4),
                    (rp, other, 0, 8))

        migration.db_sync(self.engine)

        def usage(project, user=None):
            return {row['resource_class']: row['usage'] for row in
                    usage_db.get_all_by_project_user(
                        self.context, project, user,
                        consumer_type=usage_db.ALL_TYPES,
                        count_consumers=False)}

        self.assertEqual({'VCPU': 6}, usage('p1'))
        self.assertEqual({'VCPU': 4}, usage('p1', 'u2'))
        self.assertEqual({'VCPU': 8}, usage('p2'))
        fx.allocate(self.context, (rp, other, 0, 1))
        self.assertEqual({'VCPU': 9}, usage('p2', 'u1'))


# Configures the facade on argv[1] as resobj-api does, says it is ready,
# waits for a byte on stdin (sent to all processes at once), then syncs.
_SYNC_PROCESS = '''
import sys
from oslo_config import cfg
from resobj import conf as resobj_conf
from resobj.db import facade, migration
conf = cfg.ConfigOpts()
resobj_conf.register_opts(conf)
conf([], default_config_files=[], default_config_dirs=[])
conf.set_override('connection', sys.argv[1], group='database')
facade.configure(conf)
facade.get_engine().dispose()
print('ready', flush=True)
sys.stdin.read(1)
migration.db_sync()
'''


class TestConcurrentDbSync(db_base.DBTestCase):
    """Several processes sync one empty database at the same moment.

    As the workers of a WSGI server do when each loads resobj.api.wsgi.
    """
    scenarios = db_base.EMPTY_BACKEND_SCENARIOS
    PROCESSES = 3

    def _url(self):
        if self.backend == 'sqlite':
            # The fixture's SQLite database is in memory, which other
            # processes cannot open: a file, as resobj-api uses.
            return 'sqlite:///' + os.path.join(
                self.useFixture(fixtures.TempDir()).path, 'sync.sqlite')
        return self.engine.url.render_as_string(hide_password=False)

    def test_every_process_succeeds_and_the_schema_is_current(self):
        url = self._url()
        procs = [subprocess.Popen(
            [sys.executable, '-c', _SYNC_PROCESS, url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
            for _ in range(self.PROCESSES)]
        for proc in procs:
            self.addCleanup(proc.kill)
        for proc in procs:
            self.assertEqual(b'ready\n', proc.stdout.readline(),
                             'a sync process failed to start')
        for proc in procs:
            proc.stdin.write(b'x')
            proc.stdin.flush()
        outputs = [proc.communicate(timeout=120)[0].decode()
                   for proc in procs]
        self.assertEqual([0] * self.PROCESSES,
                         [proc.returncode for proc in procs],
                         '\n'.join(outputs))
        engine = sa.create_engine(url)
        self.addCleanup(engine.dispose)
        self.assertEqual(migration.head_revision(),
                         migration.db_version(engine))


class _Interrupted(Exception):
    """Raised right after a DDL statement, as if the sync were killed."""


class TestInterruptedSyncOnMySQL(test_migrations.ModelsMigrationsSync,
                                 db_base.DBTestCase):
    """MariaDB/MySQL: a sync stopped after any DDL step completes when rerun.

    Their DDL commits on its own, so what a killed sync did stays. Each
    run below is stopped right after the first DDL statement that it
    really executes (the ones a rerun finds done are skipped), and the
    next run resumes: every DDL step of every migration is an
    interruption point once. The schema that the last run leaves must be
    the models' (oslo.db's comparison, test_models_sync, as for
    TestMigrationsMatchModels), with every trigger, at the newest
    revision.
    """

    scenarios = [s for s in db_base.EMPTY_BACKEND_SCENARIOS
                 if s[0] == 'mysql']

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.BASE.metadata

    def _sync_stopping_after_new_ddl(self, engine, seen):
        """One sync; True if it was stopped, False if it finished.

        Stopped after the first DDL statement not in ``seen`` (added to
        it): statements a rerun executes again unchanged (a trigger's
        CREATE ... IF NOT EXISTS, a column's MODIFY) were interruption
        points already.
        """
        def after(conn, cursor, statement, parameters, context, many):
            if statement.lstrip().upper().startswith(
                    ('CREATE', 'ALTER', 'DROP')) and statement not in seen:
                seen.add(statement)
                raise _Interrupted(statement)

        sa.event.listen(engine, 'after_cursor_execute', after)
        try:
            migration.db_sync(engine)
        except _Interrupted:
            return True
        except db_exc.DBError as exc:
            # oslo.db wraps what a statement's execution raised, when
            # its error handler sees it.
            if not isinstance(exc.inner_exception, _Interrupted):
                raise
            return True
        finally:
            sa.event.remove(engine, 'after_cursor_execute', after)
        return False

    def db_sync(self, engine):
        seen = set()
        while self._sync_stopping_after_new_ddl(engine, seen):
            self.assertLess(len(seen), 500, 'the sync never finishes')
        # Every table, index, column and trigger is a step of its own.
        self.assertGreater(len(seen), 40)
        self.assertEqual(migration.head_revision(),
                         migration.db_version(engine))
        with engine.connect() as conn:
            triggers = set(conn.execute(sa.text(
                'SELECT trigger_name FROM information_schema.triggers '
                'WHERE trigger_schema = DATABASE()')).scalars())
        expected = {re.match(r'CREATE TRIGGER (\w+)', statement).group(1)
                    for module in (inventory_usage, allocation_owner)
                    for statement in module.statements('mysql')}
        self.assertEqual(expected, triggers)


class TestResumableOperations(db_base.DBTestCase):
    """MySQL: what make_resumable does to alembic's operations, and not.

    The replaced implementations hold for every migration context of the
    process (alembic's ``Operations.implementation_for``): a context not
    made resumable keeps alembic's own.
    """

    scenarios = [s for s in db_base.EMPTY_BACKEND_SCENARIOS
                 if s[0] == 'mysql']

    def _operations(self, connection, resumable_too):
        context = alembic_migration.MigrationContext.configure(connection)
        if resumable_too:
            self.addCleanup(resumable.make_resumable(context))
        return alembic_operations.Operations(context)

    def _table(self, op):
        return op.create_table('resumed', sa.Column('id', sa.Integer,
                                                    primary_key=True))

    def test_a_table_that_exists_is_not_created_again(self):
        with self.engine.connect() as conn:
            op = self._operations(conn, resumable_too=True)
            self._table(op)
            table = self._table(op)
            # As alembic's: a table to bulk_insert into.
            self.assertEqual('resumed', table.name)
            op.add_column('resumed', sa.Column('n', sa.Integer))
            op.add_column('resumed', sa.Column('n', sa.Integer))
            self.assertEqual({'id', 'n'}, {
                c['name'] for c in sa.inspect(conn).get_columns('resumed')})

    def test_other_contexts_keep_alembics_operations(self):
        with self.engine.connect() as conn:
            op = self._operations(conn, resumable_too=False)
            self._table(op)
            self.assertRaises(sa.exc.OperationalError, self._table, op)

    def test_a_column_with_its_index_is_refused(self):
        with self.engine.connect() as conn:
            op = self._operations(conn, resumable_too=True)
            self._table(op)
            error = self.assertRaises(
                NotImplementedError, op.add_column, 'resumed',
                sa.Column('n', sa.Integer, index=True))
            self.assertIn('resumed.n', str(error))
