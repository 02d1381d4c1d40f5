"""resobj-sim against an external placement service on its own database.

The objects (services, nodes, instances, migrations) live in the test's
database, on every backend; placement is a real resobj-api process with
its own embedded SQLite database (ServerFixture). Nothing provider-side
may then be written through the objects: the sim's setup and its
trackers must reach placement through the HTTP client only, and the
final check must find placement's usage equal to the trackers' own.

The in-process test runs on PostgreSQL and MariaDB only: the sim's
threads (one per node) need concurrent transactions, and the test's
in-memory SQLite database is one connection shared by every thread.
SQLite is covered end to end by running the ``resobj-sim`` command with
``--url`` and ``--database`` on a SQLite file.
"""

import os
import subprocess
import sys

import fixtures
from oslo_config import cfg

from resobj.cmd import sim
from resobj.cmd import sim_workload
from resobj.compute import manager as compute_manager
from resobj.compute import report_http
from resobj import conf as resobj_conf
from resobj import objects
from resobj.tests.api import server
from resobj.tests import base as test_base
from resobj.tests.functional.compute import base
from resobj.tests.functional import db_base


class TestSimURLMode(base.TrackerTestCase):

    scenarios = [s for s in db_base.BACKEND_SCENARIOS if s[0] != 'sqlite']

    def make_client(self):
        api = self.useFixture(server.ServerFixture(workers=2))
        return report_http.HTTPReportClient(api.url, retries=3,
                                            backoff=0.05)

    def _conf(self):
        conf = cfg.ConfigOpts()
        resobj_conf.register_opts(conf)
        conf([], project='resobj', default_config_files=[],
             default_config_dirs=[])
        self.addCleanup(conf.reset)
        return conf

    def test_setup_and_short_run_have_no_mismatch(self):
        nodes = 4
        flavors, pool, trackers = sim._setup_cloud(
            self._conf(), self.context, self.client, nodes, shared_every=2)
        # The pool exists in placement only, never in the objects' DB.
        self.assertEqual(['sim-ceph-pool'], [
            rp['name'] for rp in self.client._request(
                'GET', '/resource_providers?name=sim-ceph-pool'
            ).json()['resource_providers']])
        self.assertNotIn('sim-ceph-pool', [
            rp.name for rp in objects.ResourceProviderList.get_all_by_filters(
                self.context, {})])
        shared = [t for t in trackers.values() if t.sharing_provider]
        self.assertEqual(2, len(shared))
        self.assertEqual({pool.uuid}, {t.sharing_provider for t in shared})

        manager = compute_manager.ComputeManager(trackers)
        stats, registry, _elapsed = sim_workload.run(
            self.context, manager, flavors, 60, 7, lambda *a: None,
            audit_every=10)
        sim._settle(self.context, manager, registry)
        rows = sim._check(self.client, trackers, pool)

        self.assertEqual([], stats.errors)
        self.assertGreater(stats.done, 0)
        self.assertEqual([], [r for r in rows if not r[5]])
        # The pool carried the shared nodes' disk (some boot landed there).
        self.assertIn(('sim-ceph-pool', 'DISK_GB'),
                      {(r[0], r[1]) for r in rows})


class TestSimCommandURLMode(test_base.TestCase):

    def test_command_with_url_and_separate_database(self):
        api = self.useFixture(server.ServerFixture(workers=2))
        tmp = self.useFixture(fixtures.TempDir()).path
        database = 'sqlite:///%s' % os.path.join(tmp, 'objects.sqlite')
        done = subprocess.run(
            [sys.executable, '-m', 'resobj.cmd.sim', '--nodes', '3',
             '--ops', '40', '--url', api.url, '--database', database],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(0, done.returncode, done.stdout + done.stderr)
        self.assertIn('mismatches: 0, errors: 0', done.stdout)
        self.assertIn('sim-ceph-pool', done.stdout)
