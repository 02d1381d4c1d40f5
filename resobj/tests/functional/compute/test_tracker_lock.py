"""The tracker's lock is never held across a remote call.

A report client whose allocation writes for one consumer wait on an
event stands for a conductor call that was lost: the claim that made it
waits, every other claim, delete and audit of the node goes on.
"""

import threading
import time

from resobj.compute import exception
from resobj.tests.functional.compute import base

# How long a test waits for a thread it expects to finish; far above
# what any step here takes, so reaching it means the step was blocked.
WAIT = 30


class GatedClient:
    """A report client whose put_allocations of gated consumers waits.

    ``before``: the write waits before it reaches placement; otherwise
    it is made and the call waits after (a reply that is late).
    """

    def __init__(self, client):
        self._client = client
        self.gated = set()
        self.before = True
        self.release = threading.Event()
        # {consumer: Event}: a release of its own for such a consumer.
        self.releases = {}
        self.waiting = threading.Event()
        self.puts = []
        self._lock = threading.Lock()

    def __getattr__(self, name):
        return getattr(self._client, name)

    def put_allocations(self, consumer, *args, **kwargs):
        with self._lock:
            self.puts.append(consumer)
        if consumer not in self.gated:
            return self._client.put_allocations(consumer, *args, **kwargs)
        release = self.releases.get(consumer, self.release)
        if self.before:
            self.waiting.set()
            release.wait(WAIT)
            return self._client.put_allocations(consumer, *args, **kwargs)
        result = self._client.put_allocations(consumer, *args, **kwargs)
        self.waiting.set()
        release.wait(WAIT)
        return result


class Worker(threading.Thread):
    """Runs ``fn`` once; keeps what it returned or raised."""

    def __init__(self, fn, *args):
        super().__init__(daemon=True)
        self.fn, self.args = fn, args
        self.result = self.error = None

    def run(self):
        try:
            self.result = self.fn(*self.args)
        except Exception as exc:
            self.error = exc


class TestNoNodeWideFreeze(base.TrackerTestCase):

    def setUp(self):
        super().setUp()
        self.gate = GatedClient(self.client)
        self.tracker_ = self.tracker(client=self.gate, local_gb=100)

    def _blocked_claim(self, before=True):
        inst = self.instance()
        self.gate.gated.add(inst.uuid)
        self.gate.before = before
        claim = Worker(self.tracker_.instance_claim, self.context, inst)
        claim.start()
        self.assertTrue(self.gate.waiting.wait(WAIT))
        self.addCleanup(self.gate.release.set)
        return inst, claim

    def _finish(self, worker):
        self.gate.release.set()
        worker.join(WAIT)
        self.assertFalse(worker.is_alive())
        self.assertIsNone(worker.error)

    def test_other_claims_and_deletes_go_on_while_one_call_hangs(self):
        tracker = self.tracker_
        earlier = self.instance()
        tracker.instance_claim(self.context, earlier)
        inst, blocked = self._blocked_claim()
        # Both run on this thread: were the lock held by the blocked
        # claim, they would wait for it (and this test would hang).
        other = self.instance()
        tracker.instance_claim(self.context, other)
        tracker.remove_instance(self.context, earlier)
        self.assertTrue(blocked.is_alive())
        self.assertEqual({}, self.allocations(earlier.uuid))
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 20}},
                         self.allocations(other.uuid))
        self._finish(blocked)
        self.assertEqual(('host1', 'host1'),
                         (self.reload(inst).host, self.reload(inst).node))
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40},
                         self.usages(tracker.provider))

    def test_the_blocked_claim_counts_while_it_waits(self):
        # 100 GB of disk: the blocked claim's 20 leave room for four
        # claims of 20, not five.
        tracker = self.tracker_
        _inst, blocked = self._blocked_claim()
        for _ in range(4):
            tracker.instance_claim(self.context, self.instance())
        self.assertRaises(exception.ComputeResourcesUnavailable,
                          tracker.instance_claim, self.context,
                          self.instance())
        self._finish(blocked)
        self.assertEqual(100, self.usages(tracker.provider)['DISK_GB'])

    def test_an_audit_meanwhile_does_not_undo_the_claim(self):
        # The allocation is written, the instance row not yet: an audit
        # that read both now sees an allocation nothing here tracks.
        tracker = self.tracker_
        inst, blocked = self._blocked_claim(before=False)
        tracker.update_available_resource(self.context)
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 20}},
                         self.allocations(inst.uuid))
        self.assertIn(inst.uuid, tracker.tracked)
        self._finish(blocked)
        tracker.update_available_resource(self.context)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.usages(tracker.provider))
        self.assertEqual({tracker.provider: {'VCPU': 2, 'MEMORY_MB': 2048,
                                             'DISK_GB': 20}},
                         tracker.accounting())

    def test_a_failed_claim_gives_back_its_reservation(self):
        tracker = self.tracker_
        inst = self.instance()
        self.gate.release.set()
        real = self.gate._client.put_allocations

        def refuse(consumer, *args, **kwargs):
            raise exception.AllocationConflict(consumers=consumer,
                                               detail='refused by the test')
        self.gate._client.put_allocations = refuse
        self.addCleanup(setattr, self.gate._client, 'put_allocations',
                        real)
        self.assertRaises(exception.ComputeResourcesUnavailable,
                          tracker.instance_claim, self.context, inst)
        self.assertNotIn(inst.uuid, tracker.tracked)
        self.assertEqual({}, tracker.usage.totals())


class TestConcurrentClaims(base.TrackerTestCase):

    def test_concurrent_claims_never_overcommit(self):
        # Room for three claims of 20 GB; six race, each one's write
        # slowed so that all are in flight at once.
        gate = GatedClient(self.client)
        tracker = self.tracker(client=gate, local_gb=60)
        instances = [self.instance() for _ in range(6)]
        gate.gated.update(i.uuid for i in instances)
        gate.releases = {i.uuid: threading.Event() for i in instances}
        workers = {inst.uuid: Worker(tracker.instance_claim, self.context,
                                     inst) for inst in instances}
        for worker in workers.values():
            worker.start()
        # Three reach placement and wait there, all at once; the other
        # three are refused meanwhile.
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and not (
                len(gate.puts) == 3 and
                sum(not w.is_alive() for w in workers.values()) == 3):
            time.sleep(0.01)
        # Then one after the other (SQLite's test database is one
        # connection: its transactions cannot overlap).
        for consumer in list(gate.puts):
            gate.releases[consumer].set()
            workers[consumer].join(WAIT)
        workers = list(workers.values())
        for worker in workers:
            worker.join(WAIT)
            self.assertFalse(worker.is_alive())
        won = [w for w in workers if w.error is None]
        lost = [w for w in workers if w.error is not None]
        self.assertEqual(3, len(won), [repr(w.error) for w in lost])
        for worker in lost:
            self.assertIsInstance(worker.error,
                                  exception.ComputeResourcesUnavailable)
        # Refused by the tracker's own check, never by placement.
        self.assertEqual(3, len(gate.puts))
        self.assertEqual(60, self.usages(tracker.provider)['DISK_GB'])
