"""The moves part of the ResourceTracker: resize, rebuild, revert, confirm.

A mixin of ResourceTracker (resobj.compute.tracker), kept apart so the
tracker stays readable. The destination's claim (``resize_claim``) moves
the instance consumer's allocations to this node and leaves its old ones
to the migration consumer on the source, in one atomic write; a revert
or a confirm (``drop_move_claim``) ends that hold, database rows first,
allocations second (see the tracker's module docstring). The source
follows a move in memory (``track_outgoing``, ``adopt``) rather than at
its next audit.
"""

from oslo_log import log as logging

from resobj.compute import claims
from resobj.compute import exception
from resobj.compute import payload as pl
from resobj.compute import pci
from resobj import objects

LOG = logging.getLogger(__name__)


class MoveMixin:
    """Move claims; this tracker is the destination unless said."""

    def resize_claim(self, context, instance, new_flavor, pci_requests=None,
                     migration_type=None, migration=None):
        """Reserve ``new_flavor`` here for a move of ``instance``.

        Creates the Migration (or takes ``migration``, e.g. a live
        migration's), then moves the instance consumer's allocations
        here and leaves the old ones to the migration consumer on the
        source, in one atomic write.
        """
        with self.lock:
            self._ready(context)
            same_node = (instance.host == self.host and
                         instance.node == self.nodename)
            pci_requests, _recorded = self._pci_requests(new_flavor,
                                                         pci_requests)
            devices = [] if same_node else pci.select(
                self.pci_devices, pci_requests, self.nodename,
                instance.uuid)
            counted = sum(1 for d in devices
                          if d.dev_type == pl.PCI_COUNTED_TYPE)
            old_pins = (self.cells.pins.pop(instance.uuid, None)
                        if self.cells is not None and same_node else None)
            # Beside everything held here, the instance's current
            # allocation too: on the same node it stays held (by the
            # migration) until the resize is confirmed.
            try:
                payload = self._claim_payload(
                    instance.uuid, new_flavor, instance, counted,
                    others=[e[0] for e in self.tracked.values()],
                    placed_here=False)
                self._check(instance.uuid, payload)
            except Exception:
                if old_pins is not None:
                    self.cells.pins[instance.uuid] = old_pins
                raise
            current = self.client.get_allocations(instance.uuid)
            migration = self._start_migration(
                context, instance, new_flavor, migration_type, migration)
            if old_pins is not None:
                # The old placement is the migration's until confirmed.
                self.cells.pins[migration.uuid] = old_pins
            pci.claim(devices, instance.uuid, self.nodename)
            try:
                self.client.replace_allocations({
                    instance.uuid: {
                        'allocations': payload,
                        'project_id': instance.project_id,
                        'user_id': instance.user_id,
                        'generation': current.generation},
                    migration.uuid: {
                        'allocations': current.allocations,
                        'project_id': instance.project_id,
                        'user_id': instance.user_id, 'generation': None}})
            except exception.AllocationConflict as exc:
                with claims.logged_undo('undo move claim of %s'
                                        % instance.uuid):
                    pci.free(devices, instance.uuid)
                    self._end_migration(instance, migration, 'error')
                raise self._placement_shortages(instance.uuid, payload, exc)
            self._track(instance.uuid, payload, instance)
            if same_node:
                old = pl.on_provider(current.allocations, self.provider)
                self.tracked[migration.uuid] = (
                    current.allocations, instance.project_id,
                    instance.user_id, instance.uuid)
                self.usage.set(migration.uuid, old)
            self._save_node()
            return claims.MoveClaim(context, self, instance, payload,
                                    devices, migration)

    def rebuild_claim(self, context, instance, migration_type='evacuation'):
        """Reserve the instance's own flavor here (rebuild, evacuation)."""
        return self.resize_claim(context, instance, instance.flavor,
                                 migration_type=migration_type)

    def _start_migration(self, context, instance, new_flavor,
                         migration_type, migration):
        if migration is None:
            migration = objects.Migration(
                context, instance_uuid=instance.uuid,
                source_compute=instance.host, source_node=instance.node,
                old_instance_type_id=instance.flavor.id,
                new_instance_type_id=new_flavor.id)
            if migration_type:
                migration.migration_type = migration_type
        migration.dest_compute = self.host
        migration.dest_node = self.nodename
        migration.dest_host = self.host
        migration.status = 'pre-migrating'
        if migration.obj_attr_is_set('id'):
            migration.save()
        else:
            migration.create()
        instance.old_flavor = instance.flavor
        instance.new_flavor = new_flavor
        instance.save()
        return migration

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
        with self.lock:
            if prefix == 'old':
                self._confirm(instance, migration)
            else:
                self._revert(instance, migration)
            self._save_node()

    def _confirm(self, instance, migration):
        if migration.source_compute != migration.dest_compute or \
                migration.source_node != migration.dest_node:
            pci.free([d for d in self.pci_devices
                      if d.instance_uuid == instance.uuid], instance.uuid)
        self._end_migration(instance, migration, 'confirmed')
        self.client.delete_allocations(migration.uuid)
        self._untrack(migration.uuid)

    def _revert(self, instance, migration):
        held = self.client.get_allocations(migration.uuid)
        current = self.client.get_allocations(instance.uuid)
        same_node = (migration.source_compute == migration.dest_compute and
                     migration.source_node == migration.dest_node)
        if not same_node:
            pci.free([d for d in self.pci_devices
                      if d.instance_uuid == instance.uuid], instance.uuid)
        instance.host = migration.source_compute
        instance.node = migration.source_node
        instance.flavor = instance.old_flavor or instance.flavor
        # The source puts back its own placement when it adopts it.
        instance.numa_topology = None
        self._end_migration(instance, migration, 'reverted')
        try:
            self._give_back(instance, migration, held, current)
        except exception.AllocationConflict as exc:
            # The rows already say reverted; an audit that raced with
            # this moved a generation. The audits of both nodes put the
            # allocations right from those rows.
            LOG.warning('Revert of %s: allocations left to the next '
                        'audit (%s)', instance.uuid, exc)
        self._untrack(migration.uuid)
        if same_node:
            self._track(instance.uuid, held.allocations, instance)
        else:
            self._untrack(instance.uuid)

    def _give_back(self, instance, migration, held, current):
        self.client.replace_allocations({
            instance.uuid: {'allocations': held.allocations,
                            'project_id': instance.project_id,
                            'user_id': instance.user_id,
                            'generation': current.generation},
            migration.uuid: {'allocations': {},
                             'project_id': instance.project_id,
                             'user_id': instance.user_id,
                             'generation': held.generation}})

    def track_outgoing(self, context, instance, migration):
        """This node is a move's source: hold the migration consumer.

        The destination's claim moved the instance consumer away and
        gave its old allocations to the migration consumer; the source
        follows in memory now rather than at its next audit.
        """
        with self.lock:
            if migration.source_compute == migration.dest_compute and \
                    migration.source_node == migration.dest_node:
                return
            held = self.client.get_allocations(migration.uuid)
            pins = (self.cells.pins.pop(instance.uuid, None)
                    if self.cells is not None else None)
            self._untrack(instance.uuid)
            if pins:
                self.cells.pins[migration.uuid] = pins
            self.tracked[migration.uuid] = (
                held.allocations, instance.project_id, instance.user_id,
                instance.uuid)
            self.usage.set(migration.uuid,
                           pl.on_provider(held.allocations, self.provider))

    def adopt(self, instance, migration=None):
        """Start tracking an instance that arrived (finish of a move).

        With ``migration`` (this node was the source of that move, now
        reverted): the migration consumer, whose allocations went back to
        the instance, is no longer held here either. Without that, this
        node counted both until its next audit and refused claims it had
        room for.
        """
        with self.lock:
            held = None
            if migration is not None:
                held = self.tracked.get(migration.uuid)
                self._untrack(migration.uuid)
            payload = self._claim_payload(
                instance.uuid, instance.flavor, instance,
                self._pci_count(instance.uuid),
                current=held[0] if held else None)
            self._track(instance.uuid, payload, instance)
            self._record_topology(instance)
