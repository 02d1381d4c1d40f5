"""NUMA cell placement of one compute node, a collaborator of its tracker.

The ResourceTracker (resobj.compute.tracker) owns one NUMAPlacement and
calls it through the methods below; the placement knows nothing of the
tracker. It keeps the node's cells (``cells``, a
resobj.compute.cells.NodeCells, or None on a flat node) and the pins of
the consumers placed on them. On a flat node every method leaves
payloads as the payload rules build them. The tracker calls the
in-memory methods under its lock; ``refresh``, ``held_allocations`` and
``reshape_if_flat`` talk to placement and are called by the audit only.

On a NUMA node (see resobj.compute.numa for the rules):

* the node's root provider holds DISK_GB and PCI_DEVICE; each cell's
  child provider holds that cell's VCPU and MEMORY_MB;
* each consumer's VCPU and MEMORY_MB are allocated on the cells it is
  placed on; its placement is, in order of preference, what its
  allocations already name, what the instance's stored topology says,
  or a new fit (cells in id order);
* a node that used to report VCPU and MEMORY_MB on its root provider
  (flat, e.g. under the previous release) is reshaped at its first
  audit: inventory and every allocation move to the cells in one
  transaction, running instances assigned to cells in uuid order.
"""

from oslo_log import log as logging

from resobj.compute import cells as cells_mod
from resobj.compute import exception
from resobj.compute import numa
from resobj.compute import payload as pl
from resobj import exception as resobj_exc
from resobj import objects

LOG = logging.getLogger(__name__)


class NUMAPlacement:
    """Where a node's consumers sit on its NUMA cells."""

    def __init__(self, driver, client, nodename):
        self.driver = driver
        self.client = client
        self.nodename = nodename
        # None: a flat node.
        self.cells = None

    # Set up at each audit.

    def refresh(self, node):
        """Read the driver's NUMA topology; set up the cell providers."""
        reported = self.driver.get_numa_topology(self.nodename)
        if not reported:
            self.cells = None
            node.numa_topology = None
            return
        if self.cells is None or not self.cells.same_cells(reported):
            self.cells = cells_mod.NodeCells(node.uuid, self.nodename,
                                             reported)
        for cell_id, provider in sorted(self.cells.by_cell.items()):
            self.client.ensure_provider(provider,
                                        self.cells.names[cell_id],
                                        parent=node.uuid)
        if node.numa_topology is None:
            # Before the first save: ComputeNode keeps VCPU and MEMORY_MB
            # off the root provider once it has a topology.
            node.numa_topology = self.cells.topology_template()

    @property
    def providers(self):
        """{cell provider uuid: cell id}; empty on a flat node."""
        return self.cells.providers if self.cells is not None else {}

    # Inventory and usage.

    def root_inventory(self, inventory):
        """The root provider's part of a flat node's ``inventory``."""
        if self.cells is None:
            return inventory
        return {rc: inv for rc, inv in inventory.items()
                if rc not in numa.CELL_CLASSES}

    def cell_inventories(self, node, reserved):
        if self.cells is None:
            return {}
        return self.cells.inventories(node, reserved)

    def used_totals(self, payloads):
        """{class: amount} ``payloads`` hold on the cells, summed."""
        if self.cells is None:
            return {}
        return _summed(self.cells.used(payloads))

    def sync_node_topology(self, node, payloads):
        if self.cells is not None:
            node.numa_topology = self.cells.node_topology(payloads)

    # Pins (what the tracker saves and puts back around a claim).

    def pins_of(self, consumer):
        return (self.cells.pins.get(consumer)
                if self.cells is not None else None)

    def set_pins(self, consumer, pins):
        """Put back ``pins`` (from pins_of) for ``consumer``."""
        if self.cells is None:
            return
        if pins is None:
            self.cells.pins.pop(consumer, None)
        else:
            self.cells.pins[consumer] = pins

    def move_pins(self, from_consumer, to_consumer):
        """``to_consumer`` takes ``from_consumer``'s pins (a move's hold)."""
        if self.cells is None:
            return
        pins = self.cells.pins.pop(from_consumer, None)
        if pins:
            self.cells.pins[to_consumer] = pins

    def unpin(self, consumer):
        if self.cells is not None:
            self.cells.unpin(consumer)

    # Payloads.

    def check_flat(self, flavor, consumer):
        if self.cells is None and numa.asks_for_numa(flavor):
            raise exception.ComputeResourcesUnavailable(
                node=self.nodename, consumer=consumer,
                reasons='the flavor asks for NUMA placement (%s or %s) and '
                        'this node has no NUMA topology'
                        % (numa.NUMA_NODES_SPEC, numa.CPU_POLICY_SPEC))

    def payload(self, consumer, flavor, flat_payload, node, reserved,
                others, previous=None, current=None):
        """``flat_payload`` with its VCPU and MEMORY_MB on cells, pinned.

        ``others``: the payloads already placed here. ``previous``: the
        instance's stored topology on this node, if any; ``current``:
        the consumer's allocations as read, kept when they already hold
        the flavor's amounts on this node's cells.
        """
        self.check_flat(flavor, consumer)
        if self.cells is None:
            return flat_payload
        request = numa.request_from_flavor(flavor)
        wanted = {pl.VCPU: request.vcpus, pl.MEMORY_MB: request.memory_mb}
        cells = None
        if current:
            cells = numa.cells_in(current, self.cells.providers)
        if not cells or _summed(cells) != wanted:
            cells = (cells_mod.topology_cells(previous)
                     if previous is not None else None)
        if not cells or _summed(cells) != wanted or \
                any(c not in self.cells.by_cell for c in cells):
            cells = self.cells.place(node, reserved, others, request,
                                     consumer, self.nodename)
        self.cells.pin(consumer, cells, request.pinned,
                       cells_mod.topology_pins(previous))
        return self.on_cells(flat_payload, node.uuid, cells)

    def on_cells(self, payload, root, cells):
        """A flat ``payload`` with VCPU and MEMORY_MB moved to ``cells``."""
        if self.cells is None:
            return payload
        out = {rp: {rc: n for rc, n in amounts.items()
                    if not (rp == root and rc in numa.CELL_CLASSES)}
               for rp, amounts in payload.items()}
        return numa.add_cells(out, cells or {}, self.cells.by_cell)

    def where_it_is(self, flat_payload, root, flavor, current):
        """A payload for a running consumer that fits no cell: charged
        whole to the cells it holds (or the first), not left uncounted.
        """
        cells = numa.cells_in(current, self.cells.providers) or {
            min(self.cells.by_cell): {pl.VCPU: flavor.vcpus,
                                      pl.MEMORY_MB: flavor.memory_mb}}
        return self.on_cells(flat_payload, root, cells)

    def names_cells(self, payload):
        """Whether ``payload`` already names this node's cells."""
        return bool(self.cells is not None and
                    numa.cells_in(payload, self.cells.providers))

    def instance_topology(self, consumer, payload):
        """The InstanceNUMATopology of ``consumer`` holding ``payload``.

        None on a flat node or without a payload.
        """
        if self.cells is None or payload is None:
            return None
        return self.cells.instance_topology(
            consumer, numa.cells_in(payload, self.cells.providers))

    def changed_topologies(self, instances, tracked, skip):
        """[(instance, topology)] whose stored placement differs here.

        ``tracked``: the tracker's {consumer: entry}; instances in
        ``skip`` or mid-move are left alone.
        """
        out = []
        for instance in instances:
            entry = tracked.get(instance.uuid)
            if entry is None or instance.uuid in skip or \
                    instance.new_flavor is not None:
                continue
            topology = self.instance_topology(instance.uuid, entry[0])
            stored = instance.numa_topology
            if (topology.to_dict() if topology else None) != \
                    (stored.to_dict() if stored else None):
                out.append((instance, topology))
        return out

    def reset_pins(self, keep):
        """Forget every pin but those of the consumers in ``keep``."""
        if self.cells is not None:
            self.cells.pins = {c: p for c, p in self.cells.pins.items()
                               if c in keep}

    # Placement reads and the upgrade reshape (the audit's).

    def held_allocations(self, root):
        """{consumer: ConsumerAllocations} on the root and cell providers."""
        held = dict(self.client.get_provider_allocations(root))
        for provider in sorted(self.providers):
            for consumer, entry in self.client.get_provider_allocations(
                    provider).items():
                mine = held.get(consumer)
                if mine is None:
                    held[consumer] = entry
                else:
                    mine.allocations.update(entry.allocations)
        return held

    def reshape_if_flat(self, context, host, node, reserved):
        """Move a formerly flat node's VCPU and MEMORY_MB to its cells.

        Nothing to do unless the node has cells and its root provider
        still has inventory of those classes. Every consumer holding
        them on the root gets them on cells (instances of this node in
        uuid order, fitted as new claims would be; other consumers, such
        as a migration's, by the amounts they hold), all in one reshape:
        either everything moves or nothing does.
        """
        if self.cells is None:
            return False
        root = node.uuid
        root_generation, root_inventory = self.client.get_inventory(root)
        if not set(root_inventory) & set(numa.CELL_CLASSES):
            return False
        instances = {i.uuid: i for i in objects.InstanceList
                     .get_by_host_and_node(context, host, self.nodename)}
        held = self.client.get_provider_allocations(root)
        consumers, placed = {}, []
        for consumer in sorted(held):
            current = self.client.get_allocations(consumer)
            on_root = current.allocations.get(root, {})
            request = _request_for(instances.get(consumer), on_root)
            try:
                cells = self.cells.place(node, reserved, placed, request,
                                         consumer, self.nodename)
            except exception.ComputeResourcesUnavailable as exc:
                raise resobj_exc.NUMAReshapeFailed(node=self.nodename,
                                                   reason=str(exc))
            self.cells.pin(consumer, cells, request.pinned)
            payload = self.on_cells(current.allocations, root, cells)
            placed.append(payload)
            consumers[consumer] = {
                'allocations': payload, 'project_id': current.project_id,
                'user_id': current.user_id,
                'generation': current.generation}
        inventories = {root: (root_generation,
                              self.root_inventory(root_inventory))}
        for provider, inventory in self.cell_inventories(
                node, reserved).items():
            generation, _current = self.client.get_inventory(provider)
            inventories[provider] = (generation, inventory)
        LOG.info('Reshaping %s: VCPU and MEMORY_MB and the allocations of '
                 '%d consumer(s) move to %d NUMA cell provider(s)',
                 self.nodename, len(consumers), len(self.cells.by_cell))
        self.client.reshape(inventories, consumers)
        return True


def save_topologies(topologies):
    """Store each (instance, topology) of changed_topologies."""
    for instance, topology in topologies:
        instance.numa_topology = topology
        try:
            instance.save()
        except resobj_exc.InstanceNotFound:
            continue  # deleted meanwhile: the next audit drops it


def _summed(cells):
    totals = {}
    for amounts in cells.values():
        for rc, amount in amounts.items():
            totals[rc] = totals.get(rc, 0) + amount
    return totals


def _request_for(instance, on_root):
    """The NUMA Request for amounts ``on_root`` held by a consumer.

    An instance's flavor says how many cells and whether pinned; the
    amounts are what it holds (the allocation, not the flavor, is what
    moves). Anything else takes one cell, floating.
    """
    vcpus = on_root.get(pl.VCPU, 0)
    memory = on_root.get(pl.MEMORY_MB, 0)
    if instance is None or instance.flavor is None:
        return numa.Request(vcpus, memory)
    try:
        wanted = numa.request_from_flavor(instance.flavor)
    except resobj_exc.InvalidFlavorExtraSpec:
        return numa.Request(vcpus, memory)
    nodes = wanted.nodes if not (vcpus % wanted.nodes or
                                 memory % wanted.nodes) else 1
    return numa.Request(vcpus, memory, nodes, wanted.pinned)
