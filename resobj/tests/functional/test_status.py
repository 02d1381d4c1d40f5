"""resobj-status upgrade check: each check, on every backend.

The checks run on the test's database (``Checks``, without the
command's own facade set-up); ``test_status_command.py`` runs the
command end to end.
"""

import datetime
import io
import os

import fixtures
from oslo_upgradecheck import upgradecheck
from oslo_utils import timeutils
import sqlalchemy as sa

from resobj.cmd import status
from resobj.conf import paths
from resobj.db.api import resource_class as rc_db
from resobj.db.api import service as service_db
from resobj.db import migration
from resobj.db import online_migrations
from resobj.objects import service as service_obj
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import test_compute_node
from resobj.tests.functional import db_base

SUCCESS = upgradecheck.Code.SUCCESS
WARNING = upgradecheck.Code.WARNING
FAILURE = upgradecheck.Code.FAILURE

CURRENT = service_obj.SERVICE_VERSION
# The previous release's version, the oldest that runs beside this one.
PREVIOUS = service_obj.PREVIOUS_RELEASE_SERVICE_VERSION
TOO_OLD = PREVIOUS - 1
# The revision before this release's newest, for a schema left behind.
BEHIND = '0005_inventory_usage'


def ago(seconds):
    return timeutils.utcnow() - datetime.timedelta(seconds=seconds)


class StatusTestCase(db_base.DBTestCase):
    """An empty database per backend; tests sync it as they need."""

    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def setUp(self):
        super().setUp()
        self.conf_fixture = self.useFixture(resobj_fixtures.ConfFixture())
        self.conf = self.conf_fixture.conf
        # oslo.upgradecheck keeps the last command's configuration in a
        # module global (for --json); a test's checks print the table.
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_upgradecheck.upgradecheck.CONF', None))

    def sync(self, revision='head'):
        migration.db_sync(self.engine, revision)
        if revision == 'head':
            rc_db.ensure_sync(self.context)

    def service(self, host, version, seen=None, binary='resobj-compute',
                **values):
        values.update(host=host, binary=binary, version=version,
                      last_seen_up=seen)
        return service_db.create(self.context, values)

    def results(self):
        """{check name: Result}, each check run once."""
        checks = status.Checks(self.conf)
        # _upgrade_checks is where oslo.upgradecheck's subclasses list
        # their checks (its documented extension point).
        return {name: fn(checks) for name, fn in checks._upgrade_checks}

    def assert_result(self, result, code, *fragments):
        self.assertEqual(code, result.code, result.details)
        for fragment in fragments:
            self.assertIn(fragment, result.details)

    def check(self):
        """(exit code, printed table) of the whole check."""
        out = io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', out):
            code = status.Checks(self.conf).check()
        return code, out.getvalue()


class TestSchema(StatusTestCase):

    def test_at_head(self):
        self.sync()
        self.assert_result(self.results()['Database schema'], SUCCESS,
                           migration.head_revision())

    def test_the_database_checked_is_named(self):
        # Without [database] connection: the embedded file, said so.
        self.sync()
        result = self.results()['Database schema']
        self.assertTrue(result.details.startswith(
            'Checked the embedded SQLite database %s (no [database] '
            'connection is configured).' % os.path.join(
                paths.state_dir(self.conf), 'resobj.sqlite')),
            result.details)
        self.conf_fixture.config(
            connection='postgresql+psycopg://resobj:secret@db.example.org/'
            'cloud', group='database')
        result = self.results()['Database schema']
        self.assertTrue(result.details.startswith(
            'Checked postgresql+psycopg://resobj:***@db.example.org/cloud.'),
            result.details)

    def test_no_schema_fails_and_data_checks_wait_for_it(self):
        results = self.results()
        self.assert_result(results['Database schema'], FAILURE,
                           'no schema', 'resobj-manage db sync')
        for name in ('Online data migrations', 'Service versions'):
            self.assert_result(results[name], WARNING, 'Not checked')
        self.assertEqual(FAILURE, self.check()[0])

    def test_behind_fails_naming_both_revisions(self):
        self.sync(BEHIND)
        results = self.results()
        self.assert_result(
            results['Database schema'], FAILURE,
            'at revision %s; this release needs %s'
            % (BEHIND, migration.head_revision()), 'resobj-manage db sync')
        # The counts need the newest schema; the services table has
        # been there since the first revision.
        self.assert_result(results['Online data migrations'], WARNING,
                           'Not checked', BEHIND)
        self.assert_result(results['Service versions'], SUCCESS)

    def test_newer_unknown_revision_fails_naming_it(self):
        self.sync()
        with self.engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = "
                                 "'9999_from_a_newer_release'"))
        results = self.results()
        self.assert_result(results['Database schema'], FAILURE,
                           '9999_from_a_newer_release', 'newer release')
        # A newer schema only adds to this release's: the rest is read.
        self.assert_result(results['Online data migrations'], SUCCESS)


class TestOnlineMigrations(StatusTestCase):

    def test_nothing_left(self):
        self.sync()
        self.assert_result(self.results()['Online data migrations'],
                           SUCCESS, 'No rows left')

    def test_rows_left_are_counted_per_migration(self):
        self.sync()
        for n in range(3):
            test_compute_node.insert_legacy_row(
                self.context, hypervisor_hostname='n%d' % n)
        result = self.results()['Online data migrations']
        self.assert_result(
            result, FAILURE, 'compute_node_uuids 3',
            'compute_node_allocation_ratios 3',
            'resobj-manage db online_data_migrations')
        # Only the migrations with rows left are named.
        self.assertNotIn('inventory_usage', result.details)
        # The check changed nothing: the same again.
        self.assertEqual(result.details,
                         self.results()['Online data migrations'].details)
        self.assertEqual(FAILURE, self.check()[0])
        online_migrations.run(self.context,
                              online_migrations.registered(self.conf))
        self.assert_result(self.results()['Online data migrations'],
                           SUCCESS)


class TestServiceVersions(StatusTestCase):

    def setUp(self):
        super().setUp()
        self.sync()

    def test_current_services_pass(self):
        self.service('c1', CURRENT, seen=ago(5))
        self.assert_result(self.results()['Service versions'], SUCCESS,
                           'No live service runs a version older')

    def test_previous_release_is_supported_and_named(self):
        # It runs beside this release, but the upgrade is not finished:
        # a warning naming it.
        self.service('c1', CURRENT, seen=ago(5))
        self.service('c2', PREVIOUS, seen=ago(5))
        result = self.results()['Service versions']
        self.assert_result(
            result, WARNING, "1 live services still run the previous "
            "release's service version %d" % PREVIOUS,
            'resobj-compute on c2 (version %d)' % PREVIOUS)
        self.assertNotIn('c1', result.details)
        # Once it is down, nothing is left to upgrade.
        self.service('c2-gone', PREVIOUS, seen=ago(3600))
        service_db.update(self.context, service_db.get_by_host_and_binary(
            self.context, 'c2', 'resobj-compute')['id'],
            {'last_seen_up': ago(3600)})
        self.assert_result(self.results()['Service versions'], SUCCESS)

    def test_previous_and_too_old_together_fail_naming_both(self):
        self.service('c2', PREVIOUS, seen=ago(5))
        self.service('old', TOO_OLD, seen=ago(5))
        self.assert_result(
            self.results()['Service versions'], FAILURE,
            'resobj-compute on old (version %d)' % TOO_OLD,
            'resobj-compute on c2 (version %d)' % PREVIOUS)

    def test_a_live_service_too_old_fails(self):
        self.service('c1', CURRENT, seen=ago(5))
        self.service('old', TOO_OLD, seen=ago(5))
        result = self.results()['Service versions']
        self.assert_result(
            result, FAILURE, '1 live services',
            'resobj-compute on old (version %d)' % TOO_OLD)
        self.assertNotIn('c1', result.details)
        self.assertEqual(FAILURE, self.check()[0])

    def test_dead_services_too_old_are_a_warning(self):
        self.service('gone', TOO_OLD, seen=ago(3600))
        # Reporting, but forced down by the operator.
        self.service('fenced', TOO_OLD, seen=ago(5), forced_down=True)
        result = self.results()['Service versions']
        self.assert_result(
            result, WARNING, '2 services older than version %d' % PREVIOUS,
            'resobj-compute on fenced', 'resobj-compute on gone',
            'service_down_time')
        self.assertEqual(WARNING, self.check()[0])

    def test_a_service_that_never_reported_is_live(self):
        # Registered an hour ago by code from before services reported:
        # it holds the cloud's minimum version, so it is no dead service.
        self.service('silent', TOO_OLD, created_at=ago(3600))
        self.assert_result(self.results()['Service versions'], FAILURE,
                           'resobj-compute on silent')

    def test_service_down_time_decides_who_is_live(self):
        self.service('old', TOO_OLD, seen=ago(120))
        self.assert_result(self.results()['Service versions'], WARNING,
                           'for 60 seconds')
        self.conf_fixture.config(service_down_time=600)
        self.assert_result(self.results()['Service versions'], FAILURE,
                           'resobj-compute on old')

    def test_live_and_dead_together_fail_naming_both(self):
        self.service('live', TOO_OLD, seen=ago(5))
        self.service('dead', TOO_OLD, seen=ago(3600), binary='resobj-api')
        self.assert_result(
            self.results()['Service versions'], FAILURE,
            'resobj-compute on live', 'resobj-api on dead')

    def test_deleted_services_do_not_count(self):
        row = self.service('old', TOO_OLD, seen=ago(5))
        service_db.destroy(self.context, row['id'])
        self.assert_result(self.results()['Service versions'], SUCCESS)

    def test_names_ten_then_counts(self):
        for n in range(12):
            self.service('h%02d' % n, TOO_OLD, seen=ago(5))
        result = self.results()['Service versions']
        self.assert_result(result, FAILURE, '12 live services',
                           'on h09 ', 'and 2 more')
        self.assertNotIn('h10', result.details)


class TestServicesListing(StatusTestCase):

    def test_every_service_with_its_version_and_state(self):
        self.sync()
        self.service('c1', CURRENT, seen=ago(5))
        self.service('c2', PREVIOUS, seen=ago(5), disabled=True)
        self.service('gone', PREVIOUS, seen=datetime.datetime(
            2026, 1, 2, 3, 4, 5))
        self.service('fenced', CURRENT, seen=ago(5), forced_down=True)
        self.service('silent', PREVIOUS)
        self.service('ctl', CURRENT, seen=ago(5), binary='resobj-conductor')
        row = self.service('deleted', PREVIOUS, seen=ago(5))
        service_db.destroy(self.context, row['id'])
        lines = status.Checks(self.conf).services_listing().splitlines()
        self.assertEqual(
            'Services (this release runs service version %d):' % CURRENT,
            lines[0])
        self.assertEqual(
            [['Binary', 'Host', 'Version', 'State'],
             ['resobj-compute', 'c1', str(CURRENT), 'up'],
             ['resobj-compute', 'c2', str(PREVIOUS), 'up, disabled'],
             ['resobj-compute', 'fenced', str(CURRENT), 'forced down'],
             ['resobj-compute', 'gone', str(PREVIOUS),
              'down (last report 2026-01-02 03:04:05)'],
             ['resobj-compute', 'silent', str(PREVIOUS),
              'up (never reported)'],
             ['resobj-conductor', 'ctl', str(CURRENT), 'up']],
            [line.split(None, 3) for line in lines[1:]])
        # Columns line up.
        self.assertEqual({lines[1].index('Host')},
                         {line.index(' c') + 1 for line in lines[2:4]})

    def test_none_registered(self):
        self.sync()
        self.assertEqual('  none registered', status.Checks(
            self.conf).services_listing().splitlines()[1])


class TestVersionCaps(StatusTestCase):

    def setUp(self):
        super().setUp()
        self.sync()

    def cap(self, value):
        self.conf_fixture.config(conductor=value, group='upgrade_levels')

    def test_no_cap(self):
        self.service('c1', PREVIOUS, seen=ago(5))
        self.assert_result(self.results()['Upgrade levels'], SUCCESS,
                           'is not set')

    def test_a_cap_while_every_live_service_is_current_warns(self):
        self.cap('1.0')
        self.service('c1', CURRENT, seen=ago(5))
        # An old service that stopped reporting needs no cap.
        self.service('gone', PREVIOUS, seen=ago(3600))
        self.assert_result(self.results()['Upgrade levels'], WARNING,
                           'lift the cap')
        code, out = self.check()
        self.assertEqual(WARNING, code, out)

    def test_a_cap_while_old_services_live_passes(self):
        self.cap('1.0')
        self.service('c1', CURRENT, seen=ago(5))
        self.service('c2', PREVIOUS, seen=ago(5))
        self.assert_result(self.results()['Upgrade levels'], SUCCESS,
                           'resobj-compute on c2')

    def test_a_cap_newer_than_known_fails(self):
        self.cap('1.5')
        self.service('c2', PREVIOUS, seen=ago(5))
        self.assert_result(self.results()['Upgrade levels'], FAILURE,
                           'conductor = 1.5 is newer',
                           '(%s)' % status.conductor_rpcapi.VERSION)

    def test_a_cap_that_is_no_version_fails(self):
        self.cap('latest')
        self.assert_result(self.results()['Upgrade levels'], FAILURE,
                           'latest is not a version', 'nor auto')

    def test_auto_passes_for_either_api(self):
        self.service('c2', PREVIOUS, seen=ago(5))
        for api in ('conductor', 'compute'):
            self.conf_fixture.config(group='upgrade_levels', **{api: 'auto'})
            self.assert_result(self.results()['Upgrade levels'], SUCCESS,
                               '[upgrade_levels] %s = auto' % api)


class TestOutput(StatusTestCase):

    def test_oslo_upgradecheck_table(self):
        self.sync()
        self.service('c1', CURRENT, seen=ago(5))
        code, out = self.check()
        self.assertEqual(SUCCESS, code, out)
        lines = out.splitlines()
        border = lines[0]
        self.assertRegex(border, r'^\+-+\+$')
        self.assertEqual({len(border)}, {len(line) for line in lines})
        self.assertEqual('| Upgrade Check Results', lines[1][:23])
        # One cell per check, in order: name, result, then details.
        cells = '\n'.join(lines[2:]).split(border)
        self.assertEqual('', cells.pop(0).strip())
        self.assertEqual('', cells.pop().strip())
        self.assertEqual(
            [['Check: Database schema', 'Result: Success'],
             ['Check: Online data migrations', 'Result: Success'],
             ['Check: Service versions', 'Result: Success'],
             ['Check: Upgrade levels', 'Result: Success']],
            [[line.strip('| ') for line in cell.strip().splitlines()[:2]]
             for cell in cells])
        self.assertEqual(
            '| Details: No rows left to migrate.',
            cells[1].strip().splitlines()[2].rstrip('| '))
