"""Each service recorded at the version it runs, N-1 code included.

The conductor runs today's code (N); compute hosts without database
access register and report through it. An N-1 compute (the baseline
commit's code, which does not say its service version) started after
the conductor is at N must be recorded at the N-1 service version, as
must a host rolled back from N to N-1, at its first report. Today's
``resobj-status upgrade check`` then warns about it, and a client with
``[upgrade_levels] compute = auto`` caps its calls for it while it is
live and lifts the cap once it is down, without a restart.
"""

import json
import time

import testscenarios

from resobj.compute import rpcapi as compute_rpcapi
from resobj.objects import service as service_obj
from resobj.tests import base
from resobj.tests.upgrade import cloud
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import services
from resobj import version

load_tests = testscenarios.load_tests_apply_scenarios

# oslo.upgradecheck's codes, as --json reports them.
SUCCESS, WARNING = 0, 1
# Short enough that a stopped service is down, and an auto cap read
# again, within seconds.
DOWN_TIME = 4
FAST = ('[DEFAULT]\nservice_down_time = %d\nreport_interval = 1\n'
        '[upgrade_levels]\nauto_interval = 1\n' % DOWN_TIME)


class TestServiceVersions(base.TestCase):

    # Named so that CI counts it as a PostgreSQL test, which must run.
    scenarios = [('postgresql', {})]

    def setUp(self):
        super().setUp()
        self.cloud = services.cloud_for(self)
        self.cloud.sync(self)
        self.fast = self.cloud.db.write('fast.conf', FAST)
        self.cloud.start_conductor(extra_files=[self.fast])
        self.old_version = n_minus_1.service_version()

    def recorded(self, host):
        return self.cloud.db.scalar(
            "SELECT version FROM services WHERE host = :h AND deleted = 0 "
            "AND \"binary\" = 'resobj-compute'", h=host)

    def status(self):
        """{check: (result, details)} of today's resobj-status."""
        result = self.cloud.status(conf_files=[self.cloud.db.conf_file,
                                               self.fast])
        self.assertIn(result.returncode, (0, 1, 2), result.stderr)
        return {c['check']: (c['result'], c['details'])
                for c in json.loads(result.stdout)['checks']}

    def start(self, host, old):
        """``host``'s compute of either release, once it has reported."""
        since = self.cloud.last_seen()
        process = self.cloud.start_compute(host, old=old)
        self.cloud.audited_since([host], since)
        return process

    def wait_for_cap(self, computes, cap):
        deadline = time.monotonic() + DOWN_TIME + 30
        while computes.version_cap != cap:
            if time.monotonic() > deadline:
                self.fail('the auto cap is %s, not %s'
                          % (computes.version_cap, cap))
            time.sleep(0.5)

    def test_old_computes_are_recorded_capped_for_and_let_go(self):
        self.assertLess(self.old_version, service_obj.SERVICE_VERSION)
        # cmp-a at N; cmp-b at N-1, started after the conductor is at N.
        new_a = self.start('cmp-a', old=False)
        self.assertEqual(service_obj.SERVICE_VERSION, self.recorded('cmp-a'))
        self.assertIn('resobj-compute %s: serving topic' % version.describe(),
                      new_a.log())
        old_b = self.start('cmp-b', old=True)
        self.assertEqual(self.old_version, self.recorded('cmp-b'))
        # cmp-a rolled back as the upgrade guide says (stopped, the N-1
        # release installed, started again): N-1 from its first report.
        old_a = self.start('cmp-a', old=True)
        self.assertEqual(self.old_version, self.recorded('cmp-a'))
        # Their later reports through the conductor keep it so.
        self.cloud.audited_since(['cmp-a', 'cmp-b'], self.cloud.last_seen())
        self.assertEqual((self.old_version, self.old_version),
                         (self.recorded('cmp-a'), self.recorded('cmp-b')))

        # resobj-status warns, naming them.
        result, details = self.status()['Service versions']
        self.assertEqual(WARNING, result, details)
        for host in ('cmp-a', 'cmp-b'):
            self.assertIn('resobj-compute on %s (version %d)'
                          % (host, self.old_version), details)

        # auto caps for them, and the capped call reaches the N-1 code.
        scheduler = self.useFixture(services.Scheduler(
            self.cloud, levels={'compute': 'auto', 'auto_interval': 1}))
        capped = compute_rpcapi.rpc_version_for_service(self.old_version)
        self.assertEqual(capped, scheduler.computes.version_cap)
        flavor = scheduler.flavor('small', 1, 512, 1)
        booted = scheduler.boot(flavor, 'cmp-b')
        self.assertEqual(('cmp-b', 'active'), (booted.host, booted.vm_state))
        cloud.assert_accounting(self, self.cloud.db)

        # Gone (down once service_down_time has passed): the cap lifts in
        # the running client, and resobj-status no longer warns.
        old_a.stop()
        old_b.stop()
        self.wait_for_cap(scheduler.computes, None)
        self.assertEqual(SUCCESS, self.status()['Service versions'][0])


class TestPreviousRelease(base.TestCase):

    def test_the_previous_release_is_the_baseline(self):
        # resobj-status accepts services down to the previous release's
        # version; a release may bump the version more than once.
        self.assertEqual(n_minus_1.service_version(),
                         service_obj.PREVIOUS_RELEASE_SERVICE_VERSION)
