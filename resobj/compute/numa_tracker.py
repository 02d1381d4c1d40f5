"""The NUMA and PCI-request part of the ResourceTracker.

A mixin of ResourceTracker (resobj.compute.tracker), kept apart so the
tracker stays readable. On a flat node (``self.cells`` is None) every
method here leaves payloads as the payload rules build them.

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


class NUMAMixin:

    # Set up at each audit (_ensure_node).

    def _refresh_cells(self):
        """Read the driver's NUMA topology; set up the cell providers."""
        reported = self.driver.get_numa_topology(self.nodename)
        if not reported:
            self.cells = None
            self.node.numa_topology = None
            return
        if self.cells is None or not self.cells.same_cells(reported):
            self.cells = cells_mod.NodeCells(self.node.uuid, self.nodename,
                                             reported)
        for cell_id, provider in sorted(self.cells.by_cell.items()):
            self.client.ensure_provider(provider,
                                        self.cells.names[cell_id],
                                        parent=self.node.uuid)
        if self.node.numa_topology is None:
            # Before the first save: ComputeNode keeps VCPU and MEMORY_MB
            # off the root provider once it has a topology.
            self.node.numa_topology = self.cells.topology_template()

    def _root_inventory(self, inventory):
        if self.cells is None:
            return inventory
        return {rc: inv for rc, inv in inventory.items()
                if rc not in numa.CELL_CLASSES}

    def _cell_inventories(self):
        if self.cells is None:
            return {}
        return self.cells.inventories(self.node, self._reserved())

    def _numa_used_totals(self):
        """{class: amount} the consumers hold on the cells, summed."""
        if self.cells is None:
            return {}
        return _summed(self.cells.used(
            [entry[0] for entry in self.tracked.values()]))

    def _sync_node_topology(self):
        if self.cells is not None:
            self.node.numa_topology = self.cells.node_topology(
                [entry[0] for entry in self.tracked.values()])

    # Payloads.

    def _others(self, consumer):
        return [entry[0] for c, entry in self.tracked.items()
                if c != consumer]

    def _check_flat(self, flavor, consumer):
        if self.cells is None and numa.asks_for_numa(flavor):
            raise exception.ComputeResourcesUnavailable(
                node=self.nodename, consumer=consumer,
                reasons='the flavor asks for NUMA placement (%s or %s) and '
                        'this node has no NUMA topology'
                        % (numa.NUMA_NODES_SPEC, numa.CPU_POLICY_SPEC))

    def _place(self, consumer, flavor, instance, others, current=None):
        """{cell id: amounts} for ``consumer`` of ``flavor``, pins recorded.

        ``current``: the consumer's allocations as read, kept when they
        already hold the flavor's amounts on this node's cells.
        """
        request = numa.request_from_flavor(flavor)
        wanted = {pl.VCPU: request.vcpus, pl.MEMORY_MB: request.memory_mb}
        previous = None
        if instance is not None and instance.obj_attr_is_set(
                'numa_topology') and instance.numa_topology is not None and \
                instance.node == self.nodename:
            previous = instance.numa_topology
        cells = None
        if current:
            cells = numa.cells_in(current, self.cells.providers)
        if not cells or _summed(cells) != wanted:
            cells = (cells_mod.topology_cells(previous)
                     if previous is not None else None)
        if not cells or _summed(cells) != wanted or \
                any(c not in self.cells.by_cell for c in cells):
            cells = self.cells.place(self.node, self._reserved(), others,
                                     request, consumer, self.nodename)
        self.cells.pin(consumer, cells, request.pinned,
                       cells_mod.topology_pins(previous))
        return cells

    def _numa_payload(self, payload, cells):
        """A flat ``payload`` with VCPU and MEMORY_MB moved to ``cells``."""
        if self.cells is None:
            return payload
        out = {rp: {rc: n for rc, n in amounts.items()
                    if not (rp == self.provider and
                            rc in numa.CELL_CLASSES)}
               for rp, amounts in payload.items()}
        return numa.add_cells(out, cells or {}, self.cells.by_cell)

    def _claim_payload(self, consumer, flavor, instance, pci_count,
                       current=None, others=None, placed_here=True):
        """The payload of a new claim (or audit) of ``consumer`` here.

        ``placed_here``: whether ``instance``'s stored topology, if any,
        describes its placement on this node (not so for a move's
        destination, which places the instance anew).
        """
        self._check_flat(flavor, consumer)
        payload = self._payload(flavor, instance, pci_count)
        if self.cells is None:
            return payload
        cells = self._place(consumer, flavor,
                            instance if placed_here else None,
                            self._others(consumer) if others is None
                            else others, current)
        return self._numa_payload(payload, cells)

    def instance_topology_of(self, consumer):
        """The InstanceNUMATopology ``consumer`` is tracked with here.

        None on a flat node or for a consumer not tracked here.
        """
        if self.cells is None or consumer not in self.tracked:
            return None
        return self.cells.instance_topology(
            consumer, numa.cells_in(self.tracked[consumer][0],
                                    self.cells.providers))

    def _record_topology(self, instance):
        """Put the instance's placement here on it (not saved)."""
        instance.numa_topology = self.instance_topology_of(instance.uuid)

    # The audit.

    def _held_allocations(self):
        """{consumer: ConsumerAllocations} on the root and cell providers."""
        held = dict(self.client.get_provider_allocations(self.provider))
        for provider in sorted(self.cells.providers if self.cells else ()):
            for consumer, entry in self.client.get_provider_allocations(
                    provider).items():
                mine = held.get(consumer)
                if mine is None:
                    held[consumer] = entry
                else:
                    mine.allocations.update(entry.allocations)
        return held

    def _audit_payload(self, item, count, held, shared, wanted):
        if self.cells is None or item.flavor is None:
            return self._payload(item.flavor, item.instance, count)
        current, _gen = self._current(item.consumer, held, shared)
        try:
            return self._claim_payload(
                item.consumer, item.flavor, item.instance, count,
                current=current, others=[e[0] for e in wanted.values()],
                placed_here=item.kind == 'instance')
        except (exception.ComputeResourcesUnavailable,
                resobj_exc.InvalidFlavorExtraSpec) as exc:
            # Running already: charge it whole to the cells it holds (or
            # the first), rather than leave it uncounted.
            LOG.warning('%s does not fit the NUMA cells of %s (%s); '
                        'counting it where it is', item.consumer,
                        self.nodename, exc)
            cells = numa.cells_in(current, self.cells.providers) or {
                min(self.cells.by_cell): {
                    pl.VCPU: item.flavor.vcpus,
                    pl.MEMORY_MB: item.flavor.memory_mb}}
            return self._numa_payload(
                self._payload(item.flavor, item.instance, count), cells)

    def _save_instance_topologies(self, instances):
        """Store each instance's placement here where it differs."""
        for instance in instances:
            if instance.uuid not in self.tracked or (
                    instance.new_flavor is not None):
                continue
            topology = self.instance_topology_of(instance.uuid)
            stored = instance.numa_topology
            if (topology.to_dict() if topology else None) == \
                    (stored.to_dict() if stored else None):
                continue
            instance.numa_topology = topology
            try:
                instance.save()
            except resobj_exc.InstanceNotFound:
                continue  # deleted meanwhile: the next audit drops it

    # PCI requests.

    def _pci_requests(self, flavor, pci_requests):
        """(request dicts for pci.select, InstancePCIRequests).

        ``pci_requests`` given by the caller wins (older callers pass
        vendor/product dicts); otherwise the flavor's aliases are looked
        up in [compute] pci_alias.
        """
        aliases = numa.pci_requests_from_flavor(flavor)
        recorded = recorded_pci_requests(flavor)
        if pci_requests is not None:
            return pci_requests, recorded
        requests = []
        for name, count in aliases:
            spec = self.pci_aliases.get(name)
            if spec is None:
                raise resobj_exc.InvalidFlavorExtraSpec(
                    flavor=flavor.flavorid, key=numa.PCI_ALIAS_SPEC,
                    value=flavor.extra_specs.get(numa.PCI_ALIAS_SPEC),
                    reason='no [compute] pci_alias named %r on this '
                           'host' % name)
            requests.append(dict(spec, count=count))
        return requests, recorded

    # The upgrade reshape.

    def _reshape_if_flat(self, context):
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
        root_generation, root_inventory = self.client.get_inventory(
            self.provider)
        if not set(root_inventory) & set(numa.CELL_CLASSES):
            return False
        instances = {i.uuid: i for i in objects.InstanceList
                     .get_by_host_and_node(context, self.host,
                                           self.nodename)}
        held = self.client.get_provider_allocations(self.provider)
        consumers, placed = {}, []
        for consumer in sorted(held):
            current = self.client.get_allocations(consumer)
            on_root = current.allocations.get(self.provider, {})
            request = _request_for(instances.get(consumer), on_root)
            try:
                cells = self.cells.place(self.node, self._reserved(),
                                         placed, request, consumer,
                                         self.nodename)
            except exception.ComputeResourcesUnavailable as exc:
                raise resobj_exc.NUMAReshapeFailed(node=self.nodename,
                                                   reason=str(exc))
            self.cells.pin(consumer, cells, request.pinned)
            payload = self._numa_payload(current.allocations, cells)
            placed.append(payload)
            consumers[consumer] = {
                'allocations': payload, 'project_id': current.project_id,
                'user_id': current.user_id,
                'generation': current.generation}
        inventories = {self.provider: (
            root_generation, self._root_inventory(root_inventory))}
        for provider, inventory in self._cell_inventories().items():
            generation, _current = self.client.get_inventory(provider)
            inventories[provider] = (generation, inventory)
        LOG.info('Reshaping %s: VCPU and MEMORY_MB and the allocations of '
                 '%d consumer(s) move to %d NUMA cell provider(s)',
                 self.nodename, len(consumers), len(self.cells.by_cell))
        self.client.reshape(inventories, consumers)
        return True


def recorded_pci_requests(flavor):
    """The flavor's PCI alias requests as Instance.pci_requests holds them."""
    return [objects.InstancePCIRequest(alias_name=name, count=count)
            for name, count in numa.pci_requests_from_flavor(flavor)]


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
