"""Calls lost with a conductor, sent again, carried out exactly once.

Real resobj-conductor processes on RabbitMQ and PostgreSQL (see
test_service.py); the test process is a node without a database whose
keyed calls (conductor RPC 1.1) are sent again, with their key, when no
answer comes within ``[conductor] call_timeout``. Every effect is
counted in PostgreSQL afterwards: none missing, none twice.
"""

import threading
import time

import fixtures

from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.tests import backends
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.conductor import test_service

RETRIED = 'sending it again with its idempotency key'
REPLAYED = 'carried out already; sending its recorded answer again'


class LostCallTestCase(test_service.ConductorTestCase):

    TIMEOUT = 40
    CALL_TIMEOUT = 2

    def setUp(self):
        super().setUp()
        self.client_log = self.useFixture(fixtures.FakeLogger(
            name='resobj.conductor.rpcapi', format='%(message)s'))

    def generation(self, provider):
        return self.conductors.scalar(
            'SELECT generation FROM resource_providers WHERE uuid = :uuid',
            uuid=provider)

    def outcomes(self, method):
        return self.conductors.scalar(
            'SELECT count(*) FROM call_outcomes WHERE method = :method',
            method=method)


class TestKilledMidCall(LostCallTestCase):

    def test_the_retry_reaches_the_next_conductor_and_runs_once(self):
        tracker = self.tracker('host1', vcpus=8, memory_mb=8192,
                               local_gb=200)
        inst = self.instance(self.flavor('small', 2, 2048, 20))
        generation = self.generation(tracker.provider)
        [conductor] = self.conductors.processes
        with self.conductors.engine.connect() as conn:
            self.hold_provider(conn, tracker.provider)
            caller, failures = self.claim_in_thread(tracker, inst)
            # The claim waits in the conductor's transaction, its key
            # taken: kill the conductor there, start another.
            self.wait_for_lock_waiters()
            conductor.kill()
            self.conductors.start()
            conn.rollback()
        caller.join(self.TIMEOUT)
        self.assertFalse(caller.is_alive())
        self.assertEqual([], failures)
        self.assertIn(RETRIED, self.client_log.output)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.used(inst.uuid))
        # One claim: the provider's generation moved once.
        self.assertEqual(generation + 1, self.generation(tracker.provider))
        self.assertEqual(1, self.outcomes('AllocationList.replace_all'))

    def test_an_answer_lost_after_the_commit_is_sent_again(self):
        # The first try outlasts call_timeout (its answer goes to no
        # one); the repeat waits on the first's key and, once the first
        # commits, answers what it answered.
        tracker = self.tracker('host1', vcpus=8, memory_mb=8192,
                               local_gb=200)
        inst = self.instance(self.flavor('small', 2, 2048, 20))
        generation = self.generation(tracker.provider)
        with self.conductors.engine.connect() as conn:
            self.hold_provider(conn, tracker.provider)
            caller, failures = self.claim_in_thread(tracker, inst)
            # The first try waits on the provider, its repeat on the key.
            self.wait_for_lock_waiters(2)
            conn.rollback()
        caller.join(self.TIMEOUT)
        self.assertFalse(caller.is_alive())
        self.assertEqual([], failures)
        self.assertIn(RETRIED, self.client_log.output)
        self.assertIn(REPLAYED, self.conductors.processes[0].log())
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.used(inst.uuid))
        self.assertEqual(generation + 1, self.generation(tracker.provider))


class TestKilledUnderLoad(LostCallTestCase):

    CONDUCTORS = 2
    CALLS = 25

    def test_every_call_carried_out_exactly_once(self):
        tracker = self.tracker('host1', vcpus=1000, memory_mb=1024000,
                               local_gb=100000)
        flavor = self.flavor('tiny', 1, 64, 1)
        service = objects.Service.register(self.context, 'reporter',
                                           cn_obj.COMPUTE_BINARY)
        reports = service.report_count
        failures, claimed = [], []

        def claims():
            for _ in range(self.CALLS):
                try:
                    inst = self.instance(flavor)
                    tracker.instance_claim(self.context, inst)
                    claimed.append(inst.uuid)
                except Exception as exc:  # noqa: B902 - asserted
                    failures.append(exc)

        def heartbeats():
            for _ in range(self.CALLS * 2):
                try:
                    service.heartbeat()
                except Exception as exc:  # noqa: B902 - asserted
                    failures.append(exc)

        callers = [threading.Thread(target=claims),
                   threading.Thread(target=heartbeats)]
        for caller in callers:
            caller.start()
        # Mid-stream: a conductor dies with the calls it holds; a new
        # one starts a moment later.
        time.sleep(1)
        self.conductors.processes[0].kill()
        time.sleep(1)
        self.conductors.start()
        for caller in callers:
            caller.join(self.TIMEOUT)
            self.assertFalse(caller.is_alive())
        self.assertEqual([], failures)
        self.assertEqual(self.CALLS, len(claimed))
        # Each instance created once, each claimed once, each report
        # counted once.
        self.assertEqual(self.CALLS, self.conductors.scalar(
            'SELECT count(*) FROM instances WHERE deleted = 0'))
        for uuid in claimed:
            self.assertEqual({'VCPU': 1, 'MEMORY_MB': 64, 'DISK_GB': 1},
                             self.used(uuid))
        self.assertEqual(self.CALLS, self.conductors.scalar(
            "SELECT i.used FROM inventories i JOIN resource_classes rc "
            "ON rc.id = i.resource_class_id JOIN resource_providers rp "
            "ON rp.id = i.resource_provider_id "
            "WHERE rc.name = 'VCPU' AND rp.uuid = :uuid",
            uuid=tracker.provider))
        self.assertEqual(reports + self.CALLS * 2, self.conductors.scalar(
            "SELECT report_count FROM services WHERE host = 'reporter'"))


class TestCappedCalls(test_service.ConductorTestCase):
    """``[upgrade_levels] conductor = 1.0``: calls go as RPC 1.0, unkeyed."""

    def test_capped_calls_work_without_keys(self):
        capped = self.useFixture(resobj_fixtures.ConductorClient(
            backends.transport_url(), self.conductors.topic, self.TIMEOUT,
            levels={'conductor': '1.0'}))
        self.assertEqual('1.0', objects.base.ResobjObject.indirection_api
                         .rpcapi.version_cap)
        tracker = self.tracker('host1', vcpus=8, memory_mb=8192,
                               local_gb=200)
        inst = self.instance(self.flavor('small', 2, 2048, 20))
        tracker.instance_claim(capped.context, inst)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.used(inst.uuid))
        service = objects.Service.get_by_compute_host(capped.context,
                                                      'host1')
        reports = service.report_count
        service.heartbeat()
        self.assertEqual(reports + 1, service.report_count)
        # Nothing was keyed, so nothing was recorded.
        self.assertEqual(0, self.conductors.scalar(
            'SELECT count(*) FROM call_outcomes'))
