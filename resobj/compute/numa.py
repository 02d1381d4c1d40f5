"""NUMA cells as child resource providers, and fitting instances on them.

A compute node whose driver reports a NUMA topology keeps VCPU and
MEMORY_MB on one child provider per cell (``<node>_NUMA<cell id>``, a
uuid derived from the node's and the cell id, so it never needs storing);
DISK_GB and PCI_DEVICE stay on the node's root provider (or DISK_GB in
the shared pool), as on a flat node.

What an instance asks for comes from its flavor's extra specs:

* ``hw:numa_nodes`` = N: the instance is spread over N cells, its vCPUs
  and memory split evenly (N must divide both);
* ``hw:cpu_policy`` = ``dedicated``: every vCPU is pinned to a host CPU of
  its cell that no other instance uses (``shared``, the default: vCPUs
  float over their cell's CPUs).

Any other instance on a NUMA host takes one cell, floating. Cells are
tried in id order, so the placement of the same requests on the same
usage is always the same (which the upgrade reshape relies on: it
assigns the instances already running to cells this way).

Everything here works on plain dicts and NUMA objects; nothing reads the
database or placement.
"""

import itertools
import uuid as uuid_lib

from resobj.compute import exception
from resobj.compute import payload as pl
from resobj.compute import usage
from resobj import exception as resobj_exc

CELL_CLASSES = (pl.VCPU, pl.MEMORY_MB)

NUMA_NODES_SPEC = 'hw:numa_nodes'
CPU_POLICY_SPEC = 'hw:cpu_policy'
CPU_POLICIES = ('shared', 'dedicated')
PCI_ALIAS_SPEC = 'pci_passthrough:alias'


def cell_provider_uuid(node_uuid, cell_id):
    """The uuid of the child provider of ``node_uuid``'s cell ``cell_id``."""
    return str(uuid_lib.uuid5(uuid_lib.UUID(node_uuid),
                              'numa-cell-%d' % cell_id))


def cell_provider_name(nodename, cell_id):
    return '%s_NUMA%d' % (nodename, cell_id)


class Request:
    """What a flavor asks of NUMA cells."""

    __slots__ = ('vcpus', 'memory_mb', 'nodes', 'pinned')

    def __init__(self, vcpus, memory_mb, nodes=1, pinned=False):
        self.vcpus = vcpus
        self.memory_mb = memory_mb
        self.nodes = nodes
        self.pinned = pinned

    def parts(self):
        """[{VCPU, MEMORY_MB}] per cell, the even split over ``nodes``."""
        return [{pl.VCPU: self.vcpus // self.nodes,
                 pl.MEMORY_MB: self.memory_mb // self.nodes}
                for _ in range(self.nodes)]


def _bad_spec(flavor, key, reason):
    return resobj_exc.InvalidFlavorExtraSpec(
        flavor=getattr(flavor, 'flavorid', None), key=key,
        value=flavor.extra_specs.get(key), reason=reason)


def request_from_flavor(flavor):
    """The flavor's NUMA Request; InvalidFlavorExtraSpec for a bad spec."""
    specs = flavor.extra_specs or {}
    policy = specs.get(CPU_POLICY_SPEC, 'shared')
    if policy not in CPU_POLICIES:
        raise _bad_spec(flavor, CPU_POLICY_SPEC,
                        'must be one of %s' % ', '.join(CPU_POLICIES))
    nodes = specs.get(NUMA_NODES_SPEC, '1')
    try:
        nodes = int(nodes)
    except ValueError:
        nodes = 0
    if nodes < 1:
        raise _bad_spec(flavor, NUMA_NODES_SPEC,
                        'must be a whole number of at least 1')
    if flavor.vcpus % nodes or flavor.memory_mb % nodes:
        raise _bad_spec(flavor, NUMA_NODES_SPEC,
                        'must divide the vcpus (%d) and memory_mb (%d)'
                        % (flavor.vcpus, flavor.memory_mb))
    return Request(flavor.vcpus, flavor.memory_mb, nodes,
                   policy == 'dedicated')


def asks_for_numa(flavor):
    """Whether the flavor needs a NUMA host (a flat host cannot take it)."""
    specs = flavor.extra_specs or {}
    return NUMA_NODES_SPEC in specs or \
        specs.get(CPU_POLICY_SPEC) == 'dedicated'


def pci_requests_from_flavor(flavor):
    """[(alias name, count)] of ``pci_passthrough:alias`` = "a:n[,b:m]"."""
    text = (flavor.extra_specs or {}).get(PCI_ALIAS_SPEC)
    if not text:
        return []
    out = []
    for item in text.split(','):
        name, sep, count = item.strip().partition(':')
        try:
            count = int(count) if sep else 1
        except ValueError:
            count = 0
        if not name or count < 1:
            raise _bad_spec(flavor, PCI_ALIAS_SPEC,
                            '%r is not "alias:count" with a count of at '
                            'least 1' % item)
        out.append((name, count))
    return out


def cell_inventories(topology, node, reserved):
    """{cell id: {class: inventory dict}} of the node's cell providers.

    Ratios are the node's. ``reserved`` ({'vcpus', 'memory_mb'}) is held
    by the cells in id order, each taking what is left up to its total.
    """
    left = {pl.VCPU: reserved.get('vcpus', 0),
            pl.MEMORY_MB: reserved.get('memory_mb', 0)}
    ratios = {pl.VCPU: float(node.cpu_allocation_ratio),
              pl.MEMORY_MB: float(node.ram_allocation_ratio)}
    out = {}
    for cell in sorted(topology.cells, key=lambda c: c.id):
        totals = {pl.VCPU: len(cell.cpuset), pl.MEMORY_MB: cell.memory_mb}
        inventory = {}
        for rc, total in totals.items():
            if total < 1:
                continue
            held = min(left[rc], total)
            left[rc] -= held
            inventory[rc] = {'total': total, 'reserved': held,
                             'min_unit': 1, 'max_unit': total,
                             'step_size': 1, 'allocation_ratio': ratios[rc]}
        out[cell.id] = inventory
    return out


def free(inventories, used):
    """{cell id: {class: free}} from cell inventories and usage."""
    out = {}
    for cell_id, inventory in inventories.items():
        caps = usage.capacity(inventory)
        out[cell_id] = {rc: caps.get(rc, 0) -
                        used.get(cell_id, {}).get(rc, 0)
                        for rc in CELL_CLASSES}
    return out


def fit(free_by_cell, request, free_cpus=None):
    """Where ``request`` fits: {cell id: {VCPU, MEMORY_MB}}, or None.

    ``free_cpus`` ({cell id: [host CPU ids not pinned]}) limits a pinned
    request to CPUs of its own. The first combination of cells in id
    order where every part fits wins.
    """
    parts = request.parts()
    for cells in itertools.combinations(sorted(free_by_cell),
                                        request.nodes):
        ok = True
        for cell_id, part in zip(cells, parts):
            room = free_by_cell[cell_id]
            if any(room.get(rc, 0) < amount for rc, amount in part.items()):
                ok = False
            elif request.pinned and len(
                    (free_cpus or {}).get(cell_id, ())) < part[pl.VCPU]:
                ok = False
        if ok:
            return dict(zip(cells, parts))
    return None


def unavailable(node, consumer, request, free_by_cell):
    """The error for a request that fits no combination of cells."""
    return exception.ComputeResourcesUnavailable(
        node=node, consumer=consumer,
        reasons='%d vCPU(s)%s and %d MB over %d NUMA cell(s) fit no cells '
                'of this node (free per cell: %s)' % (
                    request.vcpus, ' pinned' if request.pinned else '',
                    request.memory_mb, request.nodes,
                    ', '.join('%d: %d vCPU %d MB' % (
                        c, f[pl.VCPU], f[pl.MEMORY_MB])
                        for c, f in sorted(free_by_cell.items()))))


def cells_in(payload, providers):
    """{cell id: {class: amount}} ``payload`` holds on cell ``providers``.

    ``providers``: {cell provider uuid: cell id}.
    """
    return {providers[rp]: dict(amounts)
            for rp, amounts in payload.items() if rp in providers}


def add_cells(payload, cells, providers_by_cell):
    """``payload`` with each cell's amounts on its provider."""
    out = {rp: dict(amounts) for rp, amounts in payload.items()}
    for cell_id, amounts in cells.items():
        out.setdefault(providers_by_cell[cell_id], {}).update(amounts)
    return pl.strip_zeros(out)
