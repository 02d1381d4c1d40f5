"""What a node should hold, worked out from instances and migrations.

Pure functions over objects (no I/O): given the node's instances, its
in-progress migrations and the instances those migrations move, list
every consumer whose resources the node is responsible for, with the
flavor to charge. The tracker turns each into an allocation payload;
``reconcile`` then makes placement agree, through a reporting client.

Who holds what during a move from S to D (the allocations spec):

* the instance consumer follows the instance to D as soon as the
  destination claims (new flavor);
* the migration consumer (the migration's uuid) keeps the old flavor on
  S until the move is confirmed or reverted;
* a same-node resize holds both, on the one node.
"""

import collections

from oslo_log import log as logging

from resobj.compute import exception

LOG = logging.getLogger(__name__)

# Statuses before the instance runs on the destination.
PRE_FINISH = frozenset({'accepted', 'queued', 'pre-migrating', 'preparing',
                        'migrating', 'running', 'post-migrating'})

Tracked = collections.namedtuple(
    'Tracked', 'consumer instance flavor kind migration')


def _is_here(host, node, host_name, node_name):
    return host == host_name and node == node_name


def newest_per_instance(migrations):
    newest = {}
    for migration in migrations:
        known = newest.get(migration.instance_uuid)
        if known is None or migration.id > known.id:
            newest[migration.instance_uuid] = migration
    return newest


def old_flavor(instance):
    return instance.old_flavor or instance.flavor


def new_flavor(instance):
    return instance.new_flavor or instance.flavor


def tracked_consumers(host, node, instances, migrations, moved_instances,
                      skip_states=('deleted', 'soft-delete', 'shelved_'
                                   'offloaded')):
    """[Tracked] for ``node`` of ``host``.

    ``instances`` are on the node; ``migrations`` are in progress into
    or out of it; ``moved_instances`` maps uuid -> Instance for the
    migrations' instances that are not on the node.
    """
    by_instance = newest_per_instance(migrations)
    out = []
    seen = set()
    for instance in instances:
        if instance.vm_state in skip_states:
            continue
        seen.add(instance.uuid)
        migration = by_instance.get(instance.uuid)
        if migration is None:
            out.append(Tracked(instance.uuid, instance, instance.flavor,
                               'instance', None))
            continue
        outgoing = _is_here(migration.source_compute, migration.source_node,
                            host, node)
        incoming = _is_here(migration.dest_compute, migration.dest_node,
                            host, node)
        if outgoing and not incoming and migration.status in PRE_FINISH:
            # Still here, but the destination holds the instance consumer.
            out.append(Tracked(migration.uuid, instance,
                               old_flavor(instance), 'migration', migration))
            continue
        flavor = (new_flavor(instance) if incoming and
                  migration.status in PRE_FINISH else instance.flavor)
        out.append(Tracked(instance.uuid, instance, flavor, 'instance',
                           migration))
        if outgoing and incoming:
            out.append(Tracked(migration.uuid, instance,
                               old_flavor(instance), 'migration',
                               migration))
    for uuid, migration in sorted(by_instance.items()):
        instance = moved_instances.get(uuid)
        if uuid in seen or instance is None or \
                instance.vm_state in skip_states:
            continue
        if _is_here(migration.dest_compute, migration.dest_node, host,
                    node) and migration.status in PRE_FINISH:
            out.append(Tracked(uuid, instance, new_flavor(instance),
                               'instance', migration))
        elif _is_here(migration.source_compute, migration.source_node,
                      host, node):
            out.append(Tracked(migration.uuid, instance,
                               old_flavor(instance), 'migration',
                               migration))
    return out


def current(consumer, held, shared):
    """(allocations, consumer generation) of ``consumer`` as read.

    ``held`` and ``shared``: {consumer: ConsumerAllocations} on the
    node's providers and on its shared pool.
    """
    allocations = {}
    generation = None
    for source in (held, shared):
        entry = source.get(consumer)
        if entry is not None:
            allocations.update(entry.allocations)
            generation = entry.generation
    return allocations, generation


def reconcile(client, nodename, held, shared, wanted, skip):
    """Make placement hold ``wanted`` and nothing else on the node.

    ``wanted``: {consumer: (payload, project, user, instance uuid)}.
    PUTs each consumer whose allocations differ, DELETEs those held on
    the node that nothing wants, but none of ``skip`` (consumers an
    operation touched meanwhile). Every write is a compare-and-swap on
    the generation read with ``held``, before the rows.
    """
    for consumer, (payload, project, user, _iuuid) in sorted(
            wanted.items()):
        allocations, generation = current(consumer, held, shared)
        if allocations == payload:
            continue
        LOG.info('Correcting allocations of %s on %s: %s -> %s',
                 consumer, nodename, allocations, payload)
        _write(client, nodename, consumer, payload, project, user,
               generation)
    for consumer in sorted(set(held) - set(wanted) - skip):
        entry = held[consumer]
        project, user = entry.project_id, entry.user_id
        if project is None:
            # A provider's allocation listing does not name owners over
            # HTTP; the write must restate them. The generation stays
            # the one read before the instances.
            owner = client.get_allocations(consumer)
            project, user = owner.project_id, owner.user_id
        if project is None:
            continue  # gone meanwhile
        LOG.info('Deleting stale allocations of %s on %s', consumer,
                 nodename)
        _write(client, nodename, consumer, {}, project, user,
               entry.generation)


def _write(client, nodename, consumer, payload, project, user, generation):
    try:
        client.put_allocations(consumer, payload, project, user,
                               generation=generation)
    except exception.AllocationConflict as exc:
        # Changed under us (a move, a delete) or does not fit: the next
        # audit sees the new state and tries again.
        LOG.warning('Allocations of %s not corrected on %s: %s',
                    consumer, nodename, exc)
