"""Bursts of requests for a new tenant against a real resobj-api.

Sixteen client threads send the same kind of request at once, round
after round (a barrier starts each round), to a real ``resobj-api``
with two workers on SQLite, PostgreSQL or MariaDB:

* claims for new consumers naming a project and user new to the
  service, or a consumer type new to it, on a provider with no room
  left: each transaction creates the tenant's rows and is then refused.
  Every answer is placement's 409 for a claim over capacity; none is a
  500 (on MariaDB the losers of the race on the new project's row used
  to deadlock, and the deadlock surfaced as a lost savepoint);
* deletes of one consumer's allocations by every thread: exactly one
  204 per round, the others 404, as the consumer is gone (MariaDB used
  to answer 204 to several, its snapshot still showing the consumer).
"""

import threading

from oslo_utils import uuidutils
import requests
import testscenarios

from resobj.tests.api import fixtures as api_fixtures
from resobj.tests.api import server
from resobj.tests import backends
from resobj.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

THREADS = 16
ROUNDS = 4
HEADERS = {'openstack-api-version': 'placement 1.38',
           'x-auth-token': 'admin', 'accept': 'application/json'}
# What placement says of a claim over capacity (and of no deadlock).
OVER_CAPACITY = 'capacity'


class TestTenantBurst(base.TestCase):
    scenarios = [('sqlite', {'backend': 'sqlite'}),
                 ('postgresql', {'backend': 'postgresql'}),
                 ('mysql', {'backend': 'mysql'})]

    def setUp(self):
        if self.backend != 'sqlite':
            backends.provisioning_backend(self.backend)
        super().setUp()
        conf = ''
        if self.backend != 'sqlite':
            database = api_fixtures._Database(self.backend)
            conf = '[database]\nconnection = %s\n' % database.create()
            self.addCleanup(database.drop)
        self.server = self.useFixture(server.ServerFixture(
            workers=2, extra_conf=conf))
        self.url = self.server.url
        self.session = requests.Session()
        self.session.headers.update(HEADERS)
        self.addCleanup(self.session.close)

    def _provider(self, total):
        rp = uuidutils.generate_uuid()
        resp = self.session.post(self.url + '/resource_providers',
                                 json={'name': rp, 'uuid': rp}, timeout=60)
        self.assertEqual(200, resp.status_code, resp.text)
        resp = self.session.put(
            self.url + '/resource_providers/%s/inventories' % rp,
            timeout=60, json={'resource_provider_generation': 0,
                              'inventories': {'VCPU': {'total': total}}})
        self.assertEqual(200, resp.status_code, resp.text)
        return rp

    def _claim(self, session, rp, project, user, consumer_type,
               consumer=None):
        return session.put(
            '%s/allocations/%s' % (
                self.url, consumer or uuidutils.generate_uuid()),
            timeout=120, json={
                'allocations': {rp: {'resources': {'VCPU': 1}}},
                'project_id': project, 'user_id': user,
                'consumer_generation': None,
                'consumer_type': consumer_type})

    def _burst(self, values, request):
        """``request(session, value)`` from every thread, value by value.

        One round per value of ``values``, all threads at once.
        Returns [(round, status, error code, error detail)].
        """
        barrier = threading.Barrier(THREADS, timeout=300)
        answers = []
        lock = threading.Lock()

        def client():
            with requests.Session() as session:
                session.headers.update(HEADERS)
                for n, value in enumerate(values):
                    barrier.wait()
                    resp = request(session, value)
                    error = (resp.json()['errors'][0]
                             if resp.status_code >= 400 else {})
                    with lock:
                        answers.append((n, resp.status_code,
                                        error.get('code'),
                                        error.get('detail', '')))

        threads = [threading.Thread(target=client) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(600)
        self.assertEqual(THREADS * len(values), len(answers))
        return answers

    def _assert_no_traceback(self):
        self.assertNotIn('Traceback', self.server.log())

    def test_claims_naming_new_owners(self):
        full = self._provider(total=1)
        resp = self._claim(self.session, full, 'p', 'u', 'INSTANCE')
        self.assertEqual(204, resp.status_code, resp.text)
        run = uuidutils.generate_uuid(dashed=False)[:8]
        tenants = [('project-%s-%d' % (run, n), 'user-%s-%d' % (run, n),
                    'INSTANCE') for n in range(ROUNDS)]
        types = [('p', 'u', 'TYPE_%s_%d' % (run.upper(), n))
                 for n in range(ROUNDS)]
        answers = self._burst(tenants + types, lambda session, owners:
                              self._claim(session, full, *owners))
        refused = [(status, code) for _, status, code, detail in answers
                   if OVER_CAPACITY in detail]
        self.assertEqual(
            [(409, 'placement.undefined_code')] * len(answers), refused,
            sorted({(status, code, detail[:200])
                    for _, status, code, detail in answers}))
        self._assert_no_traceback()

    def test_concurrent_deletes_of_one_consumer(self):
        rp = self._provider(total=1000)

        def new_consumer():
            consumer = uuidutils.generate_uuid()
            resp = self._claim(self.session, rp, 'p', 'u', 'INSTANCE',
                               consumer)
            self.assertEqual(204, resp.status_code, resp.text)
            return consumer

        consumers = [new_consumer() for _ in range(ROUNDS)]
        answers = self._burst(consumers, lambda session, consumer:
                              session.delete('%s/allocations/%s' % (
                                  self.url, consumer), timeout=120))
        for n, consumer in enumerate(consumers):
            statuses = sorted(status for r, status, _, _ in answers
                              if r == n)
            self.assertEqual([204] + [404] * (THREADS - 1), statuses)
            resp = self.session.get('%s/allocations/%s'
                                    % (self.url, consumer), timeout=60)
            self.assertEqual({}, resp.json()['allocations'])
        resp = self.session.get('%s/resource_providers/%s/usages'
                                % (self.url, rp), timeout=60)
        self.assertEqual({'VCPU': 0}, resp.json()['usages'])
        self._assert_no_traceback()
