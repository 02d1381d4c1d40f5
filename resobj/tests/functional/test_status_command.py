"""resobj-status and resobj-manage end to end, in-process, on every backend.

Each command configures a facade of its own from a configuration file,
as in its own process: on PostgreSQL and MySQL the file names the
test's database; on SQLite, whose test database lives in memory, a
file of the test's.
"""

import io
import json
import os

import fixtures
import sqlalchemy as sa

from resobj.cmd import manage
from resobj.cmd import status
from resobj import context
from resobj.db import migration
from resobj.objects import service as service_obj
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import test_compute_node
from resobj.tests.functional.db import test_facade
from resobj.tests.functional import db_base
from resobj.tests.functional import test_manage


class CommandFixture(fixtures.Fixture):
    """Runs commands in-process, reading only the configuration given."""

    def _setUp(self):
        self.tmp = self.useFixture(
            resobj_fixtures.CommandEnvironment()).path
        # oslo.upgradecheck keeps the last command's configuration in a
        # module global.
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_upgradecheck.upgradecheck.CONF', None))

    def write_conf(self, text, name='resobj.conf'):
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def run(self, main, *argv):
        """(exit code, stdout, stderr) of ``main(argv)``.

        Each run is a process of its own, with its own facade.
        """
        self.useFixture(resobj_fixtures.FacadeFixture())
        out, err = io.StringIO(), io.StringIO()
        with fixtures.MonkeyPatch('sys.stdout', out), \
                fixtures.MonkeyPatch('sys.stderr', err):
            code = main(list(argv))
        return code, out.getvalue(), err.getvalue()


def checks(out):
    """{check name: (result code, details)} from ``--json`` output."""
    report = json.loads(out)
    return {c['check']: (c['result'], c['details'])
            for c in report['checks']}


class TestStatusCommand(db_base.DBTestCase):

    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def setUp(self):
        super().setUp()
        self.cmd = self.useFixture(CommandFixture())
        if self.backend == 'sqlite':
            path = os.path.join(self.cmd.tmp, 'db.sqlite')
            # An empty database, as the other backends' fixtures give: an
            # empty file is one to SQLite.
            open(path, 'w').close()
            url = 'sqlite:///%s' % path
        else:
            url = self.engine.url.render_as_string(hide_password=False)
        self.cmd_url = url
        self.conf = self.cmd.write_conf(
            '[database]\nconnection = %s\n' % url)

    def status(self, *extra, conf=None):
        return self.cmd.run(status.main, '--config-file', conf or self.conf,
                            *extra, 'upgrade', 'check', '--json')

    def manage(self, *argv):
        return self.cmd.run(manage.main, '--config-file', self.conf, *argv)

    def test_before_and_after_db_sync(self):
        code, out, err = self.status()
        self.assertEqual(2, code, out + err)
        self.assertEqual(2, checks(out)['Database schema'][0])
        code, out, err = self.manage('db', 'sync')
        self.assertEqual(0, code, out + err)
        code, out, err = self.status()
        self.assertEqual(0, code, out + err)
        self.assertEqual('', err)
        self.assertEqual(
            {'Database schema': 0, 'Online data migrations': 0,
             'Service versions': 0, 'Upgrade levels': 0},
            {name: result[0] for name, result in checks(out).items()})
        self.assertIn(migration.head_revision(),
                      checks(out)['Database schema'][1])

    def test_migrations_left_then_migrated(self):
        self.assertEqual(0, self.manage('db', 'sync')[0])
        ctx = context.get_admin_context()
        for n in range(3):
            test_compute_node.insert_legacy_row(
                ctx, hypervisor_hostname='n%d' % n)
        code, out, err = self.status()
        self.assertEqual(2, code, out + err)
        self.assertIn('compute_node_uuids 3',
                      checks(out)['Online data migrations'][1])
        code, out, err = self.manage('db', 'online_data_migrations')
        self.assertEqual(0, code, out + err)
        table = test_manage.migrations_table(out)
        self.assertEqual(['3', '3'], table['compute_node_uuids'])
        self.assertEqual(['3', '3'], table['compute_node_inventories'])
        self.assertEqual(['0', '0'], table['inventory_usage'])
        code, out, err = self.status()
        self.assertEqual(0, code, out + err)

    def test_the_cap_comes_from_the_configuration(self):
        self.assertEqual(0, self.manage('db', 'sync')[0])
        levels = self.cmd.write_conf('[upgrade_levels]\nconductor = 9.0\n',
                                     name='levels.conf')
        code, out, err = self.status('--config-file', levels)
        self.assertEqual(2, code, out + err)
        self.assertIn('conductor = 9.0 is newer',
                      checks(out)['Upgrade levels'][1])

    def test_table_without_json(self):
        self.assertEqual(0, self.manage('db', 'sync')[0])
        code, out, err = self.cmd.run(status.main, '--config-file',
                                      self.conf, 'upgrade', 'check')
        self.assertEqual(0, code, out + err)
        self.assertEqual('| Upgrade Check Results', out.splitlines()[1][:23])
        self.assertEqual(4, out.count('Result: Success'), out)
        # Then the services, none yet.
        self.assertEqual(
            ['Services (this release runs service version %d):'
             % service_obj.SERVICE_VERSION, '  none registered'],
            out.splitlines()[-2:])

    def test_the_database_checked_is_named(self):
        self.assertEqual(0, self.manage('db', 'sync')[0])
        code, out, err = self.status()
        self.assertEqual(0, code, out + err)
        url = sa.engine.make_url(self.cmd_url).render_as_string(
            hide_password=True)
        self.assertTrue(checks(out)['Database schema'][1].startswith(
            'Checked %s.' % url))


class TestStatusErrors(base.TestCase):
    """What stops the checks: one line on stderr, exit status 255."""

    def setUp(self):
        super().setUp()
        self.cmd = self.useFixture(CommandFixture())

    def assert_one_line_error(self, result, *fragments):
        code, out, err = result
        self.assertEqual(255, code, out + err)
        self.assertEqual('', out)
        lines = err.splitlines()
        self.assertEqual(1, len(lines), err)
        self.assertTrue(lines[0].startswith('resobj-status: error: '), err)
        self.assertNotIn('Traceback', err)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def run_status(self, *argv):
        return self.cmd.run(status.main, *argv)

    def test_unreachable_database(self):
        path = self.cmd.write_conf(
            '[database]\nconnection = postgresql+psycopg2://u:pw@'
            '127.0.0.1:%d/resobj\n' % test_facade.closed_port())
        self.assert_one_line_error(
            self.run_status('--config-file', path, 'upgrade', 'check'),
            'cannot use the database at postgresql+psycopg2://u:***@')

    def test_no_embedded_database_is_not_created(self):
        self.assert_one_line_error(
            self.run_status('upgrade', 'check'),
            'no database file %s' % os.path.join(self.cmd.tmp, 'state'),
            'resobj-manage db sync')
        self.assertFalse(os.path.exists(os.path.join(self.cmd.tmp,
                                                     'state')))

    def test_the_embedded_database_is_named_as_such(self):
        # No configuration file: the embedded database, which resobj-api
        # created; the check says which it read.
        self.assertEqual(0, self.cmd.run(manage.main, 'db', 'sync')[0])
        code, out, err = self.run_status('upgrade', 'check', '--json')
        self.assertEqual(0, code, out + err)
        self.assertIn(
            'Checked the embedded SQLite database %s (no [database] '
            'connection is configured).' % os.path.join(
                self.cmd.tmp, 'state', 'resobj', 'resobj.sqlite'),
            checks(out)['Database schema'][1])

    def test_unknown_option_in_config_file(self):
        path = self.cmd.write_conf('[upgrade_levels]\nconductr = 1.0\n')
        self.assert_one_line_error(
            self.run_status('--config-file', path, 'upgrade', 'check'),
            '[upgrade_levels] conductr', path)

    def test_missing_config_file(self):
        self.assert_one_line_error(
            self.run_status('--config-file', '/nonexistent.conf', 'upgrade',
                            'check'),
            '/nonexistent.conf')

    def test_messaging_options_are_known(self):
        path = self.cmd.write_conf(
            '[DEFAULT]\ntransport_url = rabbit://u:p@127.0.0.1:1/\n'
            '[oslo_messaging_rabbit]\nheartbeat_timeout_threshold = 30\n')
        # Past the configuration, to the missing database.
        self.assert_one_line_error(
            self.run_status('--config-file', path, 'upgrade', 'check'),
            'no database file')
