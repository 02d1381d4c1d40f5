"""The test suite's backend decisions and CI's reading of a run.

``resobj.tests.backends`` decides whether a PostgreSQL, MariaDB or
RabbitMQ test runs, skips with the reason, or (CI) fails;
``tools/check_test_results.py`` reads a run's subunit stream and says
whether it is what CI requires, for the full run and for a fresh
machine's run.
"""

import ast
import io
import os
import socket
import unittest

import fixtures
import subunit

from resobj.tests import backends
from resobj.tests import base


def _closed_port():
    # Bound then closed: nothing listens there, connections are refused.
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class TestProbes(base.TestCase):

    def test_refused_database_names_the_account_and_cause(self):
        port = _closed_port()
        reason = backends.probe_database(
            'postgresql+psycopg://someone:pw@127.0.0.1:%d/postgres' % port)
        self.assertIn('cannot connect as someone@127.0.0.1:%d with '
                      'postgresql+psycopg' % port, reason)
        self.assertNotIn('pw', reason.replace('postgresql', ''))

    def test_refused_mysql(self):
        port = _closed_port()
        reason = backends.probe_database(
            'mysql+pymysql://someone:pw@127.0.0.1:%d/' % port)
        self.assertIn('cannot connect as someone@127.0.0.1:%d' % port,
                      reason)
        self.assertIn("Can't connect", reason)

    def test_missing_driver(self):
        # MySQLdb (mysqlclient) is not a test requirement.
        reason = backends.probe_database(
            'mysql+mysqldb://someone:pw@127.0.0.1:%d/' % _closed_port())
        self.assertIn('no driver for mysql+mysqldb installed', reason)

    def test_sqlite_is_usable(self):
        self.assertIsNone(backends.probe_database('sqlite://'))

    def test_refused_broker(self):
        port = _closed_port()
        reason = backends.probe_rabbitmq(
            'rabbit://guest:secret@127.0.0.1:%d/' % port)
        self.assertIn('cannot connect to amqp://guest:**@127.0.0.1:%d'
                      % port, reason)
        self.assertNotIn('secret', reason)


class TestDecision(base.TestCase):

    def setUp(self):
        super().setUp()
        backends.unavailable_reason.cache_clear()
        self.addCleanup(backends.unavailable_reason.cache_clear)
        self.calls = []

        def refuse(url):
            self.calls.append(url)
            return 'cannot connect as x@h:1 with d: refused'
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.tests.backends.probe_database', refuse))

    def test_probed_once_per_backend(self):
        for _ in range(5):
            reason = backends.unavailable_reason('postgresql')
        backends.unavailable_reason('mysql')
        self.assertEqual(2, len(self.calls))
        self.assertTrue(reason.startswith(
            'backend unavailable (postgresql): cannot connect as x@h:1'))
        self.assertIn('tools/test-setup.sh', reason)

    def test_skips_with_the_reason(self):
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.tests.backends.REQUIRE_BACKENDS', False))
        exc = self.assertRaises(unittest.SkipTest, backends.require, 'mysql')
        self.assertEqual(backends.unavailable_reason('mysql'), str(exc))

    def test_fails_when_required(self):
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.tests.backends.REQUIRE_BACKENDS', True))
        exc = self.assertRaises(backends.BackendRequired, backends.require,
                                'mysql')
        self.assertIsInstance(exc, AssertionError)
        self.assertIn('RESOBJ_TEST_REQUIRE_BACKENDS', str(exc))

    def test_usable_backend_runs(self):
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.tests.backends.probe_database', lambda url: None))
        self.assertIsNone(backends.require('postgresql'))

    def test_unknown_backend(self):
        self.assertRaises(ValueError, backends.unavailable_reason, 'oracle')


PG = 'resobj.tests.functional.db.test_x.T.test_a(postgresql)'
PG_DRIVER = 'resobj.tests.functional.db.test_y.T.test_b(postgresql+psycopg2)'
MY_GABBI = 'resobj.tests.api.test_gabbi.mysql.traits_list.test_request'
LITE = 'resobj.tests.functional.db.test_x.T.test_a(sqlite)'
UNIT = 'resobj.tests.unit.test_z.T.test_c'
UPGRADE_PG = 'resobj.tests.upgrade.test_rpc.T.test_d(postgresql)'
UPGRADE = 'resobj.tests.upgrade.test_objects.T.test_e'
REASON = 'backend unavailable (mysql): cannot connect; hint'


class TestCheckTestResults(base.TestCase):

    def setUp(self):
        super().setUp()
        self.checker = base.load_tool('check_test_results')
        # It prints its summary; keep the test's output clean.
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', io.StringIO()))

    def _full(self):
        return {t: ('success', '') for t in (PG, PG_DRIVER, MY_GABBI,
                                             LITE, UNIT, UPGRADE_PG,
                                             UPGRADE)}

    def _fresh(self):
        results = self._full()
        for test_id in (PG, PG_DRIVER, MY_GABBI, UPGRADE_PG):
            results[test_id] = ('skip', REASON)
        return results

    def test_backend_ids(self):
        self.assertEqual('postgresql', self.checker.backend_of(PG))
        self.assertEqual('postgresql', self.checker.backend_of(PG_DRIVER))
        self.assertEqual('mysql', self.checker.backend_of(MY_GABBI))
        self.assertIsNone(self.checker.backend_of(LITE))
        self.assertIsNone(self.checker.backend_of(UNIT))

    def test_full_run(self):
        self.assertEqual([], self.checker.check_full(self._full()))
        results = self._full()
        results[MY_GABBI] = ('skip', REASON)
        self.assertEqual(2, len(self.checker.check_full(results)))
        results = self._full()
        results[UNIT] = ('skip', REASON)
        self.assertIn('skipped on a required backend',
                      self.checker.check_full(results)[0])

    def test_full_run_requires_the_upgrade_tests(self):
        results = self._full()
        results[UPGRADE] = ('skip', 'N-1 baseline unavailable (abc): git '
                            'is not installed')
        self.assertEqual(['upgrade test skipped: %s (%s)'
                          % (UPGRADE, results[UPGRADE][1])],
                         self.checker.check_full(results))
        results = self._full()
        del results[UPGRADE_PG]
        self.assertEqual(['no upgrade test passed on PostgreSQL'],
                         self.checker.check_full(results))
        results = self._full()
        results[UPGRADE_PG] = ('fail', '')
        self.assertEqual(['no upgrade test passed on PostgreSQL'],
                         self.checker.check_full(results))

    def test_fresh_run(self):
        self.assertEqual([], self.checker.check_fresh(self._fresh(),
                                                      self._full()))

    def test_fresh_run_with_a_failed_fixture(self):
        # What gabbi reports when a fixture raised: one error, the rest
        # skipped as "fixture failure".
        results = self._fresh()
        results[MY_GABBI] = ('skip', 'fixture failure')
        self.assertEqual(1, len(self.checker.check_fresh(results,
                                                         self._full())))
        results[MY_GABBI] = ('fail', '')
        self.assertEqual(1, len(self.checker.check_fresh(results,
                                                         self._full())))

    def test_fresh_run_missing_tests(self):
        results = self._fresh()
        del results[UNIT]
        [problem] = self.checker.check_fresh(results, self._full())
        self.assertIn('1 tests of the full run did not run', problem)

    def test_fresh_run_with_sqlite_skipped_or_backend_passed(self):
        results = self._fresh()
        results[LITE] = ('skip', REASON)
        self.assertEqual(1, len(self.checker.check_fresh(results,
                                                         self._full())))
        results = self._fresh()
        results[PG] = ('success', '')
        self.assertEqual(1, len(self.checker.check_fresh(results,
                                                         self._full())))

    def test_keystone_run(self):
        cli = ('resobj.tests.keystone.test_openstack_cli.'
               'TestOpenStackCLIThroughKeystone.test_lifecycle')
        auth = ('resobj.tests.keystone.test_auth_token.TestAuthToken.'
                'test_bad_token_is_401')
        results = {cli: ('success', ''), auth: ('success', '')}
        self.assertEqual([], self.checker.check_keystone(results))
        # A skip fails the run, whatever its reason.
        results[cli] = ('skip', 'the openstack CLI is not installed')
        self.assertEqual(['Keystone test skipped: %s (the openstack CLI '
                          'is not installed)' % cli],
                         self.checker.check_keystone(results))
        # So does a run of nothing (the package held no tests).
        self.assertEqual(['no Keystone test passed'],
                         self.checker.check_keystone({}))
        self.assertEqual(['no Keystone test passed'],
                         self.checker.check_keystone({UNIT: ('success',
                                                             '')}))

    def test_reads_skip_reasons_from_subunit(self):
        out = io.BytesIO()
        stream = subunit.StreamResultToBytes(out)
        stream.status(test_id=PG, test_status='skip',
                      file_name='reason', file_bytes=REASON.encode(),
                      mime_type='text/plain; charset=utf8', eof=True)
        stream.status(test_id=UNIT, test_status='success')
        out.seek(0)
        self.assertEqual({PG: ('skip', REASON), UNIT: ('success', '')},
                         self.checker.read_stream(out))


class TestNoSkipInsideFixtures(base.TestCase):

    def test_no_fixture_set_up_decides_a_backend(self):
        tests_dir = os.path.dirname(os.path.dirname(__file__))
        offenders = []
        for dirpath, _, filenames in os.walk(tests_dir):
            for filename in filenames:
                if not filename.endswith('.py'):
                    continue
                path = os.path.join(dirpath, filename)
                with open(path, encoding='utf-8') as f:
                    tree = ast.parse(f.read())
                for node in ast.walk(tree):
                    if not (isinstance(node, ast.FunctionDef) and
                            node.name == '_setUp'):
                        continue
                    for call in ast.walk(node):
                        if isinstance(call, ast.Attribute) and \
                                call.attr in ('require',
                                              'provisioning_backend') and \
                                getattr(call.value, 'id', '') == 'backends':
                            offenders.append('%s:%d' % (path, call.lineno))
        self.assertEqual([], offenders)
