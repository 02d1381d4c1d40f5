"""resobj-sim's workload: random boots, resizes, migrations and deletes.

One thread per fake compute node. Each thread acts as its node's compute
service: it boots instances on its node, deletes and moves instances it
holds, confirms or reverts moves it started, and runs its node's
periodic audit every ``audit_every`` operations. An instance is worked
on by one thread at a time (taken from the shared registry, put back
when done), as a compute host's instance lock would ensure.
"""

import random
import threading
import time

from oslo_utils import uuidutils

from resobj.compute import exception as compute_exc
from resobj import exception
from resobj import objects

# Expected refusals: the cloud is full, a race was lost to a concurrent
# writer, a pre-check said no. Counted, not errors.
REFUSALS = (compute_exc.ComputeResourcesUnavailable,
            compute_exc.AllocationConflict,
            compute_exc.MigrationPreCheckError,
            exception.PciDeviceStatusChanged)

OPERATIONS = (('boot', 40), ('delete', 15), ('resize', 15),
              ('migrate', 10), ('live_migrate', 5), ('finish_move', 15))

PROJECTS = ['sim-project-%d' % i for i in range(3)]


class Registry:
    """Instances not being worked on, and moves awaiting confirm/revert."""

    def __init__(self):
        self._lock = threading.Lock()
        self._idle = {}
        self._moves = []

    def put(self, instance):
        with self._lock:
            self._idle[instance.uuid] = instance

    def take(self, rng, where=None):
        with self._lock:
            candidates = [u for u, i in self._idle.items()
                          if where is None or (i.host, i.node) == where]
            if not candidates:
                return None
            return self._idle.pop(rng.choice(sorted(candidates)))

    def add_move(self, instance, migration):
        with self._lock:
            self._moves.append((instance, migration))

    def take_move(self, rng):
        with self._lock:
            if not self._moves:
                return None
            return self._moves.pop(rng.randrange(len(self._moves)))

    def all_moves(self):
        with self._lock:
            moves, self._moves = self._moves, []
            return moves

    def count(self):
        with self._lock:
            return len(self._idle) + len(self._moves)


class Stats:
    def __init__(self):
        self._lock = threading.Lock()
        self.done = 0
        self.by_kind = {}
        self.refused = 0
        self.refusals = {}
        self.errors = []
        self.audits = []

    def record(self, kind, outcome, detail=None):
        with self._lock:
            self.done += 1
            key = (kind, outcome)
            self.by_kind[key] = self.by_kind.get(key, 0) + 1
            if outcome == 'refused':
                self.refused += 1
                self.refusals[detail] = self.refusals.get(detail, 0) + 1
            elif outcome == 'error':
                self.errors.append('%s: %s' % (kind, detail))

    def audit(self, seconds):
        with self._lock:
            self.audits.append(seconds)


class Worker(threading.Thread):

    def __init__(self, context, key, manager, registry, stats, flavors,
                 ops, seed, audit_every=25):
        super().__init__(name='sim-%s' % key[1], daemon=True)
        self.context = context
        self.key = key
        self.manager = manager
        self.tracker = manager.trackers[key]
        self.registry = registry
        self.stats = stats
        self.flavors = flavors
        self.ops = ops
        self.rng = random.Random(seed)
        self.audit_every = audit_every

    def run(self):
        kinds = [k for k, _w in OPERATIONS]
        weights = [w for _k, w in OPERATIONS]
        for number in range(1, self.ops + 1):
            kind = self.rng.choices(kinds, weights)[0]
            try:
                outcome = getattr(self, '_' + kind)()
                self.stats.record(kind, outcome)
            except REFUSALS as exc:
                self.stats.record(kind, 'refused', type(exc).__name__)
            except Exception as exc:  # reported, and the run fails
                self.stats.record(kind, 'error', '%s: %s' % (
                    type(exc).__name__, exc))
            if number % self.audit_every == 0:
                self._audit()

    def _audit(self):
        try:
            self.stats.audit(self.tracker.update_available_resource(
                self.context))
        except Exception as exc:
            self.stats.record('audit', 'error', '%s: %s' % (
                type(exc).__name__, exc))

    def _other_key(self):
        keys = [k for k in self.manager.trackers if k != self.key]
        return self.rng.choice(sorted(keys)) if keys else self.key

    def _boot(self):
        flavor = self.rng.choice(self.flavors)
        instance = objects.Instance(
            self.context, uuid=uuidutils.generate_uuid(),
            project_id=self.rng.choice(PROJECTS), user_id='sim-user',
            vm_state='building', vcpus=flavor.vcpus,
            memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
            ephemeral_gb=flavor.ephemeral_gb, flavor=flavor,
            booted_from_volume=self.rng.random() < 0.2)
        instance.create()
        pci = ([{'count': 1}] if self.tracker.pci_devices and
               self.rng.random() < 0.1 else None)
        try:
            self.manager.build_instance(self.context, instance, *self.key,
                                        pci_requests=pci)
        except Exception:
            instance.destroy()
            raise
        self.registry.put(instance)
        return 'ok'

    def _delete(self):
        instance = self.registry.take(self.rng, self.key)
        if instance is None:
            return 'skipped'
        self.manager.delete_instance(self.context, instance)
        return 'ok'

    def _move(self, flavor):
        instance = self.registry.take(self.rng, self.key)
        if instance is None:
            return 'skipped'
        dest = self._other_key()
        try:
            migration = self.manager.resize_instance(
                self.context, instance, dest[0], dest[1], flavor)
        except Exception:
            self.registry.put(instance)
            raise
        self.registry.add_move(instance, migration)
        return 'ok'

    def _resize(self):
        return self._move(self.rng.choice(self.flavors))

    def _migrate(self):
        return self._move(None)

    def _live_migrate(self):
        instance = self.registry.take(self.rng, self.key)
        if instance is None:
            return 'skipped'
        dest = self._other_key()
        try:
            migration = self.manager.check_can_live_migrate_destination(
                self.context, instance, *dest)
            self.manager.live_migration(self.context, instance, migration)
        finally:
            self.registry.put(instance)
        return 'ok'

    def _finish_move(self):
        move = self.registry.take_move(self.rng)
        if move is None:
            return 'skipped'
        finish(self.context, self.manager, move, self.rng.random() < 0.7)
        self.registry.put(move[0])
        return 'ok'


def finish(context, manager, move, confirm):
    instance, migration = move
    if confirm:
        manager.confirm_resize(context, instance, migration)
    else:
        manager.revert_resize(context, instance, migration)


def run(context, manager, flavors, total_ops, seed, progress,
        audit_every=25):
    """Run the workload; returns (Stats, Registry, seconds)."""
    registry = Registry()
    stats = Stats()
    keys = sorted(manager.trackers)
    share, extra = divmod(total_ops, len(keys))
    workers = [Worker(context, key, manager, registry, stats, flavors,
                      share + (1 if i < extra else 0), seed * 1000 + i,
                      audit_every)
               for i, key in enumerate(keys)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    shown = -1
    while any(w.is_alive() for w in workers):
        if stats.done != shown:
            shown = stats.done
            progress(shown, total_ops, time.monotonic() - started)
        time.sleep(0.5)
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - started
    progress(stats.done, total_ops, elapsed)
    return stats, registry, elapsed
