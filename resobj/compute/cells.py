"""One compute node's NUMA cells as the tracker sees them.

The tracker's consumers each hold a payload ({provider: {class: n}});
on a NUMA node their VCPU and MEMORY_MB sit on the cells' child
providers, so what a cell has in use is the sum over those payloads.
Pinned host CPUs are the one thing placement does not know: they are
kept per consumer here and written into the node's NUMATopology and the
instance's InstanceNUMATopology.
"""

from resobj.compute import numa
from resobj.compute import payload as pl
from resobj import objects


class NodeCells:
    """The cells of one NUMA node: providers, usage, pinned CPUs."""

    def __init__(self, node_uuid, nodename, cells):
        objects.register_all()
        # As the driver reports them: [{'id', 'cpuset', 'memory_mb'}].
        self.cells = sorted((dict(c) for c in cells), key=lambda c: c['id'])
        self.by_cell = {c['id']: numa.cell_provider_uuid(node_uuid, c['id'])
                        for c in self.cells}
        self.providers = {rp: cell for cell, rp in self.by_cell.items()}
        self.names = {c['id']: numa.cell_provider_name(nodename, c['id'])
                      for c in self.cells}
        # consumer uuid -> {cell id: set of pinned host CPU ids}
        self.pins = {}

    def same_cells(self, cells):
        return self.cells == sorted((dict(c) for c in cells),
                                    key=lambda c: c['id'])

    def topology_template(self):
        return objects.NUMATopology(cells=[
            objects.NUMACell(id=c['id'], cpuset=set(c['cpuset']),
                             memory_mb=c['memory_mb'])
            for c in self.cells])

    def inventories(self, node, reserved):
        """{cell provider uuid: {class: inventory dict}}."""
        by_id = numa.cell_inventories(self.topology_template(), node,
                                      reserved)
        return {self.by_cell[cell]: inventory
                for cell, inventory in by_id.items()}

    def used(self, payloads):
        """{cell id: {class: amount}} held by ``payloads``."""
        out = {}
        for payload in payloads:
            for cell, amounts in numa.cells_in(payload,
                                               self.providers).items():
                totals = out.setdefault(cell, {})
                for rc, amount in amounts.items():
                    totals[rc] = totals.get(rc, 0) + amount
        return out

    def free_cpus(self, except_consumer=None):
        """{cell id: [host CPUs no other consumer has pinned]}."""
        pinned = {}
        for consumer, by_cell in self.pins.items():
            if consumer == except_consumer:
                continue
            for cell, cpus in by_cell.items():
                pinned.setdefault(cell, set()).update(cpus)
        return {c['id']: sorted(set(c['cpuset']) -
                                pinned.get(c['id'], set()))
                for c in self.cells}

    def place(self, node, reserved, payloads, request, consumer, nodename):
        """{cell id: {class: n}} for ``request`` beside ``payloads``.

        ComputeResourcesUnavailable when it fits no cells.
        """
        by_id = numa.cell_inventories(self.topology_template(), node,
                                      reserved)
        room = numa.free(by_id, self.used(payloads))
        cells = numa.fit(room, request, self.free_cpus(consumer))
        if cells is None:
            raise numa.unavailable(nodename, consumer, request, room)
        return cells

    def pin(self, consumer, cells, pinned, previous=None):
        """Record (and return) the host CPUs ``consumer`` is pinned to.

        ``previous`` ({cell id: cpus}, e.g. from the instance's stored
        topology) is kept where it still fits, so an audit never moves
        a running guest's pins.
        """
        if not pinned:
            self.pins.pop(consumer, None)
            return {}
        free = self.free_cpus(consumer)
        chosen = {}
        for cell, amounts in sorted(cells.items()):
            want = amounts.get(pl.VCPU, 0)
            kept = set((previous or {}).get(cell, ())) & set(free[cell])
            if len(kept) == want:
                chosen[cell] = kept
            else:
                chosen[cell] = set(free[cell][:want])
        self.pins[consumer] = chosen
        return chosen

    def unpin(self, consumer):
        self.pins.pop(consumer, None)

    def instance_topology(self, consumer, cells):
        """The InstanceNUMATopology of ``cells`` ({cell id: amounts})."""
        pins = self.pins.get(consumer, {})
        out, first = [], 0
        for cell, amounts in sorted(cells.items()):
            vcpus = amounts.get(pl.VCPU, 0)
            out.append(objects.InstanceNUMACell(
                id=cell, cpuset=set(range(first, first + vcpus)),
                memory_mb=amounts.get(pl.MEMORY_MB, 0),
                pinned_cpus=set(pins.get(cell, ()))))
            first += vcpus
        return objects.InstanceNUMATopology(cells=out)

    def node_topology(self, payloads):
        """The node's NUMATopology with what ``payloads`` use."""
        used = self.used(payloads)
        topology = self.topology_template()
        for cell in topology.cells:
            cell.memory_usage = used.get(cell.id, {}).get(pl.MEMORY_MB, 0)
            cell.pinned_cpus = set().union(*(
                by_cell.get(cell.id, set())
                for by_cell in self.pins.values()))
        return topology


def topology_pins(topology):
    """{cell id: pinned host CPUs} of an InstanceNUMATopology (or None)."""
    if topology is None:
        return {}
    return {cell.id: set(cell.pinned_cpus) for cell in topology.cells
            if cell.pinned_cpus}


def topology_cells(topology):
    """{cell id: {VCPU, MEMORY_MB}} of an InstanceNUMATopology."""
    return {cell.id: {pl.VCPU: len(cell.cpuset),
                      pl.MEMORY_MB: cell.memory_mb}
            for cell in topology.cells}
