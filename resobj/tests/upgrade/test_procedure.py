"""The upgrade guide's procedure, step by step, from a cloud all at N-1.

doc/source/user/upgrade.rst ("Order of the steps") is followed as an
operator would: a cloud entirely at N-1 (the N-1 release's ``db sync``,
two conductors, the API and two compute hosts, all N-1 processes on
PostgreSQL and RabbitMQ, with instances booted by an N-1 client), then

1. ``resobj-manage db sync`` with N;
2. the conductors, one after the other, with ``[upgrade_levels]
   conductor`` set on the upgraded services while one still runs N-1;
3. the API;
4. the compute hosts one at a time, with ``[upgrade_levels] compute =
   auto``; between the two, an N client boots on both and resizes from
   the N-1 host to the N one;
5. ``resobj-manage db online_data_migrations`` until it exits 0;
6. the caps lifted and the services that had them restarted.

N's ``resobj-status upgrade check`` runs before the first step and after
each, and must say what the guide says it says there. At every step
each instance's allocations are its flavor exactly, and nothing else is
held (cloud.assert_accounting). At the end the conductors' backports for
N-1 callers are counted: none while both releases agree on every object
version, some once they differ.
"""

import json

import testscenarios

from resobj.compute import rpcapi as compute_rpcapi
from resobj.db import migration
from resobj.objects import service as service_obj
from resobj.tests import base
from resobj.tests.upgrade import cloud
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import services

load_tests = testscenarios.load_tests_apply_scenarios

# oslo.upgradecheck's codes, as --json reports them.
SUCCESS, WARNING, FAILURE = 0, 1, 2
CONDUCTORS = ('conductor-0', 'conductor-1')
HOSTS = ('cmp1', 'cmp2')


class TestUpgradeProcedure(base.TestCase):

    # Named so that CI counts it as a PostgreSQL test, which must run.
    scenarios = [('postgresql', {})]

    def setUp(self):
        super().setUp()
        self.cloud = services.cloud_for(self)
        self.levels_file = self.cloud.db.write('levels.conf', '')
        self.versions_differ = (n_minus_1.service_version() !=
                                service_obj.SERVICE_VERSION)

    def set_levels(self, **levels):
        """The [upgrade_levels] file the N services and the check read."""
        self.levels = levels
        self.cloud.db.write('levels.conf', '[upgrade_levels]\n' + ''.join(
            '%s = %s\n' % item for item in sorted(levels.items())))

    def status(self):
        """{check: result} of N's resobj-status; its exit code checked."""
        result = self.cloud.status(conf_files=[self.cloud.db.conf_file,
                                               self.levels_file])
        self.assertIn(result.returncode, (0, 1, 2), result.stderr)
        report = json.loads(result.stdout)
        checks = {c['check']: c['result'] for c in report['checks']}
        self.assertEqual(max(checks.values()), result.returncode)
        return checks

    def assert_levels_check(self, checks):
        """What the guide says of the caps in force now."""
        if not self.levels or set(self.levels.values()) == {'auto'}:
            expected = SUCCESS
        elif self.old_services_live():
            expected = SUCCESS
        else:
            # Every service at N: a cap left set is a warning (step 6).
            expected = WARNING
        self.assertEqual(expected, checks['Upgrade levels'])

    def assert_versions_check(self, checks):
        """A warning while N-1 services run (the upgrade is unfinished)."""
        self.assertEqual(WARNING if self.old_services_live() else SUCCESS,
                         checks['Service versions'])

    def old_services_live(self):
        return self.versions_differ and self.cloud.db.scalar(
            'SELECT count(*) FROM services WHERE deleted = 0 '
            'AND version < :v', v=service_obj.SERVICE_VERSION) > 0

    def n_files(self):
        return [self.levels_file]

    def boot_old(self, host, vcpus, memory_mb, root_gb):
        """An N-1 client's boot on ``host``."""
        client = self.cloud.compute_conf('n-1-client', old=True)
        booted = n_minus_1.run('boot', client, host, str(vcpus),
                               str(memory_mb), str(root_gb))
        self.assertEqual((host, 'active'),
                         (booted['host'], booted['vm_state']))
        return booted['uuid']

    def test_the_documented_procedure(self):
        self.set_levels()
        # A cloud entirely at N-1.
        self.cloud.sync(self, old=True)
        # "<revision> (newest known: <head>)", read by N.
        revision = self.cloud.manage('db', 'version')
        self.assertEqual(0, revision.returncode, revision.stderr)
        schema_differs = (revision.stdout.split()[0] !=
                          migration.head_revision())
        started = [self.cloud.start_conductor(host, old=True, wait=False)
                   for host in CONDUCTORS]
        for process in started:
            process.wait_ready()
        self.cloud.start_api(old=True)
        self.cloud.start_computes(HOSTS, old=True)
        for host in HOSTS:
            self.boot_old(host, 2, 2048, 20)
        cloud.assert_accounting(self, self.cloud.db)

        # Before the first step: the schema is N-1's.
        checks = self.status()
        self.assertEqual(FAILURE if schema_differs else SUCCESS,
                         checks['Database schema'])
        self.assert_versions_check(checks)

        # 1. Database.
        self.cloud.sync(self)
        checks = self.status()
        self.assertEqual(SUCCESS, checks['Database schema'])
        self.assert_versions_check(checks)
        self.assertNotEqual(WARNING, checks['Online data migrations'])
        # N-1 services work on the new schema.
        self.boot_old(HOSTS[0], 1, 1024, 10)
        cloud.assert_accounting(self, self.cloud.db)

        # 2. Conductors, one after the other, capped while one is N-1;
        # an N-1 client's calls meanwhile reach either release's.
        self.set_levels(conductor=n_minus_1.rpc_versions()['conductor'])
        for host in CONDUCTORS:
            self.cloud.start_conductor(host, extra_files=self.n_files())
            self.boot_old(HOSTS[1], 1, 1024, 10)
        checks = self.status()
        self.assert_versions_check(checks)
        self.assert_levels_check(checks)
        cloud.assert_accounting(self, self.cloud.db)

        # 3. API services.
        api = self.cloud.start_api(extra_files=self.n_files())
        self.assert_levels_check(self.status())
        for host in HOSTS:
            provider = self.cloud.db.scalar(
                'SELECT uuid FROM compute_nodes WHERE host = :h '
                'AND deleted = 0', h=host)
            usages = api.get('/resource_providers/%s/usages'
                             % provider)['usages']
            self.assertEqual(
                self.cloud.db.allocated_per_provider()[provider],
                {rc: n for rc, n in usages.items() if n})

        # 4. Compute nodes, one at a time, compute = auto everywhere.
        # (The conductors and the API make no compute RPC calls: their
        # restart with the new file would change nothing.)
        self.set_levels(conductor=n_minus_1.rpc_versions()['conductor'],
                        compute='auto')
        since = self.cloud.last_seen()
        self.cloud.start_compute(HOSTS[0], extra_files=self.n_files())
        self.cloud.audited_since([HOSTS[0]], since)
        checks = self.status()
        self.assert_versions_check(checks)
        self.assert_levels_check(checks)
        # Mid-way: an N client boots on both and moves an instance from
        # the N-1 host to the N one.
        scheduler = self.useFixture(services.Scheduler(
            self.cloud, levels=dict(self.levels)))
        # auto: what the N-1 host serves, while it runs.
        old_compute_rpc = n_minus_1.rpc_versions()['compute']
        self.assertNotEqual(old_compute_rpc, compute_rpcapi.VERSION)
        self.assertEqual(old_compute_rpc, scheduler.computes.version_cap)
        flavor = scheduler.flavor('mid-upgrade', 2, 1024, 10)
        bigger = scheduler.flavor('mid-upgrade-big', 4, 2048, 20)
        for host in HOSTS:
            scheduler.boot(flavor, host)
        on_old = scheduler.boot(flavor, HOSTS[1])
        moved = scheduler.resize(on_old, bigger, HOSTS[0])
        self.assertEqual(HOSTS[0], moved.host)
        cloud.assert_accounting(self, self.cloud.db)
        since = self.cloud.last_seen()
        self.cloud.start_compute(HOSTS[1], extra_files=self.n_files())
        self.cloud.audited_since([HOSTS[1]], since)
        checks = self.status()
        self.assert_versions_check(checks)
        self.assert_levels_check(checks)
        cloud.assert_accounting(self, self.cloud.db)

        # 5. Online data migrations, until it exits 0.
        for _ in range(10):
            migrate = self.cloud.manage('db', 'online_data_migrations')
            self.assertIn(migrate.returncode, (0, 1), migrate.stderr)
            if migrate.returncode == 0:
                break
        self.assertEqual(0, migrate.returncode, migrate.stdout)
        self.assertEqual(SUCCESS, self.status()['Online data migrations'])

        # 6. Lift the caps; restart the services that had them.
        self.set_levels()
        for host in CONDUCTORS:
            self.cloud.start_conductor(host)
        api = self.cloud.start_api()
        since = self.cloud.last_seen()
        self.cloud.start_computes(HOSTS)
        self.cloud.audited_since(list(HOSTS), since)
        checks = self.status()
        self.assertEqual({name: SUCCESS for name in checks}, checks)
        self.assertEqual(0, self.cloud.db.scalar(
            'SELECT count(*) FROM services WHERE deleted = 0 '
            'AND version <> :v', v=service_obj.SERVICE_VERSION))

        # The cloud at N: a move between the upgraded hosts, and the
        # audits, keep every instance's allocations its flavor.
        scheduler = self.useFixture(services.Scheduler(self.cloud))
        scheduler.resize(moved, flavor, HOSTS[1])
        self.cloud.audited_since(list(HOSTS), self.cloud.last_seen())
        cloud.assert_accounting(self, self.cloud.db)

        # Backports for the N-1 side counted; no audit or call failed on
        # any compute, N-1 or N, all along.
        self.cloud.assert_backports_and_no_failures(self)
