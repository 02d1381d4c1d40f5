"""Compute-manager operations, on objects (the compute-manager spec).

Each operation reads and writes Instance, Migration, Service and
ComputeNode objects, never dicts, and leaves resource bookkeeping to the
trackers of the nodes involved. ``trackers`` maps (host, node) to a
ResourceTracker: a compute host owns its own nodes' trackers, and the
simulator holds every node's.

A step that belongs to a node this manager does not hold goes to that
node's compute service over RPC (``compute_rpcapi``): the same step, run
by the peer's manager on its own tracker. ``ComputeEndpoint`` is what a
``resobj-compute`` serves to its peers.
"""

from oslo_log import log as logging
import oslo_messaging as messaging

from resobj.compute import exception
from resobj.compute import outcome
from resobj.compute import pci
from resobj.compute import usage
from resobj import exception as resobj_exc
from resobj import objects
from resobj import rpc

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

    def __init__(self, trackers, compute_rpcapi=None):
        self.trackers = trackers
        self.compute_rpcapi = compute_rpcapi

    def tracker_of(self, host, node):
        return self.trackers[(host, node)]

    def _remote(self, host, node):
        """Whether (host, node) is a peer's, to be reached over RPC.

        Without an RPC client, a node this manager does not hold is
        nobody's (a simulator's dead host): its part of a move is skipped,
        or, for a node that must act, tracker_of() raises.
        """
        return (host, node) not in self.trackers and \
            self.compute_rpcapi is not None

    def _local(self, host, node):
        return (host, node) in self.trackers

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
        confirm_resize or revert_resize. Returns the Migration.
        """
        new_flavor = new_flavor or instance.flavor
        if self._remote(dest_host, dest_node):
            return self.compute_rpcapi.prep_resize(
                context, dest_host, instance, new_flavor, dest_node,
                pci_requests)
        return self.prep_resize(context, instance, new_flavor, dest_host,
                                dest_node, pci_requests)

    def prep_resize(self, context, instance, new_flavor, dest_host,
                    dest_node, pci_requests=None):
        """The destination's part: claim, the source follows, finish.

        A failure of the source's part aborts the claim.
        """
        dest = self.tracker_of(dest_host, dest_node)
        claim = dest.resize_claim(context, instance, new_flavor,
                                  pci_requests=pci_requests)
        with claim:
            self._source_follows(context, instance, claim.migration)
            self._finish(context, instance, claim.migration, dest)
        return claim.migration

    def _source_follows(self, context, instance, migration):
        host, node = migration.source_compute, migration.source_node
        if (host, node) == (migration.dest_compute, migration.dest_node):
            # A resize on the spot: the destination's claim holds both.
            self.tracker_of(host, node).track_outgoing(context, instance,
                                                       migration)
        elif self._remote(host, node):
            self.compute_rpcapi.resize_source(context, host, instance,
                                              migration)
        elif self._local(host, node):
            self.resize_source(context, instance, migration)

    def resize_source(self, context, instance, migration):
        """The source's part: keep the old flavor, stop the guest here."""
        source = self.tracker_of(migration.source_compute,
                                 migration.source_node)
        source.track_outgoing(context, instance, migration)
        if hasattr(source.driver, 'destroy'):
            source.driver.destroy(instance.uuid)

    def _finish(self, context, instance, migration, dest):
        instance.host, instance.node = dest.host, dest.nodename
        instance.flavor = instance.new_flavor or instance.flavor
        # Its cells on the destination (None on a flat node), and the PCI
        # requests of the flavor it now has.
        instance.numa_topology = dest.instance_topology_of(instance.uuid)
        instance.pci_requests = pci.recorded_requests(
            instance.flavor)
        instance.save()
        migration.status = 'finished'
        migration.save()
        if hasattr(dest.driver, 'spawn'):
            dest.driver.spawn(instance.uuid, instance.flavor.memory_mb)

    def confirm_resize(self, context, instance, migration):
        host, node = migration.source_compute, migration.source_node
        if self._remote(host, node):
            return self.compute_rpcapi.confirm_resize(context, host,
                                                      instance, migration)
        return self.confirm_resize_here(context, instance, migration)

    def confirm_resize_here(self, context, instance, migration):
        source = self.tracker_of(migration.source_compute,
                                 migration.source_node)
        source.drop_move_claim(context, instance, migration, prefix='old')

    def revert_resize(self, context, instance, migration):
        host, node = migration.dest_compute, migration.dest_node
        if self._remote(host, node):
            return self.compute_rpcapi.revert_resize(context, host,
                                                     instance, migration)
        return self.revert_resize_here(context, instance, migration)

    def revert_resize_here(self, context, instance, migration):
        """The destination's part of a revert, then the source's."""
        host, node = migration.dest_compute, migration.dest_node
        dest = self.tracker_of(host, node)
        same_node = (migration.source_compute, migration.source_node) == \
            (host, node)
        if not same_node and hasattr(dest.driver, 'destroy'):
            dest.driver.destroy(instance.uuid)
        dest.drop_move_claim(context, instance, migration, prefix='new')
        if same_node:
            return
        source_host = migration.source_compute
        if self._remote(source_host, migration.source_node):
            self.compute_rpcapi.finish_revert_resize(
                context, source_host, instance, migration)
        elif self._local(source_host, migration.source_node):
            self.finish_revert_resize(context, instance, migration)

    def finish_revert_resize(self, context, instance, migration):
        """The source's part of a revert: the instance is back here."""
        source = self.tracker_of(migration.source_compute,
                                 migration.source_node)
        source.adopt(instance, migration)
        if 'numa_topology' in instance.obj_what_changed():
            instance.save()
        if hasattr(source.driver, 'spawn'):
            source.driver.spawn(instance.uuid, instance.flavor.memory_mb)

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
        if self._remote(dest_host, dest_node):
            return self.compute_rpcapi.check_can_live_migrate_destination(
                context, dest_host, instance, dest_node)
        return self.check_destination_here(context, instance, dest_host,
                                           dest_node)

    def check_destination_here(self, context, instance, dest_host,
                               dest_node):
        dest = self.tracker_of(dest_host, dest_node)
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
        if not instance.booted_from_volume:
            if self._remote(instance.host, instance.node):
                self.compute_rpcapi.check_shared_storage(
                    context, instance.host, instance, instance.node,
                    dest.sharing_provider)
            elif self._local(instance.host, instance.node):
                self.check_shared_storage(context, instance, instance.node,
                                          dest.sharing_provider)
        migration = objects.Migration(
            context, instance_uuid=instance.uuid,
            source_compute=instance.host, source_node=instance.node,
            dest_compute=dest_host, dest_node=dest_node, dest_host=dest_host,
            old_instance_type_id=instance.flavor.id,
            new_instance_type_id=instance.flavor.id,
            migration_type='live-migration', status=LIVE_ACCEPTED)
        migration.create()
        return migration

    def check_shared_storage(self, context, instance, node,
                             sharing_provider):
        """On the source: its disks must be where the destination's are."""
        source = self.tracker_of(instance.host, node)
        if source.sharing_provider != sharing_provider:
            raise exception.MigrationPreCheckError(
                instance=instance.uuid,
                reason='source and destination do not share storage (%s '
                       'vs %s); block migration is not supported'
                       % (source.sharing_provider, sharing_provider))

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
        host, node = migration.source_compute, migration.source_node
        if self._remote(host, node):
            return self.compute_rpcapi.live_migration(context, host,
                                                      instance, migration)
        return self.live_migration_here(context, instance, migration)

    def live_migration_here(self, context, instance, migration):
        """The source's side of a live migration; it drives the move."""
        self.check_can_live_migrate_source(context, instance, migration)
        instance.task_state = 'migrating'
        instance.save(expected_task_state=[None])
        dest_host, dest_node = migration.dest_compute, migration.dest_node
        try:
            if self._remote(dest_host, dest_node):
                migration = self.compute_rpcapi.pre_live_migration(
                    context, dest_host, instance, migration)
            else:
                migration = self.pre_live_migration(context, instance,
                                                    migration)
        except Exception:
            self._rollback_live_migration(context, instance, migration)
            raise
        migration.status = LIVE_RUNNING
        migration.save()
        try:
            self._source_follows(context, instance, migration)
        except Exception:
            self._rollback_at_destination(context, instance, migration)
            self._rollback_live_migration(context, instance, migration)
            raise
        self._post_live_migration(context, instance, migration)
        return migration

    def pre_live_migration(self, context, instance, migration):
        """On the destination: claim the instance's resources here."""
        dest = self.tracker_of(migration.dest_compute, migration.dest_node)
        claim = dest.resize_claim(context, instance, instance.flavor,
                                  migration=migration)
        return claim.migration

    def _post_live_migration(self, context, instance, migration):
        source = self.tracker_of(migration.source_compute,
                                 migration.source_node)
        instance.host, instance.node = (migration.dest_compute,
                                        migration.dest_node)
        instance.task_state = None
        instance.save()
        if self._remote(migration.dest_compute, migration.dest_node):
            self.compute_rpcapi.post_live_migration_at_destination(
                context, migration.dest_compute, instance, migration)
        else:
            self.post_live_migration_at_destination(context, instance,
                                                    migration)
        migration.status = 'finished'
        migration.save()
        source.drop_move_claim(context, instance, migration, prefix='old')
        migration.status = LIVE_DONE
        migration.save()

    def post_live_migration_at_destination(self, context, instance,
                                           migration):
        """On the destination: the guest runs here now."""
        dest = self.tracker_of(migration.dest_compute, migration.dest_node)
        if hasattr(dest.driver, 'spawn'):
            dest.driver.spawn(instance.uuid, instance.flavor.memory_mb)

    def _rollback_at_destination(self, context, instance, migration):
        if self._remote(migration.dest_compute, migration.dest_node):
            self.compute_rpcapi.rollback_live_migration_at_destination(
                context, migration.dest_compute, instance, migration)
        else:
            self.rollback_live_migration_at_destination(context, instance,
                                                        migration)

    def rollback_live_migration_at_destination(self, context, instance,
                                               migration):
        """On the destination: give back what pre_live_migration took."""
        dest = self.tracker_of(migration.dest_compute, migration.dest_node)
        dest.drop_move_claim(context, instance, migration, prefix='new')
        if hasattr(dest.driver, 'destroy'):
            dest.driver.destroy(instance.uuid)

    def _rollback_live_migration(self, context, instance, migration):
        instance.task_state = None
        instance.save()
        migration.status = LIVE_FAILED
        migration.save()
        LOG.warning('Live migration of %s to %s rolled back',
                    instance.uuid, migration.dest_node)


class ComputeEndpoint:
    """What a resobj-compute serves its peers (compute RPC API 1.1).

    Each method is one node's part of a move and runs on this host's own
    trackers only, so a misrouted call fails instead of being passed on.

    From 1.1 every state-changing method takes ``idempotency_key``: the
    first call with a key runs, a repeat answers what it did
    (``outcomes``, a bounded in-memory resobj.compute.outcome record). A
    restart forgets the record; then a repeat is safe where the method
    is idempotent by construction: a build of an instance this node
    already runs answers that instance, a delete of an instance already
    gone, a confirm or revert of a migration already confirmed or
    reverted, a resize or live migration claim already made, a live
    migration already completed or rolled back, do nothing again.
    1.0 callers send no key and get the 1.0 behaviour, checks and all
    left out.
    """

    target = messaging.Target(version='1.1')

    def __init__(self, manager, host, outcomes=None):
        self.manager = manager
        self.host = host
        self.outcomes = outcomes or outcome.OutcomeRecord()

    def _once(self, key, guarded, plain, *args):
        """``guarded(*args)`` once per ``key``; ``plain`` for 1.0 callers.

        ``guarded`` is ``plain`` with the check that makes a repeat after
        a restart (the record forgotten) do nothing again.
        """
        if key is None:
            return plain(*args)
        return self.outcomes.run(key, guarded, *args)

    def _unless(self, statuses, fn):
        """``fn`` unless the stored migration is already in ``statuses``."""
        def guarded(context, instance, migration):
            stored = objects.Migration.get_by_uuid(context, migration.uuid)
            if stored.status in statuses:
                LOG.info('Migration %s already %s: nothing to do again',
                         migration.uuid, stored.status)
                return stored
            return fn(context, instance, migration)
        return guarded

    @rpc.endpoint_method
    def build_instance(self, context, instance, node, pci_requests=None,
                       idempotency_key=None):
        return self._once(idempotency_key, self._build,
                          self.manager.build_instance, context, instance,
                          self.host, node, pci_requests)

    def _build(self, context, instance, host, node, pci_requests):
        tracker = self.manager.tracker_of(host, node)
        if instance.uuid in tracker.tracked:
            stored = objects.Instance.get_by_uuid(context, instance.uuid)
            if (stored.host, stored.node, stored.vm_state) == (
                    host, node, 'active'):
                LOG.info('Build of %s: already running on %s, not built '
                         'again', instance.uuid, node)
                return stored
        return self.manager.build_instance(context, instance, host, node,
                                           pci_requests)

    @rpc.endpoint_method
    def delete_instance(self, context, instance, idempotency_key=None):
        self._once(idempotency_key, self._delete,
                   self.manager.delete_instance, context, instance)

    def _delete(self, context, instance):
        try:
            objects.Instance.get_by_uuid(context, instance.uuid)
        except resobj_exc.InstanceNotFound:
            LOG.info('Delete of %s: already deleted', instance.uuid)
            return
        self.manager.delete_instance(context, instance)

    @rpc.endpoint_method
    def prep_resize(self, context, instance, new_flavor, node,
                    pci_requests=None, idempotency_key=None):
        return self._once(idempotency_key, self._prep_resize,
                          self.manager.prep_resize, context, instance,
                          new_flavor, self.host, node, pci_requests)

    def _prep_resize(self, context, instance, new_flavor, host, node,
                     pci_requests):
        for migration in objects.MigrationList \
                .get_in_progress_by_host_and_node(context, host, node):
            if migration.instance_uuid == instance.uuid and \
                    migration.status == 'finished' and \
                    (migration.dest_compute, migration.dest_node) == (
                        host, node):
                LOG.info('Resize of %s to %s: already finished, not '
                         'claimed again', instance.uuid, node)
                return migration
        return self.manager.prep_resize(context, instance, new_flavor,
                                        host, node, pci_requests)

    @rpc.endpoint_method
    def resize_source(self, context, instance, migration,
                      idempotency_key=None):
        # Idempotent as it is: the source holds what placement says.
        self._once(idempotency_key, self.manager.resize_source,
                   self.manager.resize_source, context, instance,
                   migration)

    @rpc.endpoint_method
    def confirm_resize(self, context, instance, migration,
                       idempotency_key=None):
        plain = self.manager.confirm_resize_here
        self._once(idempotency_key, self._unless(('confirmed',), plain),
                   plain, context, instance, migration)

    @rpc.endpoint_method
    def revert_resize(self, context, instance, migration,
                      idempotency_key=None):
        plain = self.manager.revert_resize_here
        self._once(idempotency_key, self._unless(('reverted',), plain),
                   plain, context, instance, migration)

    @rpc.endpoint_method
    def finish_revert_resize(self, context, instance, migration,
                             idempotency_key=None):
        # Idempotent as it is: the source recomputes the instance's hold.
        self._once(idempotency_key, self.manager.finish_revert_resize,
                   self.manager.finish_revert_resize, context, instance,
                   migration)

    @rpc.endpoint_method
    def check_can_live_migrate_destination(self, context, instance, node):
        return self.manager.check_destination_here(context, instance,
                                                   self.host, node)

    @rpc.endpoint_method
    def check_shared_storage(self, context, instance, node,
                             sharing_provider):
        self.manager.check_shared_storage(context, instance, node,
                                          sharing_provider)

    @rpc.endpoint_method
    def live_migration(self, context, instance, migration,
                       idempotency_key=None):
        plain = self.manager.live_migration_here
        return self._once(idempotency_key,
                          self._unless((LIVE_DONE,), plain), plain,
                          context, instance, migration)

    @rpc.endpoint_method
    def pre_live_migration(self, context, instance, migration,
                           idempotency_key=None):
        # 'pre-migrating' and later: the destination's claim was made.
        plain = self.manager.pre_live_migration
        return self._once(idempotency_key, self._unless(
            ('pre-migrating', LIVE_RUNNING, 'finished', LIVE_DONE), plain),
            plain, context, instance, migration)

    @rpc.endpoint_method
    def post_live_migration_at_destination(self, context, instance,
                                           migration, idempotency_key=None):
        # Idempotent as it is: the guest is started here again.
        plain = self.manager.post_live_migration_at_destination
        self._once(idempotency_key, plain, plain, context, instance,
                   migration)

    @rpc.endpoint_method
    def rollback_live_migration_at_destination(self, context, instance,
                                               migration,
                                               idempotency_key=None):
        plain = self.manager.rollback_live_migration_at_destination
        self._once(idempotency_key,
                   self._unless(('reverted', LIVE_FAILED), plain), plain,
                   context, instance, migration)
