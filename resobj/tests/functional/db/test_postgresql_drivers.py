"""resobj on both PostgreSQL drivers SQLAlchemy offers.

psycopg (3), ``postgresql+psycopg://``, is the one resobj recommends:
it prepares the statements a connection runs again and again on the
server, which halves PostgreSQL's CPU per claim. psycopg2,
``postgresql+psycopg2://`` (and plain ``postgresql://``), stays
supported for existing configurations. The rest of the functional suite
runs its PostgreSQL scenario on psycopg; this test configures the facade
as a deployment does, on a fresh database, with each driver in turn, and
goes through the paths where the drivers differ: parameter binding of
arrays and expanding lists, pure reads outside a transaction block and
the candidate search's planner setting around them, the translation of
unique and generation conflicts, and a rollback that leaves nothing
behind.
"""

import os

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj import context
from resobj.db.api import allocation_candidate as ac_db
from resobj.db.api import resource_class as rc_db
from resobj.db.backends import postgresql as pg_backend
from resobj.db import facade
from resobj.db import migration
from resobj import exception
from resobj import objects
from resobj.objects import allocation_candidate as ac_obj
from resobj.tests import backends
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional import db_base
from resobj.tests.functional import provider_fixtures as pf

objects.register_all()


@facade.reader
def _prepared_statements(context):
    # Sequential calls in one thread reuse one pooled connection, the one
    # whose session this reads.
    return context.session.execute(sa.text(
        'SELECT count(*) FROM pg_prepared_statements')).scalar()


@facade.writer
def _write_then_fail(context, name):
    context.session.execute(sa.text(
        "INSERT INTO traits (name, created_at) VALUES (:name, now())"),
        {'name': name})
    raise RuntimeError('after the write')


@facade.reader
def _trait_count(context, name):
    return context.session.execute(sa.text(
        'SELECT count(*) FROM traits WHERE name = :name'),
        {'name': name}).scalar()


@facade.writer
def _killed_then_fail(context, admin_url):
    """Read in a writer, have the server end the session, then fail."""
    pid = context.session.execute(sa.text('SELECT pg_backend_pid()')).scalar()
    admin = sa.create_engine(admin_url, poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            conn.execute(sa.text('SELECT pg_terminate_backend(:pid)'),
                         {'pid': pid})
    finally:
        admin.dispose()
    raise RuntimeError('after the session ended')


@facade.reader
def _two_txids(context):
    # txid_current() assigns an id: inside a transaction block both
    # statements share it, outside one each gets its own.
    return [context.session.execute(sa.text('SELECT txid_current()')).scalar()
            for _ in range(2)]


@facade.writer
def _two_txids_writing(context):
    return _two_txids(context)


@facade.reader
def _reading_in_block(context):
    return facade.in_transaction_block(context)


@facade.writer
def _writing_in_block(context):
    return _reading_in_block(context)


def _nestloop(context):
    return context.session.execute(sa.text('SHOW enable_nestloop')).scalar()


def _nestloop_around_failure(context, fail):
    """enable_nestloop inside the candidate search's block and after it.

    ``fail``: None, 'python', or 'sql' (a statement error, which aborts
    a transaction block).
    """
    try:
        with ac_db._settings(context, *pg_backend.candidate_strategy()
                             .whole_cloud_settings):
            inside = _nestloop(context)
            if fail == 'python':
                raise RuntimeError('in the block')
            if fail == 'sql':
                context.session.execute(sa.text('SELECT 1 / 0'))
    except (RuntimeError, db_exc.DBError):
        if facade.transaction_failed(context):
            context.session.rollback()
    return inside, _nestloop(context)


@facade.reader
def _nestloop_after(context, fail):
    return _nestloop_around_failure(context, fail)


@facade.writer
def _nestloop_after_writing(context, fail):
    return _nestloop_around_failure(context, fail)


@facade.reader
def _plan_cache_mode(context):
    return context.session.execute(
        sa.text('SHOW plan_cache_mode')).scalar()


@facade.writer
def _plan_cache_mode_writing(context):
    return _plan_cache_mode(context)


@facade.reader
def _run_probe(context, marker):
    # The same text each time: psycopg counts runs per statement text.
    return context.session.execute(
        sa.text('SELECT 1 AS %s' % marker)).scalar()


@facade.reader
def _run_marked_probe(context, marker):
    return context.session.connection().execute(
        sa.text('SELECT 2 AS %s' % marker).execution_options(
            **{facade.PREPARE_AT_ONCE: True})).scalar()


@facade.reader
def _probe_prepared(context, marker):
    # The marker is split so that this statement does not match itself.
    return context.session.execute(sa.text(
        "SELECT count(*) FROM pg_prepared_statements WHERE statement "
        "LIKE '%%' || :head || :tail || '%%'"),
        {'head': marker[:4], 'tail': marker[4:]}).scalar()


class TestPostgreSQLDrivers(base.TestCase):

    # Named as SQLAlchemy names the driver, so that the ids end in
    # "(postgresql+...)" like every other PostgreSQL test's.
    scenarios = [('postgresql+psycopg', {'driver': 'psycopg'}),
                 ('postgresql+psycopg2', {'driver': 'psycopg2'})]

    def setUp(self):
        super().setUp()
        backend = backends.provisioning_backend('postgresql')
        name = 'resobj_drivers_' + uuidutils.generate_uuid(dashed=False)
        backend.create_named_database(name)
        self.addCleanup(backend.drop_named_database, name)
        url = backend.provisioned_database_url(name).set(
            drivername='postgresql+' + self.driver)
        self.url = url.render_as_string(hide_password=False)
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(connection=self.url, group='database')
        facade.configure(conf.conf)
        migration.db_sync()
        self.context = context.get_admin_context()
        rc_db.ensure_sync(self.context)

    def _claim(self, consumer, rp, project='p1', **amounts):
        return objects.AllocationList(self.context, objects=[
            objects.Allocation(
                self.context, resource_provider_uuid=rp.uuid,
                resource_class=rc, consumer_uuid=consumer, used=used,
                project_id=project, user_id='u1', consumer_type='INSTANCE')
            for rc, used in amounts.items()])

    def test_the_facade_runs_on_the_driver(self):
        self.assertEqual(self.driver, facade.get_engine().dialect.driver)

    def test_claims_usages_and_candidates(self):
        cn1 = pf.make_provider(self.context, 'cn1', VCPU=8, MEMORY_MB=4096)
        cn2 = pf.make_provider(self.context, 'cn2', VCPU=4, MEMORY_MB=2048)
        # Several claims on one connection: psycopg prepares a statement
        # on the server from its fifth run on a connection.
        consumers = [uuidutils.generate_uuid() for _ in range(7)]
        for consumer in consumers:
            self._claim(consumer, cn1, VCPU=1, MEMORY_MB=256).replace_all(
                {consumer: None})
        usages = objects.UsageList.get_all_by_resource_provider_uuid(
            self.context, cn1.uuid)
        self.assertEqual({'VCPU': 7, 'MEMORY_MB': 1792},
                         {u.resource_class: u.usage for u in usages})
        by_project = objects.UsageList.get_all_by_project_user(
            self.context, 'p1')
        self.assertEqual({('VCPU', 7), ('MEMORY_MB', 1792)},
                         {(u.resource_class, u.usage) for u in by_project})
        self.assertEqual({7}, {u.consumer_count for u in by_project})

        # The whole-cloud search (SET LOCAL on PostgreSQL, id arrays for
        # the summaries) and the windowed one (limit: expanding lists).
        # cn1 has 1 VCPU left: only cn2 fits.
        group = ac_obj.group(resources={'VCPU': 2, 'MEMORY_MB': 1024})
        for limit in (None, 1):
            found = ac_obj.AllocationCandidates.get_by_requests(
                self.context, [group], limit=limit)
            self.assertEqual(
                [{cn2.uuid: {'VCPU': 2, 'MEMORY_MB': 1024}}],
                [r.allocations for r in found.allocation_requests])
            self.assertEqual(
                {cn2.uuid: {'VCPU': {'capacity': 4, 'used': 0},
                            'MEMORY_MB': {'capacity': 2048, 'used': 0}}},
                {uuid: s.resources
                 for uuid, s in found.provider_summaries.items()})
        # What psycopg is recommended for: the claims' statements were
        # prepared on the server (psycopg2 never prepares).
        self.assertEqual(self.driver == 'psycopg',
                         _prepared_statements(self.context) > 0)

    def test_conflicts_are_translated_and_change_nothing(self):
        cn1 = pf.make_provider(self.context, 'cn1', VCPU=2)
        dup = objects.ResourceProvider(
            self.context, uuid=uuidutils.generate_uuid(), name='cn1')
        self.assertRaises(exception.ResourceProviderExists, dup.create)
        consumer = uuidutils.generate_uuid()
        self._claim(consumer, cn1, VCPU=1).replace_all({consumer: None})
        self.assertRaises(
            exception.ConcurrentUpdateDetected,
            self._claim(consumer, cn1, VCPU=2).replace_all, {consumer: 0})
        self.assertRaises(
            exception.InvalidAllocationCapacityExceeded,
            self._claim(uuidutils.generate_uuid(), cn1, VCPU=2).replace_all)
        [alloc] = objects.AllocationList.get_all_by_resource_provider_uuid(
            self.context, cn1.uuid)
        self.assertEqual((consumer, 1), (alloc.consumer_uuid, alloc.used))

    def test_a_failed_writer_still_rolls_back(self):
        # Readers end with COMMIT on psycopg (backends.postgresql.
        # _keep_prepared_statements); a transaction that wrote must not.
        for _ in range(6):
            self.assertEqual(0, _trait_count(self.context, 'CUSTOM_GONE'))
        self.assertRaises(RuntimeError, _write_then_fail, self.context,
                          'CUSTOM_GONE')
        self.assertEqual(0, _trait_count(self.context, 'CUSTOM_GONE'))

    def test_pure_reads_run_without_a_transaction_block(self):
        first, second = _two_txids(self.context)
        self.assertNotEqual(first, second)
        # A writer, and a reader inside it, keep one transaction.
        first, second = _two_txids_writing(self.context)
        self.assertEqual(first, second)
        self.assertEqual((False, True), (_reading_in_block(self.context),
                                         _writing_in_block(self.context)))
        # So does code on the engine directly.
        with facade.get_engine().connect() as conn:
            self.assertEqual(*[conn.execute(sa.text(
                'SELECT txid_current()')).scalar() for _ in range(2)])

    def test_psycopg_connections_keep_one_plan_per_statement(self):
        # Set on connect and committed: readers (autocommit) and writers
        # (a transaction block) alike, on every pooled connection, and
        # still after a writer rolled back. psycopg2 prepares nothing and
        # keeps the server's default.
        want = ('force_generic_plan' if self.driver == 'psycopg'
                else 'auto')
        self.assertRaises(RuntimeError, _write_then_fail, self.context,
                          'CUSTOM_GONE')
        self.assertEqual([want] * 4, [
            _plan_cache_mode(self.context),
            _plan_cache_mode_writing(self.context),
            facade.get_engine().connect().execute(
                sa.text('SHOW plan_cache_mode')).scalar(),
            _plan_cache_mode(self.context)])

    def test_the_plan_cache_mode_is_an_option(self):
        plain = sa.create_engine(self.url)
        self.addCleanup(plain.dispose)
        with plain.connect() as conn:
            server = conn.execute(sa.text('SHOW plan_cache_mode')).scalar()
        for mode in ('force_custom_plan', 'auto', 'server'):
            self.useFixture(resobj_fixtures.FacadeFixture())
            conf = self.useFixture(resobj_fixtures.ConfFixture())
            conf.config(connection=self.url, group='database',
                        postgresql_plan_cache_mode=mode)
            facade.configure(conf.conf)
            want = server if mode == 'server' or \
                self.driver == 'psycopg2' else mode
            self.assertEqual(want, _plan_cache_mode(self.context), mode)

    def _prepared_after(self, runs, marker):
        """Whether the probe statement is prepared after each run."""
        found = []
        for _ in range(runs):
            _run_probe(self.context, marker)
            found.append(_probe_prepared(self.context, marker))
        return found

    def test_statements_are_prepared_on_their_second_run(self):
        # psycopg's own default waits for the fifth; psycopg2 prepares
        # nothing.
        want = [0, 1, 1] if self.driver == 'psycopg' else [0, 0, 0]
        self.assertEqual(want, self._prepared_after(3, 'probe_default'))

    def test_marked_statements_are_prepared_on_their_first_run(self):
        # Unmarked ones wait for the threshold's second run; psycopg2
        # prepares nothing.
        want = [1, 1] if self.driver == 'psycopg' else [0, 0]
        found = []
        for _ in range(2):
            self.assertEqual(2, _run_marked_probe(self.context, 'marked'))
            found.append(_probe_prepared(self.context, 'marked'))
        self.assertEqual(want, found)

    def test_the_candidate_search_is_prepared_on_its_first_run(self):
        pf.make_provider(self.context, 'cn1', VCPU=4)
        ac_obj.AllocationCandidates.get_by_requests(
            self.context, [ac_obj.group(resources={'VCPU': 1})],
            limit=1)
        want = 1 if self.driver == 'psycopg' else 0
        self.assertEqual(want, _probe_prepared(self.context, 'AS grp'))

    def test_marked_statements_are_not_prepared_without_preparing(self):
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(connection=self.url, group='database',
                    postgresql_prepare_threshold=-1)
        facade.configure(conf.conf)
        self.assertEqual(2, _run_marked_probe(self.context, 'unmarked'))
        self.assertEqual(0, _probe_prepared(self.context, 'unmarked'))

    def test_the_prepare_threshold_is_an_option(self):
        for runs, want in ((0, [1, 1]), (-1, [0, 0]), (5, [0, 0])):
            self.useFixture(resobj_fixtures.FacadeFixture())
            conf = self.useFixture(resobj_fixtures.ConfFixture())
            conf.config(connection=self.url, group='database',
                        postgresql_prepare_threshold=runs)
            facade.configure(conf.conf)
            if self.driver == 'psycopg2':
                want = [0, 0]
            self.assertEqual(want, self._prepared_after(
                2, 'probe_runs_%d' % (runs + 1)), runs)

    def test_the_candidate_search_setting_does_not_outlive_it(self):
        # A pure read, and inside a transaction block (a writer) that
        # goes on after the error or was aborted by it and rolled back.
        for fail in (None, 'python', 'sql'):
            for run in (_nestloop_after,
                        _nestloop_after_writing):
                self.assertEqual(('off', 'on'), run(self.context, fail),
                                 (run, fail))

    def test_a_session_lost_in_a_transaction_is_replaced(self):
        # The server ends the session inside a transaction that wrote
        # nothing: on psycopg the COMMIT hook's test fails and gives way
        # to the rollback, whose failure makes SQLAlchemy discard the
        # connection. The caller sees its own error or resobj's for the
        # lost connection (oslo.db reports the failed rollback), never a
        # raw driver error; the next call gets a new connection.
        self.assertRaises((RuntimeError, exception.ResobjException),
                          _killed_then_fail, self.context, self.url)
        self.assertEqual(0, _trait_count(self.context, 'CUSTOM_ANY'))


class TestOpportunisticDriver(db_base.DBTestCase):
    """The suite's PostgreSQL scenario runs on the driver it is given.

    oslo.db reads its URLs when its provisioning module is imported:
    set any later, psycopg would be named and psycopg2 used.
    """

    scenarios = [s for s in db_base.BACKEND_SCENARIOS
                 if s[0] == 'postgresql']

    def test_the_scenario_runs_on_the_configured_driver(self):
        [url] = [u for u in os.environ['OS_TEST_DBAPI_ADMIN_CONNECTION']
                 .split(';') if u.startswith('postgresql')]
        self.assertEqual(sa.engine.make_url(url).get_driver_name(),
                         self.engine.dialect.driver)
