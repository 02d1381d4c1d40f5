"""Move tracking of one compute node: resize, rebuild, revert, confirm.

A collaborator of the ResourceTracker (resobj.compute.tracker), which
owns one MoveTracker and hands it the claims of moves; the MoveTracker
works through the tracker's own interface (``exclusive``,
``payload_for``, ``check``, ``hold``, ``snapshot``/``restore``,
``select_pci``, ``save_node``...), the same one instance claims use.

The destination's claim (``resize_claim``) moves the instance
consumer's allocations to this node and leaves its old ones to the
migration consumer on the source, in one atomic write; a revert or a
confirm (``drop_move_claim``) ends that hold, database rows first,
allocations second (see the tracker's module docstring). The source
follows a move in memory (``track_outgoing``, ``adopt``) rather than at
its next audit. As for every claim, the tracker's lock is held only to
check and reserve in memory, never across a remote call, and a claim's
undo steps are one unit of work (claims.UnitOfWork).
"""

from oslo_log import log as logging
from oslo_utils import uuidutils

from resobj.compute import claims
from resobj.compute import exception
from resobj.compute import payload as pl
from resobj.compute import pci
from resobj import objects

LOG = logging.getLogger(__name__)


def _same_node(migration):
    return (migration.source_compute == migration.dest_compute and
            migration.source_node == migration.dest_node)


class MoveTracker:
    """Move claims of one node; this node is the destination unless said."""

    def __init__(self, tracker):
        self.tracker = tracker

    def resize_claim(self, context, instance, new_flavor, pci_requests=None,
                     migration_type=None, migration=None):
        """Reserve ``new_flavor`` here for a move of ``instance``.

        Creates the Migration (or takes ``migration``, e.g. a live
        migration's), then moves the instance consumer's allocations
        here and leaves the old ones to the migration consumer on the
        source, in one atomic write.
        """
        tracker = self.tracker
        tracker.ready(context)
        migration = self._migration(context, instance, new_flavor,
                                    migration_type, migration)
        consumer = instance.uuid
        same_node = _same_node(migration)
        with tracker.exclusive(consumer, migration.uuid), \
                claims.UnitOfWork('undo move claim of %s'
                                  % consumer) as work:
            with tracker.lock:
                requests, _recorded = pci.requests_for(
                    new_flavor, pci_requests, tracker.pci_aliases)
                devices = [] if same_node else tracker.select_pci(
                    requests, consumer)
                work.add(tracker.unselect_pci, devices)
                counted = sum(1 for d in devices
                              if d.dev_type == pl.PCI_COUNTED_TYPE)
                before = tracker.snapshot(consumer)
                work.add(tracker.restore, consumer, before)
                work.add(tracker.restore, migration.uuid,
                         tracker.snapshot(migration.uuid))
                if same_node:
                    # The old placement is the migration's until
                    # confirmed; the new one is fitted without it.
                    tracker.numa.set_pins(consumer, None)
                # Beside everything held here, the instance's current
                # allocation too: on the same node it stays held (by the
                # migration) until the resize is confirmed.
                payload = tracker.payload_for(
                    consumer, new_flavor, instance, counted,
                    others=tracker.others(), placed_here=False)
                tracker.check(consumer, payload)
                if same_node:
                    tracker.numa.set_pins(migration.uuid, before[1])
                    if before[0] is not None:
                        tracker.hold(migration.uuid, before[0][0], instance)
                tracker.hold(consumer, payload, instance)
            current = tracker.client.get_allocations(consumer)
            self._start_migration(instance, new_flavor, migration)
            work.add(self._end_migration, instance, migration, 'error')
            pci.claim(devices, consumer, tracker.nodename)
            work.add(pci.free, devices, consumer)
            try:
                tracker.client.replace_allocations({
                    consumer: {
                        'allocations': payload,
                        'project_id': instance.project_id,
                        'user_id': instance.user_id,
                        'generation': current.generation},
                    migration.uuid: {
                        'allocations': current.allocations,
                        'project_id': instance.project_id,
                        'user_id': instance.user_id, 'generation': None}})
            except exception.AllocationConflict as exc:
                raise tracker.refused(consumer, payload, exc)
            if same_node:
                tracker.hold(migration.uuid, current.allocations, instance)
        tracker.unselect_pci(devices)
        tracker.save_node()
        return claims.MoveClaim(context, tracker, instance, payload,
                                devices, migration)

    def rebuild_claim(self, context, instance, migration_type='evacuation'):
        """Reserve the instance's own flavor here (rebuild, evacuation)."""
        return self.resize_claim(context, instance, instance.flavor,
                                 migration_type=migration_type)

    def _migration(self, context, instance, new_flavor, migration_type,
                   migration):
        """The move's Migration, pointed here (not saved yet)."""
        if migration is None:
            migration = objects.Migration(
                context, instance_uuid=instance.uuid,
                source_compute=instance.host, source_node=instance.node,
                old_instance_type_id=instance.flavor.id,
                new_instance_type_id=new_flavor.id,
                # Known before the row exists: the claim names its
                # consumer while it reserves.
                uuid=uuidutils.generate_uuid())
            if migration_type:
                migration.migration_type = migration_type
        migration.dest_compute = self.tracker.host
        migration.dest_node = self.tracker.nodename
        migration.dest_host = self.tracker.host
        return migration

    @staticmethod
    def _start_migration(instance, new_flavor, migration):
        migration.status = 'pre-migrating'
        if migration.obj_attr_is_set('id'):
            migration.save()
        else:
            migration.create()
        instance.old_flavor = instance.flavor
        instance.new_flavor = new_flavor
        instance.save()

    @staticmethod
    def _end_migration(instance, migration, status):
        migration.status = status
        migration.save()
        instance.old_flavor = None
        instance.new_flavor = None
        instance.save()

    def drop_move_claim(self, context, instance, migration, prefix='new'):
        """End a move's hold on this node.

        ``prefix='new'`` (this node is the destination: revert, or a
        failed move): the instance goes back to the source with its old
        flavor, and the migration consumer's allocations back to the
        instance consumer. ``prefix='old'`` (this node is the source:
        confirm): the migration consumer's allocations are deleted.
        Database rows first, then allocations (see module docstring).
        """
        with self.tracker.exclusive(instance.uuid, migration.uuid):
            if prefix == 'old':
                self._confirm(instance, migration)
            else:
                self._revert(instance, migration)
        self.tracker.save_node()

    def _confirm(self, instance, migration):
        tracker = self.tracker
        if not _same_node(migration):
            pci.free(tracker.devices_of(instance.uuid), instance.uuid)
        self._end_migration(instance, migration, 'confirmed')
        tracker.client.delete_allocations(migration.uuid)
        tracker.forget(migration.uuid)

    def _revert(self, instance, migration):
        tracker = self.tracker
        held = tracker.client.get_allocations(migration.uuid)
        current = tracker.client.get_allocations(instance.uuid)
        same_node = _same_node(migration)
        if not same_node:
            pci.free(tracker.devices_of(instance.uuid), instance.uuid)
        instance.host = migration.source_compute
        instance.node = migration.source_node
        instance.flavor = instance.old_flavor or instance.flavor
        # The source puts back its own placement when it adopts it.
        instance.numa_topology = None
        self._end_migration(instance, migration, 'reverted')
        try:
            tracker.client.replace_allocations({
                instance.uuid: {'allocations': held.allocations,
                                'project_id': instance.project_id,
                                'user_id': instance.user_id,
                                'generation': current.generation},
                migration.uuid: {'allocations': {},
                                 'project_id': instance.project_id,
                                 'user_id': instance.user_id,
                                 'generation': held.generation}})
        except exception.AllocationConflict as exc:
            # The rows already say reverted; an audit that raced with
            # this moved a generation. The audits of both nodes put the
            # allocations right from those rows.
            LOG.warning('Revert of %s: allocations left to the next '
                        'audit (%s)', instance.uuid, exc)
        with tracker.lock:
            tracker.forget(migration.uuid)
            if same_node:
                tracker.hold(instance.uuid, held.allocations, instance)
            else:
                tracker.forget(instance.uuid)

    def track_outgoing(self, context, instance, migration):
        """This node is a move's source: hold the migration consumer.

        The destination's claim moved the instance consumer away and
        gave its old allocations to the migration consumer; the source
        follows in memory now rather than at its next audit.
        """
        if _same_node(migration):
            return
        tracker = self.tracker
        with tracker.exclusive(instance.uuid, migration.uuid):
            held = tracker.client.get_allocations(migration.uuid)
            with tracker.lock:
                pins = tracker.numa.pins_of(instance.uuid)
                tracker.forget(instance.uuid)
                if pins:
                    tracker.numa.set_pins(migration.uuid, pins)
                tracker.hold(migration.uuid, held.allocations, instance)

    def adopt(self, instance, migration=None):
        """Start tracking an instance that arrived (finish of a move).

        With ``migration`` (this node was the source of that move, now
        reverted): the migration consumer, whose allocations went back to
        the instance, is no longer held here either. Without that, this
        node counted both until its next audit and refused claims it had
        room for.
        """
        tracker = self.tracker
        consumers = [instance.uuid] + (
            [migration.uuid] if migration is not None else [])
        with tracker.exclusive(*consumers), tracker.lock:
            held = None
            if migration is not None:
                held = tracker.tracked.get(migration.uuid)
                tracker.forget(migration.uuid)
            payload = tracker.payload_for(
                instance.uuid, instance.flavor, instance,
                tracker.pci_count(instance.uuid),
                current=held[0] if held else None)
            tracker.hold(instance.uuid, payload, instance)
            instance.numa_topology = tracker.instance_topology_of(
                instance.uuid)
