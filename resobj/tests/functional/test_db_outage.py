"""Claims through the real API while the database link fails under them.

The application runs in process on PostgreSQL or MariaDB, reached
through a TCP proxy (``resobj.tests.tcp_proxy``) that the test cuts or
stalls; or the server itself ends the service's connections. Four
threads claim one VCPU each, for new consumers, all the while. Whatever
happens, every answer is 204, 409 (concurrent claims on one provider)
or 503, never 500, claims succeed again
soon after the database is back, and the provider's usage is exactly
what was stored: every acknowledged claim, plus the few whose commit
reached the server while its answer was lost (a 503 whose claim is
found stored afterwards; the client could not know).

Short timeouts keep it quick; the defaults are checked in
``unit/db/test_outage.py``.
"""

import json
import threading
import time

from oslo_utils import uuidutils
import sqlalchemy as sa
import testscenarios
import webob

from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import backends
from resobj.tests import base
from resobj.tests import tcp_proxy

load_tests = testscenarios.load_tests_apply_scenarios

CLIENTS = 4
CONNECT_TIMEOUT = 1
STATEMENT_TIMEOUT = 2
# A stall longer than the service's bound on one wait
# (STATEMENT_TIMEOUT + CONNECT_TIMEOUT), so that it gives up on it.
STALL_SECONDS = 4.5
# On a loaded machine the thread that gives up may not run before
# STALL_SECONDS are over: the stall then lasts until a first 503 was
# answered, or this long in all. A service that never gives up fails.
STALL_LIMIT = 20
CUT_SECONDS = 2
# How soon after the database is back a claim must succeed again: the
# first claim that starts after it, plus a loaded machine's slack.
RECOVERY_SECONDS = 2.5


class _Claims:
    """Four threads claiming until told to stop; what each answer was."""

    def __init__(self, app, rp_uuid):
        self._app = app
        self._rp = rp_uuid
        self._stop = threading.Event()
        self.answers = []
        # Set once a claim was answered 503.
        self.refused = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, daemon=True)
                         for _ in range(CLIENTS)]

    def request(self, method, path, body=None, version='1.12'):
        req = webob.Request.blank(path, method=method)
        req.headers['x-auth-token'] = 'admin'
        req.headers['openstack-api-version'] = 'placement %s' % version
        req.headers['accept'] = 'application/json'
        if body is not None:
            req.content_type = 'application/json'
            req.json_body = body
        return req.get_response(self._app)

    def _run(self):
        while not self._stop.is_set():
            consumer = uuidutils.generate_uuid()
            started = time.monotonic()
            resp = self.request('PUT', '/allocations/%s' % consumer, {
                'allocations': {self._rp: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u'})
            with self._lock:
                self.answers.append((started, time.monotonic(),
                                     resp.status_int, consumer, resp.text))
            if resp.status_int == 503:
                self.refused.set()
                # As a client would, rather than spin.
                time.sleep(0.05)

    def start(self):
        for thread in self._threads:
            thread.start()

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(60)


class TestDatabaseOutage(base.TestCase):
    scenarios = [('postgresql', {'backend': 'postgresql'}),
                 ('mysql', {'backend': 'mysql'})]

    def setUp(self):
        backends.provisioning_backend(self.backend)
        super().setUp()
        self.direct_url, self.proxy, proxied = tcp_proxy.proxied_database(
            self, self.backend)
        api = self.useFixture(api_fixtures.AppFixture(
            self.backend, url=proxied, options={'database': {
                'connect_timeout': CONNECT_TIMEOUT,
                'statement_timeout': STATEMENT_TIMEOUT, 'max_retries': 0}}))
        self.rp = uuidutils.generate_uuid()
        self.claims = _Claims(api.app, self.rp)
        resp = self.claims.request('POST', '/resource_providers',
                                   {'name': 'rp', 'uuid': self.rp})
        self.assertEqual(201, resp.status_int, resp.text)
        resp = self.claims.request(
            'PUT', '/resource_providers/%s/inventories' % self.rp,
            {'resource_provider_generation': 0,
             'inventories': {'VCPU': {'total': 1000000,
                                      'max_unit': 1000000}}})
        self.assertEqual(200, resp.status_int, resp.text)

    def _during(self, fault, restore):
        """Claims before, during and after ``fault``; when it ended."""
        self.claims.start()
        time.sleep(0.5)
        fault()
        back = restore()
        time.sleep(RECOVERY_SECONDS)
        self.claims.stop()
        return back

    def _check(self, back, expect_503=True):
        answers = self.claims.answers
        codes = {status for _, _, status, _, _ in answers}
        unexpected = [(status, text) for _, _, status, _, text in answers
                      if status not in (204, 409, 503)]
        self.assertEqual([], unexpected[:3], 'answers other than 204, 409 '
                                             'or 503')
        if expect_503:
            self.assertIn(503, codes)
        for _, _, status, _, text in answers:
            if status == 503:
                # Says what is wrong, never where the server is (the
                # claims' microversion, 1.12, is older than error codes).
                self.assertIn('The database is unavailable', text)
                # The request id is a random uuid, whose digits may
                # spell the port by chance.
                said = [{key: value for key, value in error.items()
                         if key != 'request_id'}
                        for error in json.loads(text)['errors']]
                self.assertNotIn(str(self.proxy.port), json.dumps(said))
        recovered = [end for start, end, status, _, _ in answers
                     if status == 204 and start >= back]
        self.assertTrue(recovered, 'no claim succeeded after the database '
                                   'came back')
        self.assertLess(min(recovered) - back, RECOVERY_SECONDS)
        self._check_usage(answers)

    def _check_usage(self, answers):
        """Usage is every acknowledged claim plus the stored unanswered ones.

        Only the claims not acknowledged are looked up one by one; the
        usage then accounts for all the acknowledged ones.
        """
        acknowledged = sum(1 for a in answers if a[2] == 204)
        stored_unanswered = 0
        for _, _, status, consumer, _ in answers:
            if status == 204:
                continue
            resp = self.claims.request('GET', '/allocations/%s' % consumer)
            self.assertEqual(200, resp.status_int, resp.text)
            found = bool(resp.json_body['allocations'])
            self.assertFalse(found and status == 409,
                             'refused claim %s is stored' % consumer)
            stored_unanswered += found
        resp = self.claims.request(
            'GET', '/resource_providers/%s/usages' % self.rp)
        self.assertEqual(200, resp.status_int, resp.text)
        self.assertEqual(acknowledged + stored_unanswered,
                         resp.json_body['usages'].get('VCPU', 0))
        # A claim whose commit was lost with its answer is rare: the
        # connection must break between COMMIT and its reply.
        self.assertLessEqual(stored_unanswered, CLIENTS)

    def test_link_cut(self):
        def restore():
            time.sleep(CUT_SECONDS)
            self.proxy.restore()
            return time.monotonic()
        self._check(self._during(self.proxy.cut, restore))

    def test_link_stalled(self):
        def restore():
            time.sleep(STALL_SECONDS)
            self.claims.refused.wait(STALL_LIMIT - STALL_SECONDS)
            self.proxy.restore()
            return time.monotonic()
        self._check(self._during(self.proxy.stall, restore))

    def test_server_ends_connections(self):
        admin = sa.create_engine(self.direct_url,
                                 poolclass=sa.pool.NullPool)
        self.addCleanup(admin.dispose)

        def terminate():
            for _ in range(5):
                self._terminate(admin)
                time.sleep(0.2)
        self._check(self._during(terminate, time.monotonic),
                    expect_503=False)

    def _terminate(self, admin):
        database = self.direct_url.database
        with admin.connect() as conn:
            if self.backend == 'postgresql':
                conn.execute(sa.text(
                    'SELECT pg_terminate_backend(pid) FROM '
                    'pg_stat_activity WHERE datname = :db AND '
                    'pid <> pg_backend_pid()'), {'db': database})
                return
            ids = conn.execute(sa.text(
                'SELECT id FROM information_schema.processlist WHERE '
                'db = :db AND id <> CONNECTION_ID()'),
                {'db': database}).scalars().all()
            for thread_id in ids:
                try:
                    conn.execute(sa.text('KILL %d' % thread_id))
                except sa.exc.DBAPIError:
                    # Ended meanwhile.
                    pass
