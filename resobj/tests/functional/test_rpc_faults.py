"""Claims through a compute host while conductors stop or the broker goes.

Real processes on PostgreSQL and RabbitMQ: resobj-conductor processes
and one resobj-compute without a database (``cmp1``), on topics of
their own. The test process plays the scheduler: client threads build
one new instance after another on cmp1 (the compute claims through the
conductors), and every outcome is checked against what PostgreSQL holds.

* Conductors stopped with SIGTERM and started again, one at a time,
  RESTARTS times under those claims: no call is lost, none times out.
* A call a conductor or a compute is serving when it gets SIGTERM is
  answered before it exits; one that outlasts ``[DEFAULT]
  graceful_shutdown_timeout`` does not hold it longer.
* The broker link of every process cut for OUTAGE_SECONDS through a TCP
  proxy (never the shared broker itself): callers get a clear error
  within their bounds meanwhile, nothing is claimed twice, no build
  answered ok goes unclaimed, and claims complete again within
  RESUME_BOUND seconds of the link's return.
"""

import threading
import time

from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj import _oslo_messaging
from resobj.compute import rpcapi as compute_rpcapi
from resobj import rpc
from resobj.tests import backends
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.compute import test_service as computes
from resobj.tests.functional.conductor import test_service as conductors
from resobj.tests import tcp_proxy

# Graceful conductor restarts under claims, as many as the issue asks for
# (each costs a conductor's start, seconds).
RESTARTS = 20
# How long the broker link is cut, and how soon after its return claims
# must complete again.
OUTAGE_SECONDS = 20
RESUME_BOUND = 15
# What a caller may get while the broker is away.
CLEAR_ERRORS = ('MessageDeliveryFailure', 'ComputeTimeout',
                'ComputeUnavailable', 'ConductorUnavailable',
                'ConductorTimeout')
# Timeout of every call the test process sends (seconds): a lost call
# fails the test after this long.
CALL_TIMEOUT = 30
NODE = '[fake_driver]\nvcpus = 100000\nmemory_mb = 100000000\n' \
    'local_gb = 10000000\n'


class Load:
    """Client threads building on ``host``; every outcome with its times."""

    def __init__(self, test, host, clients=2):
        self.test = test
        self.host = host
        self.clients = clients
        self.flavor = test.flavor('tiny', 1, 1, 1)
        self.calls = []
        self._stop = threading.Event()
        self._threads = []

    def start(self):
        for _ in range(self.clients):
            thread = threading.Thread(target=self._build, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(2 * CALL_TIMEOUT + 10)
            self.test.assertFalse(thread.is_alive(), 'a client hangs')

    def _build(self):
        while not self._stop.is_set():
            started = time.monotonic()
            uuid = None
            try:
                instance = self.test.instance(self.flavor)
                uuid = instance.uuid
                self.test.compute_rpc.build_instance(
                    self.test.context, self.host, instance, self.host)
                outcome = 'ok'
            except Exception as exc:  # noqa: B902 - counted, asserted
                outcome = '%s: %s' % (type(exc).__name__, exc)
            self.calls.append((started, time.monotonic(), outcome, uuid))
            if outcome != 'ok':
                time.sleep(0.2)

    def failures(self):
        return [(round(end - start, 1), outcome)
                for start, end, outcome, _ in self.calls if outcome != 'ok']

    def ok(self):
        return [uuid for _, _, outcome, uuid in self.calls
                if outcome == 'ok']

    def completed_after(self, since):
        """Seconds from ``since`` to the first build answered ok after it."""
        ends = [end for _, end, outcome, _ in self.calls
                if outcome == 'ok' and end > since]
        return min(ends) - since if ends else None


class FaultTestCase(base.TestCase):
    """Conductors, cmp1 and the test's clients on one broker URL.

    The test process is a node without database access, as in
    conductors.ConductorTestCase, with the conductors on
    ``transport_url()`` and configured with CONDUCTOR_CONF.
    """

    # Named so that CI counts these as PostgreSQL tests, which must run.
    scenarios = [('postgresql', {})]
    CONDUCTORS = 2
    CONDUCTOR_CONF = ''
    COMPUTE_CONF = ''

    def setUp(self):
        super().setUp()
        backends.require('rabbitmq')
        self.conductors = self.useFixture(conductors.ConductorsFixture(
            backends.provisioning_backend('postgresql'), self.CONDUCTORS,
            transport_url=self.transport_url(), extra=self.CONDUCTOR_CONF))
        client = self.useFixture(resobj_fixtures.ConductorClient(
            self.transport_url(), self.conductors.topic, CALL_TIMEOUT))
        self.conf = client.conf
        self.transport = client.transport
        self.context = client.context
        compute_topic = 'resobj-test-compute-' + uuidutils.generate_uuid()
        self.conf.set_override('topic', compute_topic, group='compute')
        self.cmp1 = self.useFixture(computes.ComputeProcess(
            self.conductors, 'cmp1', compute_topic,
            extra=NODE + self.COMPUTE_CONF))
        self.compute_rpc = compute_rpcapi.ComputeAPI(
            self.conf, self.transport, self.context)

    def transport_url(self):
        return backends.transport_url()

    # Flavors and instances made as the conductor tests make them (both
    # read only self.context).
    flavor = conductors.ConductorTestCase.flavor
    instance = conductors.ConductorTestCase.instance

    def claimed(self):
        """{instance uuid: VCPU allocated}, read in PostgreSQL."""
        with self.conductors.engine.connect() as conn:
            return dict(conn.execute(sa.text(
                "SELECT c.uuid, sum(a.used) FROM allocations a "
                "JOIN consumers c ON c.id = a.consumer_id "
                "JOIN resource_classes rc ON rc.id = a.resource_class_id "
                "WHERE rc.name = 'VCPU' GROUP BY c.uuid")).all())

    def assert_each_claimed_once(self, load):
        claimed = self.claimed()
        twice = {uuid: n for uuid, n in claimed.items() if n != 1}
        self.assertEqual({}, twice, 'instances claimed more than once')
        missing = set(load.ok()) - set(claimed)
        self.assertEqual(set(), missing, 'builds answered ok, not claimed')
        used = self.conductors.scalar(
            "SELECT i.used FROM inventories i JOIN resource_classes rc "
            "ON rc.id = i.resource_class_id WHERE rc.name = 'VCPU'")
        self.assertEqual(len(claimed), used, 'VCPU used on the node')
        return claimed

    def hold_provider(self, conn):
        """Lock cmp1's provider row: a claim on it waits in its conductor."""
        conn.execute(sa.text(
            'SELECT rp.id FROM resource_providers rp JOIN compute_nodes cn '
            'ON cn.uuid = rp.uuid WHERE cn.host = :host FOR UPDATE OF rp'),
            {'host': 'cmp1'})

    def wait_for_lock_waiter(self):
        deadline = time.monotonic() + 20
        while not self.conductors.scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE "
                "wait_event_type = 'Lock' AND datname = current_database()"):
            self.assertLess(time.monotonic(), deadline,
                            'the claim never reached the lock')
            time.sleep(0.05)

    def build_in_background(self):
        """A build on cmp1 in a thread; [outcome] once it has returned."""
        instance = self.instance(self.flavor('one', 1, 1, 1))
        outcome = []

        def build():
            try:
                outcome.append(self.compute_rpc.build_instance(
                    self.context, 'cmp1', instance, 'cmp1').vm_state)
            except Exception as exc:  # noqa: B902 - asserted
                outcome.append(exc)
        thread = threading.Thread(target=build, daemon=True)
        thread.start()
        return thread, outcome


class TestGracefulStops(FaultTestCase):

    def test_conductor_restarts_under_claims_lose_nothing(self):
        load = Load(self, 'cmp1')
        load.start()
        time.sleep(1)
        running = list(self.conductors.processes)
        restarts = []
        for i in range(RESTARTS):
            old = running[i % 2]
            # Its replacement starts meanwhile; one of the two always
            # serves.
            new = self.conductors.start(wait=False)
            at = time.monotonic()
            status = old.stop(timeout=30)
            stopped = time.monotonic() - at
            self.assertEqual(0, status, old.log())
            new.wait_ready()
            running[i % 2] = new
            restarts.append((at, stopped))
        load.stop()
        self.assertEqual([], load.failures(),
                         'calls lost or timed out during %d restarts'
                         % RESTARTS)
        self.assertGreater(len(load.ok()), RESTARTS)
        self.assert_each_claimed_once(load)
        for at, stopped in restarts:
            self.assertLess(stopped, 10, 'a conductor took %.1f s to stop'
                            % stopped)

    def test_a_stopping_conductor_answers_the_call_it_serves(self):
        with self.conductors.engine.connect() as conn:
            self.hold_provider(conn)
            thread, outcome = self.build_in_background()
            self.wait_for_lock_waiter()
            # One of the two serves the claim: SIGTERM both (each waits
            # for its calls); a third serves the build's next calls.
            serving = list(self.conductors.processes)
            self.conductors.start()
            stoppers = [threading.Thread(target=p.stop) for p in serving]
            for stopper in stoppers:
                stopper.start()
            time.sleep(1)
            self.assertEqual([], outcome, 'answered before the claim ran')
            conn.rollback()
        thread.join(CALL_TIMEOUT)
        for stopper in stoppers:
            stopper.join(30)
        self.assertEqual(['active'], outcome)
        self.assertEqual([0, 0], [p.process.returncode for p in serving])

    def test_a_stopping_compute_answers_the_call_it_serves(self):
        with self.conductors.engine.connect() as conn:
            self.hold_provider(conn)
            thread, outcome = self.build_in_background()
            self.wait_for_lock_waiter()
            stopper = threading.Thread(target=self.cmp1.service.stop)
            stopper.start()
            time.sleep(1)
            self.assertEqual([], outcome, 'answered before the claim ran')
            self.assertIsNone(self.cmp1.service.process.poll(),
                              'cmp1 exited with a call in progress')
            conn.rollback()
        thread.join(CALL_TIMEOUT)
        stopper.join(30)
        self.assertEqual(['active'], outcome)
        self.assertEqual(0, self.cmp1.service.process.returncode,
                         self.cmp1.log())
        self.assertIn('resobj-compute on cmp1 stopped', self.cmp1.log())


class TestPrivateUse(base.TestCase):

    def test_the_server_hands_back_what_it_is_given_while_stopping(self):
        # The one private use of oslo.messaging: it finds the consumers of
        # a real RabbitMQ server (topic, topic.host, fanout).
        backends.require('rabbitmq')
        conf = self.useFixture(resobj_fixtures.ConfFixture(
            resobj_fixtures.register_rpc_opts))
        conf.config(transport_url=backends.transport_url())
        transport = rpc.get_transport(conf.conf)
        self.addCleanup(transport.cleanup)
        server = rpc.get_server(transport, 'resobj-test-' +
                                uuidutils.generate_uuid(), 'here', [])
        server.start()
        server.stop()
        self.assertEqual(3, _oslo_messaging.requeue_after_stop(server))
        server.wait()


class TestStopTimeout(FaultTestCase):

    COMPUTE_CONF = '[DEFAULT]\ngraceful_shutdown_timeout = 2\n'

    def test_a_call_that_outlasts_the_bound_does_not_hold_the_stop(self):
        with self.conductors.engine.connect() as conn:
            self.hold_provider(conn)
            self.build_in_background()
            self.wait_for_lock_waiter()
            started = time.monotonic()
            status = self.cmp1.service.stop(timeout=30)
            took = time.monotonic() - started
            conn.rollback()
        self.assertEqual(1, status, self.cmp1.log())
        self.assertLess(took, 10)
        self.assertIn('[DEFAULT] graceful_shutdown_timeout', self.cmp1.log())


class TestBrokerOutage(FaultTestCase):

    CONDUCTORS = 1

    def transport_url(self):
        # Every process reaches RabbitMQ through this test's proxy.
        if not hasattr(self, 'proxy'):
            url = backends.transport_url()
            self.proxy = tcp_proxy.TCPProxy('127.0.0.1', _port(url))
            self.addCleanup(self.proxy.close)
            self.proxied = url.replace(':%d/' % _port(url),
                                       ':%d/' % self.proxy.port)
        return self.proxied

    def test_claims_resume_after_the_link_returns(self):
        load = Load(self, 'cmp1')
        load.start()
        time.sleep(2)
        cut_at = time.monotonic()
        self.proxy.cut()
        time.sleep(OUTAGE_SECONDS)
        self.proxy.restore()
        back_at = time.monotonic()
        deadline = back_at + RESUME_BOUND
        while load.completed_after(back_at) is None and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)
        load.stop()
        resumed = load.completed_after(back_at)
        self.assertIsNotNone(resumed, 'no claim completed within %d s of '
                             'the link\'s return; failures: %s'
                             % (RESUME_BOUND, load.failures()))
        self.assertLess(resumed, RESUME_BOUND)
        # Meanwhile callers got errors within their own timeout, not a
        # wait for the broker.
        longest = max(end - start for start, end, _, _ in load.calls
                      if start >= cut_at)
        self.assertLess(longest, CALL_TIMEOUT + 5, load.failures())
        self.assert_each_claimed_once(load)
        # Each failure is an error that says the broker or the service
        # was out of reach. (A build whose first try got through before
        # the cut and whose retry could not be sent fails although it
        # was carried out: its outcome is unknown to the caller.)
        unclear = [failure for failure in load.failures()
                   if failure[1].split(':')[0] not in CLEAR_ERRORS]
        self.assertEqual([], unclear)
        # ComputeUnavailable promises that nothing was carried out.
        claimed = self.claimed()
        wrongly = [uuid for _, _, outcome, uuid in load.calls
                   if outcome.startswith('ComputeUnavailable')
                   and uuid in claimed]
        self.assertEqual([], wrongly, 'told unavailable, yet claimed')


def _port(url):
    host_port = url.split('@')[-1].split('/')[0]
    return int(host_port.rsplit(':', 1)[1]) if ':' in host_port else 5672
