"""A stalled database, the real resobj-api and its default settings.

The service answers every request that needs the database within the
stall bound (``[database] statement_timeout`` + ``connect_timeout``) of
the request's arrival, whether it waited for a thread first or not:
503 at the latest. resobj-api runs as shipped (two workers of four
threads, the default timeouts) on PostgreSQL or MariaDB reached through
a TCP proxy (``resobj.tests.tcp_proxy``) that the test stalls. More
claims are sent at once than the workers have threads, so that some wait
for one while the others wait on the database, and more come while they
wait.
"""

import concurrent.futures
import threading
import time

from oslo_utils import uuidutils
import requests
import testscenarios

from resobj.conf import database as database_conf
from resobj.tests.api import server
from resobj.tests import backends
from resobj.tests import base
from resobj.tests import tcp_proxy

load_tests = testscenarios.load_tests_apply_scenarios

HEADERS = {'x-auth-token': 'admin', 'accept': 'application/json',
           'openstack-api-version': 'placement 1.12'}
# Two workers of four threads (the defaults): more than that at once.
FIRST_WAVE = 16
# Claims sent later during the stall, each wave while earlier ones wait.
LATER_WAVES = ((10, 4), (25, 4))
# A loaded machine's slack on top of the bound: the watchdog's and the
# answer's own delays. The bound counted from the wait for a thread
# instead (the defect this guards against) overshoots by a whole
# connect_timeout or more.
SLACK = 3.0


def _default(name):
    [opt] = [opt for opt in database_conf.resobj_database_opts
             if opt.name == name]
    return opt.default


class TestDeadlineFromArrival(base.TestCase):
    scenarios = [('postgresql', {'backend': 'postgresql'}),
                 ('mysql', {'backend': 'mysql'})]

    def setUp(self):
        backends.provisioning_backend(self.backend)
        super().setUp()
        _, self.proxy, proxied = tcp_proxy.proxied_database(
            self, self.backend)
        self.server = self.useFixture(server.ServerFixture(
            workers=2, extra_conf='[database]\nconnection = %s\n'
            % proxied.render_as_string(hide_password=False)))
        self.bound = (_default('statement_timeout')
                      + _default('connect_timeout'))
        self.rp = uuidutils.generate_uuid()
        with requests.Session() as session:
            session.headers.update(HEADERS)
            resp = session.post(self.server.url + '/resource_providers',
                                json={'name': 'rp', 'uuid': self.rp},
                                timeout=30)
            self.assertEqual(201, resp.status_code, resp.text)
            resp = session.put(
                self.server.url + '/resource_providers/%s/inventories'
                % self.rp, timeout=30,
                json={'resource_provider_generation': 0,
                      'inventories': {'VCPU': {'total': 1000}}})
            self.assertEqual(200, resp.status_code, resp.text)

    def _claim(self):
        """(seconds from sending to the answer, status) of one claim."""
        start = time.monotonic()
        try:
            status = requests.put(
                '%s/allocations/%s' % (self.server.url,
                                       uuidutils.generate_uuid()),
                headers=HEADERS, timeout=self.bound * 3,
                json={'allocations': {self.rp: {'resources': {'VCPU': 1}}},
                      'project_id': 'p', 'user_id': 'u'}).status_code
        except requests.RequestException as exc:
            status = type(exc).__name__
        return time.monotonic() - start, status

    def _probe_root(self, stop, slowest):
        while not stop.wait(1):
            start = time.monotonic()
            status = requests.get(self.server.url + '/',
                                  timeout=30).status_code
            slowest.append((time.monotonic() - start, status))

    def test_every_claim_answered_within_the_bound_of_its_arrival(self):
        # A service in use: each worker's pool holds a connection per
        # thread, on which the stalled claims wait for their statements.
        # (The first claim alone creates the project and user.)
        self.assertEqual(204, self._claim()[1])
        with concurrent.futures.ThreadPoolExecutor(FIRST_WAVE) as pool:
            for _ in range(3):
                warm = [pool.submit(self._claim) for _ in range(FIRST_WAVE)]
                statuses = {claim.result()[1] for claim in warm}
                # 409: a claim that lost the provider's generation race.
                self.assertLessEqual(statuses, {204, 409})
        self.proxy.stall()
        stop = threading.Event()
        roots = []
        prober = threading.Thread(target=self._probe_root,
                                  args=(stop, roots))
        prober.start()
        total = FIRST_WAVE + sum(count for _, count in LATER_WAVES)
        try:
            with concurrent.futures.ThreadPoolExecutor(total) as pool:
                claims = [pool.submit(self._claim)
                          for _ in range(FIRST_WAVE)]
                started = time.monotonic()
                for after, count in LATER_WAVES:
                    time.sleep(max(0, started + after - time.monotonic()))
                    claims += [pool.submit(self._claim)
                               for _ in range(count)]
                answers = [claim.result() for claim in claims]
        finally:
            stop.set()
            prober.join()
            self.proxy.restore()
        statuses = {status for _, status in answers}
        self.assertEqual({503}, statuses, answers)
        slowest = max(seconds for seconds, _ in answers)
        self.assertLess(slowest, self.bound + SLACK,
                        (answers, self.server.log()))
        # The health check answered throughout.
        self.assertTrue(roots)
        self.assertEqual({200}, {status for _, status in roots})
        self.assertLess(max(seconds for seconds, _ in roots), 2, roots)
        # And the service claims again once the database is back.
        deadline = time.monotonic() + 30
        while self._claim()[1] != 204:
            self.assertLess(time.monotonic(), deadline, self.server.log())
            time.sleep(0.5)
