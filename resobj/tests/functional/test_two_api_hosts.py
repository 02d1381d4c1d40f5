"""Two resobj-api services on one database race claims and deletes.

As two API hosts behind a load balancer: two real ``resobj-api``
processes share one PostgreSQL or MariaDB database, and client threads
of each claim and delete on the same two small providers. Whatever the
interleaving: no answer is a 5xx, a provider's usage never exceeds its
capacity (watched while the race runs), and at the end each provider's
usage is exactly the claims acknowledged and not deleted.
"""

import random
import threading

from oslo_utils import uuidutils
import requests
import testscenarios

from resobj.tests.api import fixtures as api_fixtures
from resobj.tests.api import server
from resobj.tests import backends
from resobj.tests import base

load_tests = testscenarios.load_tests_apply_scenarios

CAPACITY = 10
THREADS_PER_HOST = 2
ROUNDS = 40
HEADERS = {'openstack-api-version': 'placement 1.12',
           'x-auth-token': 'admin', 'accept': 'application/json'}


class TestTwoAPIHosts(base.TestCase):
    scenarios = [('postgresql', {'backend': 'postgresql'}),
                 ('mysql', {'backend': 'mysql'})]

    def setUp(self):
        backends.provisioning_backend(self.backend)
        super().setUp()
        database = api_fixtures._Database(self.backend)
        url = database.create()
        self.addCleanup(database.drop)
        conf = '[database]\nconnection = %s\n' % url
        self.hosts = [
            self.useFixture(server.ServerFixture(workers=1,
                                                 extra_conf=conf)).url
            for _ in range(2)]
        self.providers = [uuidutils.generate_uuid() for _ in range(2)]
        for n, rp in enumerate(self.providers):
            resp = requests.post(
                self.hosts[n] + '/resource_providers', headers=HEADERS,
                json={'name': 'rp%d' % n, 'uuid': rp}, timeout=30)
            self.assertEqual(201, resp.status_code, resp.text)
            resp = requests.put(
                self.hosts[n] + '/resource_providers/%s/inventories' % rp,
                headers=HEADERS, timeout=30,
                json={'resource_provider_generation': 0,
                      'inventories': {'VCPU': {'total': CAPACITY}}})
            self.assertEqual(200, resp.status_code, resp.text)
        self.lock = threading.Lock()
        self.held = {}          # consumer -> (provider, amount)
        self.answers = []       # (method, status, text)
        self.over = []          # usages seen above capacity

    def _client(self, host, seed):
        rnd = random.Random(seed)
        session = requests.Session()
        session.headers.update(HEADERS)
        mine = []
        for _ in range(ROUNDS):
            if mine and rnd.random() < 0.4:
                consumer = mine.pop(rnd.randrange(len(mine)))
                resp = session.delete('%s/allocations/%s'
                                      % (host, consumer), timeout=60)
                with self.lock:
                    self.answers.append(('DELETE', resp.status_code,
                                         resp.text))
                    if resp.status_code == 204:
                        del self.held[consumer]
                continue
            consumer = uuidutils.generate_uuid()
            rp = rnd.choice(self.providers)
            amount = rnd.randint(1, 3)
            resp = session.put(
                '%s/allocations/%s' % (host, consumer), timeout=60,
                json={'allocations': {rp: {'resources': {'VCPU': amount}}},
                      'project_id': 'p', 'user_id': 'u'})
            with self.lock:
                self.answers.append(('PUT', resp.status_code, resp.text))
                if resp.status_code == 204:
                    self.held[consumer] = (rp, amount)
                    mine.append(consumer)

    def _usage(self, host, rp):
        resp = requests.get('%s/resource_providers/%s/usages' % (host, rp),
                            headers=HEADERS, timeout=60)
        self.assertEqual(200, resp.status_code, resp.text)
        return resp.json()['usages'].get('VCPU', 0)

    def _watch(self, stop):
        while not stop.is_set():
            for n, rp in enumerate(self.providers):
                used = self._usage(self.hosts[n], rp)
                if used > CAPACITY:
                    self.over.append((rp, used))

    def test_race_keeps_capacity_and_counts(self):
        clients = [threading.Thread(target=self._client, args=(host, seed))
                   for seed, host in enumerate(
                       self.hosts * THREADS_PER_HOST)]
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(stop,))
        watcher.start()
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(300)
        stop.set()
        watcher.join(60)
        bad = [a for a in self.answers
               if a[1] not in ((204, 409) if a[0] == 'PUT' else (204,))]
        self.assertEqual([], bad[:3])
        self.assertEqual([], self.over)
        self.assertIn(409, {a[1] for a in self.answers},
                      'no claim was refused: the race did not contend')
        for rp in self.providers:
            expected = sum(amount for p, amount in self.held.values()
                           if p == rp)
            for host in self.hosts:
                self.assertEqual(expected, self._usage(host, rp))
