"""The real resobj-api process: workers on one SQLite file, shutdown.

SQLite allows one writer at a time. Several gunicorn workers writing the
same embedded database must queue (the facade starts writers with BEGIN
IMMEDIATE and waits on the busy timeout), never fail with "database is
locked" or a 500.
"""

import concurrent.futures
import os
import signal
import sqlite3
import time
import uuid

import requests

from resobj.tests.api import server
from resobj.tests import base

HEADERS = {'X-Auth-Token': 'admin',
           'OpenStack-API-Version': 'placement latest'}


class TestServer(base.TestCase):

    def _session(self):
        session = requests.Session()
        session.headers.update(HEADERS)
        self.addCleanup(session.close)
        return session

    def _provider(self, session, url, total):
        rp = str(uuid.uuid4())
        resp = session.post(url + '/resource_providers', json={
            'name': 'rp-' + rp, 'uuid': rp})
        self.assertEqual(200, resp.status_code, resp.text)
        resp = session.put(url + '/resource_providers/%s/inventories' % rp,
                           json={'resource_provider_generation': 0,
                                 'inventories': {'VCPU': {'total': total}}})
        self.assertEqual(200, resp.status_code, resp.text)
        return rp

    def test_workers_share_sqlite_without_errors(self):
        srv = self.useFixture(server.ServerFixture(workers=4))
        setup = self._session()
        providers = [self._provider(setup, srv.url, 40) for _ in range(3)]

        def client(n):
            session = requests.Session()
            session.headers.update(HEADERS)
            statuses = []
            with session:
                for i in range(15):
                    consumer = str(uuid.uuid4())
                    rp = providers[(n + i) % len(providers)]
                    statuses.append(session.put(
                        srv.url + '/allocations/' + consumer, json={
                            'allocations': {rp: {'resources': {'VCPU': 1}}},
                            'project_id': 'p%d' % n, 'user_id': 'u',
                            'consumer_generation': None,
                            'consumer_type': 'INSTANCE'}).status_code)
                    statuses.append(session.post(
                        srv.url + '/resource_providers',
                        json={'name': 'c%d-%d' % (n, i)}).status_code)
                    statuses.append(session.get(
                        srv.url + '/resource_providers/%s/usages'
                        % rp).status_code)
            return statuses

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            statuses = [s for r in pool.map(client, range(8)) for s in r]
        self.assertEqual(360, len(statuses))
        # Claims may lose a generation race and answer 409 after the
        # server's retries; nothing else may fail.
        unexpected = [s for s in statuses if s not in (200, 204, 409)]
        self.assertEqual([], unexpected, srv.log())
        self.assertNotIn('database is locked', srv.log())
        used = sum(setup.get(
            srv.url + '/resource_providers/%s/usages' % rp).json()[
            'usages']['VCPU'] for rp in providers)
        self.assertEqual(statuses[0::3].count(204), used)
        self.assertGreater(used, 100)

    def test_sigterm_stops_cleanly_and_requests_are_logged(self):
        srv = self.useFixture(server.ServerFixture(workers=2))
        session = self._session()
        self.assertEqual(200, session.get(
            srv.url + '/resource_providers').status_code)
        self.assertEqual(0, srv.stop())
        with open(srv.access_log) as f:
            self.assertIn('"GET /resource_providers HTTP/1.1" 200', f.read())

    def test_workers_register_the_api_service_and_report(self):
        srv = self.useFixture(server.ServerFixture(
            workers=2, extra_conf='[DEFAULT]\nhost = api-1\n'
                                  'report_interval = 1\n'))
        path = os.path.join(srv.dir, 'state', 'resobj.sqlite')

        def rows():
            with sqlite3.connect(path) as db:
                return db.execute(
                    'SELECT binary, host, report_count FROM services '
                    'WHERE deleted = 0').fetchall()
        deadline = time.monotonic() + 60
        while not any(count >= 2 for _, _, count in rows()):
            self.assertLess(time.monotonic(), deadline, srv.log())
            time.sleep(0.2)
        self.assertEqual({('resobj-api', 'api-1')},
                         {(b, h) for b, h, _ in rows()})

    def test_a_killed_worker_is_replaced(self):
        srv = self.useFixture(server.ServerFixture(workers=2))
        master = srv.process.pid

        def workers():
            with open('/proc/%d/task/%d/children' % (master, master)) as f:
                return set(int(pid) for pid in f.read().split())
        # The service answers once one worker serves; the master may fork
        # the second a moment later.
        deadline = time.monotonic() + 60
        while len(workers()) != 2:
            self.assertLess(time.monotonic(), deadline, srv.log())
            time.sleep(0.1)
        victim = min(workers())
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while victim in workers() or len(workers()) != 2:
            self.assertLess(time.monotonic(), deadline, srv.log())
            time.sleep(0.1)
        session = self._session()
        for _ in range(10):
            self.assertEqual(200, session.get(
                srv.url + '/resource_providers', timeout=10).status_code)
        self.assertIn('Booting worker', srv.log().split(
            'was sent SIGKILL')[-1])
