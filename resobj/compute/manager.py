"""Compute-manager operations, on objects (the compute-manager spec).

Each operation reads and writes Instance, Migration, Service and
ComputeNode objects, never dicts, and leaves resource bookkeeping to the
trackers of the nodes involved. ``trackers`` maps (host, node) to a
ResourceTracker: a compute host owns its own nodes' trackers, and the
simulator holds every node's.
"""

from oslo_log import log as logging

from resobj.compute import exception
from resobj.compute import usage
from resobj import objects

LOG = logging.getLogger(__name__)

# Live migration statuses (placement-era nova's).
LIVE_ACCEPTED = 'accepted'
LIVE_RUNNING = 'running'
LIVE_DONE = 'completed'
LIVE_FAILED = 'error'


def delete_compute_service(context, host):
    """Delete the compute service of ``host`` and its compute node.

    ``Service.get_by_compute_host`` -> ``service.compute_node.destroy()``:
    the node's destroy also removes its resource provider, and refuses
    (ComputeNodeInUse) while anything is allocated on it -- then the
    service stays too.
    """
    service = objects.Service.get_by_compute_host(context, host)
    service.compute_node.destroy()
    service.destroy()
    return service


class ComputeManager:

    def __init__(self, trackers):
        self.trackers = trackers

    def tracker_of(self, host, node):
        return self.trackers[(host, node)]

    # Boot and delete.

    def build_instance(self, context, instance, host, node,
                       pci_requests=None):
        """Claim on (host, node), then 'spawn'; the claim aborts on error."""
        tracker = self.tracker_of(host, node)
        with tracker.instance_claim(context, instance, pci_requests):
            spawn = getattr(tracker.driver, 'spawn', None)
            if spawn is not None:
                spawn(instance.uuid, instance.flavor.memory_mb)
            instance.vm_state = 'active'
            instance.save()
        return instance

    def delete_instance(self, context, instance):
        tracker = self.tracker_of(instance.host, instance.node)
        destroy = getattr(tracker.driver, 'destroy', None)
        if destroy is not None:
            destroy(instance.uuid)
        tracker.remove_instance(context, instance)
        instance.vm_state = 'deleted'
        instance.save()
        instance.destroy()

    # Resize and cold migration.

    def resize_instance(self, context, instance, dest_host, dest_node,
                        new_flavor=None, pci_requests=None):
        """Claim on the destination and finish the move (status finished).

        The source keeps the old flavor (migration consumer) until
        confirm_resize or revert_resize.
        """
        dest = self.tracker_of(dest_host, dest_node)
        claim = dest.resize_claim(context, instance,
                                  new_flavor or instance.flavor,
                                  pci_requests=pci_requests)
        with claim:
            self._source_follows(context, instance, claim.migration)
            self._finish(context, instance, claim.migration, dest)
        return claim.migration

    def _source_follows(self, context, instance, migration):
        source = self.trackers.get((migration.source_compute,
                                    migration.source_node))
        if source is not None:
            source.track_outgoing(context, instance, migration)

    def _finish(self, context, instance, migration, dest):
        source = self.trackers.get((migration.source_compute,
                                    migration.source_node))
        src_driver = getattr(source, 'driver', None)
        if source is not dest and hasattr(src_driver, 'destroy'):
            src_driver.destroy(instance.uuid)
        instance.host, instance.node = dest.host, dest.nodename
        instance.flavor = instance.new_flavor or instance.flavor
        instance.save()
        migration.status = 'finished'
        migration.save()
        if hasattr(dest.driver, 'spawn'):
            dest.driver.spawn(instance.uuid, instance.flavor.memory_mb)

    def confirm_resize(self, context, instance, migration):
        source = self.tracker_of(migration.source_compute,
                                 migration.source_node)
        source.drop_move_claim(context, instance, migration, prefix='old')

    def revert_resize(self, context, instance, migration):
        dest = self.tracker_of(migration.dest_compute, migration.dest_node)
        source = self.trackers.get((migration.source_compute,
                                    migration.source_node))
        if source is not dest and hasattr(dest.driver, 'destroy'):
            dest.driver.destroy(instance.uuid)
        dest.drop_move_claim(context, instance, migration, prefix='new')
        if source is not None and source is not dest:
            source.adopt(instance)
            if hasattr(source.driver, 'spawn'):
                source.driver.spawn(instance.uuid,
                                    instance.flavor.memory_mb)

    # Live migration.

    def check_can_live_migrate_destination(self, context, instance,
                                           dest_host, dest_node):
        """Check the destination; return the Migration that records it.

        Refuses (MigrationPreCheckError) a move to the instance's own
        node, a destination without room (named shortages) or one that
        does not see the same shared storage as the source for an
        instance whose disks live there.
        """
        if (instance.host, instance.node) == (dest_host, dest_node):
            raise exception.MigrationPreCheckError(
                instance=instance.uuid,
                reason='the instance already runs on %s' % dest_node)
        dest = self.tracker_of(dest_host, dest_node)
        source = self.trackers.get((instance.host, instance.node))
        payload = dest._payload(instance.flavor, instance, 0)
        with dest.lock:
            short = usage.shortages(
                dest.provider, usage.capacity(dest.inventory()),
                dest.usage.totals(), payload.get(dest.provider, {}))
        if short:
            raise exception.MigrationPreCheckError(
                instance=instance.uuid, reason=str(
                    exception.ComputeResourcesUnavailable(
                        node=dest_node, consumer=instance.uuid,
                        shortages=short)))
        if source is not None and not instance.booted_from_volume and \
                source.sharing_provider != dest.sharing_provider:
            raise exception.MigrationPreCheckError(
                instance=instance.uuid,
                reason='source and destination do not share storage (%s '
                       'vs %s); block migration is not supported'
                       % (source.sharing_provider, dest.sharing_provider))
        migration = objects.Migration(
            context, instance_uuid=instance.uuid,
            source_compute=instance.host, source_node=instance.node,
            dest_compute=dest_host, dest_node=dest_node, dest_host=dest_host,
            old_instance_type_id=instance.flavor.id,
            new_instance_type_id=instance.flavor.id,
            migration_type='live-migration', status=LIVE_ACCEPTED)
        migration.create()
        return migration

    def check_can_live_migrate_source(self, context, instance, migration):
        """The instance must still be where the migration says, idle."""
        current = objects.Instance.get_by_uuid(context, instance.uuid)
        if (current.host, current.node) != (migration.source_compute,
                                            migration.source_node):
            raise exception.MigrationPreCheckError(
                instance=instance.uuid,
                reason='instance moved to %s/%s since the check'
                       % (current.host, current.node))
        if current.task_state not in (None, 'migrating'):
            raise exception.MigrationPreCheckError(
                instance=instance.uuid,
                reason='instance is busy (%s)' % current.task_state)

    def live_migration(self, context, instance, migration):
        """Claim on the destination, move, and clean up the source."""
        self.check_can_live_migrate_source(context, instance, migration)
        instance.task_state = 'migrating'
        instance.save(expected_task_state=[None])
        dest = self.tracker_of(migration.dest_compute, migration.dest_node)
        try:
            claim = dest.resize_claim(context, instance, instance.flavor,
                                      migration=migration)
        except Exception:
            self._rollback_live_migration(context, instance, migration)
            raise
        migration.status = LIVE_RUNNING
        migration.save()
        self._source_follows(context, instance, claim.migration)
        self._post_live_migration(context, instance, claim.migration, dest)
        return claim.migration

    def _post_live_migration(self, context, instance, migration, dest):
        source = self.tracker_of(migration.source_compute,
                                 migration.source_node)
        if hasattr(source.driver, 'destroy'):
            source.driver.destroy(instance.uuid)
        instance.host, instance.node = dest.host, dest.nodename
        instance.task_state = None
        instance.save()
        if hasattr(dest.driver, 'spawn'):
            dest.driver.spawn(instance.uuid, instance.flavor.memory_mb)
        migration.status = 'finished'
        migration.save()
        source.drop_move_claim(context, instance, migration, prefix='old')
        migration.status = LIVE_DONE
        migration.save()

    def _rollback_live_migration(self, context, instance, migration):
        instance.task_state = None
        instance.save()
        migration.status = LIVE_FAILED
        migration.save()
        LOG.warning('Live migration of %s to %s rolled back',
                    instance.uuid, migration.dest_node)
