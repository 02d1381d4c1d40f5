"""resobj-manage end to end, in-process, on a temporary state directory."""

import io
import json
import os

import fixtures

from resobj.cmd import manage
from resobj import context
from resobj.db import migration
from resobj.objects import fingerprint
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional.db import test_compute_node
from resobj.tests.functional.db import test_facade


def migrations_table(out):
    """{migration: [total needed, completed]} from online_data_migrations."""
    rows = [[cell.strip() for cell in line.strip('|').split('|')]
            for line in out.splitlines() if line.startswith('|')]
    if rows[0] != ['Migration', 'Total Needed', 'Completed']:
        raise AssertionError('not a migrations table:\n%s' % out)
    return {row[0]: row[1:] for row in rows[1:]}


class ManageTestBase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(resobj_fixtures.FacadeFixture())
        self.tmp = self.useFixture(
            resobj_fixtures.CommandEnvironment()).path

    def run_manage(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', err))
        code = manage.main(list(argv))
        return code, out.getvalue(), err.getvalue()

    def write_conf(self, text):
        path = os.path.join(self.tmp, 'resobj.conf')
        with open(path, 'w') as f:
            f.write(text)
        return path

    def assert_one_line_error(self, result, *fragments):
        code, out, err = result
        self.assertEqual(1, code)
        self.assertEqual('', out)
        lines = err.splitlines()
        self.assertEqual(1, len(lines), err)
        self.assertTrue(lines[0].startswith('resobj-manage: error: '))
        self.assertNotIn('Traceback', err)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def _again(self, *argv):
        # Each command is its own process, with its own facade.
        self.useFixture(resobj_fixtures.FacadeFixture())
        return self.run_manage(*argv)


class TestManage(ManageTestBase):

    def test_db_sync_creates_the_embedded_database(self):
        code, out, err = self.run_manage('db', 'sync')
        self.assertEqual(0, code, err)
        path = os.path.join(self.tmp, 'state', 'resobj', 'resobj.sqlite')
        self.assertTrue(os.path.exists(path))
        self.assertIn('is at revision %s' % migration.head_revision(), out)
        self.assertNotIn('timeout', out)
        self.assertIn('(21 standard resource classes and', out)
        # A second sync adds nothing.
        code, out, err = self._again('db', 'sync')
        self.assertEqual(0, code, err)
        self.assertIn('(0 standard resource classes and 0 standard traits '
                      'added)', out)

    def test_db_version_does_not_create_the_database(self):
        code, out, err = self.run_manage('db', 'version')
        self.assertEqual(0, code, err)
        self.assertTrue(out.startswith('empty: no database at sqlite:'), out)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, 'state')))

    def test_db_version_after_sync(self):
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        # A second command is a second process, with its own facade.
        self.useFixture(resobj_fixtures.FacadeFixture())
        code, out, err = self.run_manage('db', 'version')
        self.assertEqual(0, code, err)
        self.assertTrue(out.startswith(migration.head_revision()), out)

    def test_objects_list(self):
        code, out, err = self.run_manage('objects', 'list')
        self.assertEqual(0, code, err)
        lines = out.splitlines()
        self.assertEqual(['Object', 'Version', 'Fingerprint'],
                         lines[0].split())
        table = {line.split()[0]: line.split()[1:] for line in lines[1:]}
        for name, value in fingerprint.fingerprints().items():
            self.assertEqual([value.split('-')[0], value], table[name])

    def test_objects_fingerprints_json(self):
        code, out, err = self.run_manage('objects', 'fingerprints')
        self.assertEqual(0, code, err)
        self.assertEqual(fingerprint.fingerprints(), json.loads(out))

    def _pins(self, **changed):
        pins = fingerprint.fingerprints()
        for name, value in changed.items():
            if value is None:
                del pins[name]
            else:
                pins[name] = value
        path = os.path.join(self.tmp, 'pins.json')
        with open(path, 'w') as f:
            json.dump(pins, f)
        return path

    def test_objects_fingerprints_check_unchanged(self):
        code, out, err = self.run_manage('objects', 'fingerprints',
                                         '--check', self._pins())
        self.assertEqual(0, code, err)
        self.assertEqual('%d pinned objects unchanged.\n'
                         % len(fingerprint.fingerprints()), out)

    def test_objects_fingerprints_check_changed(self):
        today = fingerprint.fingerprints()
        path = self._pins(
            Instance=today['Instance'].split('-')[0] + '-' + '0' * 32,
            ComputeNode='1.5-d4bb1fa54beed638d55317c4a8fda4d1',
            Service='9.0-' + '1' * 32, Gone='1.0-' + '2' * 32, User=None)
        code, out, err = self.run_manage('objects', 'fingerprints',
                                         '--check', path)
        self.assertEqual(1, code, err)
        rows = {line.split()[0]: line.split(None, 3)[1:]
                for line in out.splitlines()[1:5]}
        self.assertEqual(['Object', 'Pinned', 'Current', 'What', 'to', 'do'],
                         out.splitlines()[0].split())
        self.assertEqual(['1.5-d4bb1fa54beed638d55317c4a8fda4d1',
                          today['ComputeNode'],
                          'new version: read its version history, adapt, '
                          'then re-pin'], rows['ComputeNode'])
        self.assertEqual(['1.0-' + '2' * 32, '-',
                          'gone from resobj: stop using it, then re-pin'],
                         rows['Gone'])
        self.assertIn('changed without a version bump: a resobj bug',
                      rows['Instance'][2])
        self.assertEqual(today['Instance'], rows['Instance'][1])
        self.assertIn('older than pinned', rows['Service'][2])
        self.assertIn('4 of %d pinned objects changed. To re-pin: '
                      'resobj-manage objects fingerprints > %s'
                      % (len(today), path), out)
        self.assertTrue(out.endswith(
            'Not pinned (pin them if you use them): User\n'), out)

    def test_objects_fingerprints_check_new_objects_only(self):
        # An object resobj added is not a change to what was pinned.
        code, out, err = self.run_manage('objects', 'fingerprints',
                                         '--check', self._pins(User=None))
        self.assertEqual(0, code, err)
        self.assertIn('Not pinned (pin them if you use them): User', out)

    def test_objects_fingerprints_check_unreadable(self):
        bad = os.path.join(self.tmp, 'bad.json')
        for content, reason in (('[1]', 'not a JSON object'),
                                ('{"Service": "1.x"}', "Service: '1.x' is "
                                 "not a fingerprint"),
                                ('{', 'Expecting property name')):
            with open(bad, 'w') as f:
                f.write(content)
            code, out, err = self.run_manage('objects', 'fingerprints',
                                             '--check', bad)
            self.assertEqual(2, code)
            self.assertEqual('', out)
            self.assertIn('resobj-manage: error: cannot check %s: ' % bad,
                          err)
            self.assertIn(reason, err)
        code, out, err = self.run_manage(
            'objects', 'fingerprints', '--check',
            os.path.join(self.tmp, 'missing.json'))
        self.assertEqual(2, code)
        self.assertIn('No such file', err)

    def test_unknown_option_in_config_file(self):
        path = self.write_conf('[database]\nconection = sqlite://\n')
        self.assert_one_line_error(
            self.run_manage('--config-file', path, 'db', 'sync'),
            '[database] conection', path)

    def test_bad_option_value(self):
        path = self.write_conf('[database]\nmax_pool_size = lots\n')
        self.assert_one_line_error(
            self.run_manage('--config-file', path, 'db', 'sync'),
            '[database] max_pool_size')

    def test_missing_config_file(self):
        self.assert_one_line_error(
            self.run_manage('--config-file', '/nonexistent.conf', 'db',
                            'sync'),
            '/nonexistent.conf')

    def test_unwritable_state_directory(self):
        blocker = os.path.join(self.tmp, 'a-file')
        open(blocker, 'w').close()
        path = self.write_conf('[DEFAULT]\nstate_dir = %s/x\n' % blocker)
        self.assert_one_line_error(
            self.run_manage('--config-file', path, 'db', 'sync'),
            'State directory %s/x is not writable' % blocker)

    def test_unreachable_database(self):
        path = self.write_conf(
            '[database]\nconnection = postgresql+psycopg2://u:pw@'
            '127.0.0.1:%d/resobj\n' % test_facade.closed_port())
        self.assert_one_line_error(
            self.run_manage('--config-file', path, 'db', 'sync'),
            'cannot use the database at postgresql+psycopg2://u:***@')

    def _synced_with_legacy_nodes(self, count):
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        ctx = context.get_admin_context()
        for n in range(count):
            test_compute_node.insert_legacy_row(
                ctx, hypervisor_hostname='n%d' % n)

    def test_online_data_migrations_nothing_to_do(self):
        self.assertEqual(0, self.run_manage('db', 'sync')[0])
        code, out, err = self._again('db', 'online_data_migrations')
        self.assertEqual(0, code, err)
        self.assertEqual([
            '+--------------------------------+--------------+-----------+',
            '| Migration                      | Total Needed | Completed |',
            '+--------------------------------+--------------+-----------+',
            '| compute_node_uuids             |            0 |         0 |',
            '| compute_node_allocation_ratios |            0 |         0 |',
            '| migration_uuids_and_types      |            0 |         0 |',
            '| compute_node_inventories       |            0 |         0 |',
            '| inventory_usage                |            0 |         0 |',
            '| allocation_owners              |            0 |         0 |',
            '+--------------------------------+--------------+-----------+'],
            out.splitlines())

    def test_online_data_migrations_max_count_then_resume(self):
        self._synced_with_legacy_nodes(3)
        code, out, err = self._again('db', 'online_data_migrations',
                                     '--max-count', '2')
        self.assertEqual(1, code, out + err)
        self.assertIn('run the command again', out)
        self.assertEqual(['2', '2'], migrations_table(out)[
            'compute_node_uuids'])
        code, out, err = self._again('db', 'online_data_migrations')
        self.assertEqual(0, code, out + err)
        table = migrations_table(out)
        self.assertEqual(['1', '1'], table['compute_node_uuids'])
        self.assertEqual(['3', '3'], table['compute_node_allocation_ratios'])

    def test_online_data_migrations_progress_per_batch(self):
        self._synced_with_legacy_nodes(5)
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.db.online_migrations.BATCH_SIZE', 2))
        code, out, err = self._again('db', 'online_data_migrations')
        self.assertEqual(0, code, out + err)
        # Rounds of 2 rows per migration: 2, 2, then the last 1, for
        # each of the three migrations the 5 legacy nodes need (uuids,
        # ratios, inventories).
        self.assertEqual(
            ['Batch 1: 6 rows found, 6 migrated so far',
             'Batch 2: 12 rows found, 12 migrated so far',
             'Batch 3: 15 rows found, 15 migrated so far'],
            [line for line in out.splitlines() if line.startswith('Batch')])
        self.assertEqual(['5', '5'], migrations_table(out)[
            'compute_node_inventories'])

    def test_online_data_migrations_one_batch_prints_no_progress(self):
        self._synced_with_legacy_nodes(2)
        code, out, err = self._again('db', 'online_data_migrations')
        self.assertEqual(0, code, out + err)
        self.assertNotIn('Batch', out)
        self.assertEqual(['2', '2'], migrations_table(out)[
            'compute_node_uuids'])

    def test_online_data_migrations_rejects_bad_max_count(self):
        self.assert_one_line_error(
            self.run_manage('db', 'online_data_migrations', '--max-count',
                            '0'),
            '--max-count must be at least 1')


class TestManageCapacity(ManageTestBase):
    """resobj-manage capacity on the embedded database."""

    def _synced(self):
        code, out, err = self.run_manage('db', 'sync')
        self.assertEqual(0, code, err)
        return context.get_admin_context()

    def test_capacity_without_database(self):
        self.assert_one_line_error(self.run_manage('capacity'),
                                   'no database at sqlite:', 'db sync')
        self.assertFalse(os.path.exists(os.path.join(self.tmp, 'state')))

    def test_capacity_of_an_empty_database(self):
        self._synced()
        code, out, err = self._again('capacity')
        self.assertEqual(0, code, err)
        self.assertEqual([
            'Provider  Class  Total  Reserved  Ratio  Capacity  Used  Free'
            '  Sharing',
            '',
            'Cloud totals, each provider counted once (0 providers, 0 '
            'sharing):',
            'Class  Total  Reserved  Capacity  Used  Free'],
            out.splitlines())
        code, out, err = self._again('capacity', '--format', 'json')
        self.assertEqual(0, code, err)
        self.assertEqual({'providers': [], 'totals': []}, json.loads(out))

    def _shared_pool(self, ctx):
        # One 10 TB pool shared by two nodes; the second node is idle.
        pool = fx.provider(ctx, 'pool')
        fx.inventory(ctx, pool, 2, total=10000, reserved=1000)
        fx.add_trait(ctx, pool, 'MISC_SHARES_VIA_AGGREGATE')
        fx.add_to_aggregate(ctx, pool, 'agg')
        nodes = [fx.provider(ctx, 'node-a'), fx.provider(ctx, 'node-b')]
        for node in nodes:
            fx.add_to_aggregate(ctx, node, 'agg')
            fx.inventory(ctx, node, 0, total=8, allocation_ratio=2.0)
        c = fx.consumer(ctx)
        fx.allocate(ctx, (nodes[0], c, 0, 3), (pool, c, 2, 40))

    def test_capacity_table(self):
        self._shared_pool(self._synced())
        code, out, err = self._again('capacity')
        self.assertEqual(0, code, err)
        self.assertEqual([
            'Provider  Class    Total  Reserved  Ratio  Capacity  Used  Free'
            '  Sharing',
            'node-a    VCPU     8      0         2      16        3     13'
            '    uses: pool',
            'node-b    VCPU     8      0         2      16        0     16'
            '    uses: pool',
            'pool      DISK_GB  10000  1000      1      9000      40    8960'
            '  shares with: node-a, node-b',
            '',
            'Cloud totals, each provider counted once (3 providers, 1 '
            'sharing):',
            'Class    Total  Reserved  Capacity  Used  Free',
            'DISK_GB  10000  1000      9000      40    8960',
            'VCPU     16     0         32        3     29'],
            out.splitlines())

    def test_capacity_json(self):
        self._shared_pool(self._synced())
        code, out, err = self._again('capacity', '--format=json')
        self.assertEqual(0, code, err)
        report = json.loads(out)
        self.assertEqual(
            [{'resource_class': 'DISK_GB', 'total': 10000, 'reserved': 1000,
              'capacity': 9000, 'used': 40, 'free': 8960},
             {'resource_class': 'VCPU', 'total': 16, 'reserved': 0,
              'capacity': 32, 'used': 3, 'free': 29}], report['totals'])
        pool = report['providers'][2]
        self.assertEqual(('pool', True), (pool['name'], pool['sharing']))
        self.assertEqual(sorted(p['uuid'] for p in report['providers'][:2]),
                         pool['shares_with'])

    def test_candidates_explain(self):
        ctx = self._synced()
        # Two nodes with 8 VCPU (class id 0) each.
        for name in ('node-a', 'node-b'):
            fx.inventory(ctx, fx.provider(ctx, name), 0, total=8)
        code, out, err = self._again('candidates', 'explain',
                                     'resources=VCPU:9')
        self.assertEqual(0, code, err)
        lines = out.splitlines()
        self.assertEqual(['group (unsuffixed):',
                          '         2  providers',
                          '         0  capacity for VCPU:9'], lines[:3])
        self.assertIn('  closest: node-a (', out)
        self.assertEqual('first empty step: unsuffixed group: capacity for '
                         'VCPU:9', lines[-1])
        code, out, err = self._again('candidates', 'explain', '--format',
                                     'json', 'resources=VCPU:8')
        self.assertEqual(0, code, err)
        found = json.loads(out)
        self.assertEqual((None, 2), (found['first_empty'],
                                     found['candidates']))

    def test_candidates_explain_bad_query(self):
        self._synced()
        self.assert_one_line_error(
            self._again('candidates', 'explain', 'resources=VCPU:x'),
            'bad query', 'positive integer')
        self.assert_one_line_error(
            self._again('candidates', 'explain', 'resources=VCPU:1'
                        '&required_X=CUSTOM_A'), "bad group(s) - ['_X']")
        self.assert_one_line_error(
            self._again('candidates', 'explain', '--microversion', '2.0',
                        'resources=VCPU:1'), 'bad --microversion')
