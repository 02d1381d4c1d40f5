"""Capacity and usage accounting of one compute node.

Capacity is ``(total - reserved) * allocation_ratio`` per class, as
placement computes it. Usage is the sum of what tracked consumers hold
on the node's own provider, plus the memory of orphaned guests (running
on the hypervisor, unknown to the database). Everything here works on
plain dicts and ComputeNode objects; nothing reads the database.
"""

import collections

from resobj.compute import exception
from resobj.compute import payload as pl

# ComputeNode fields per class: (total, reserved, ratio).
NODE_FIELDS = {
    pl.VCPU: ('vcpus', 'vcpus_reserved', 'cpu_allocation_ratio'),
    pl.MEMORY_MB: ('memory_mb', 'memory_mb_reserved',
                   'ram_allocation_ratio'),
    pl.DISK_GB: ('local_gb', 'local_gb_reserved', 'disk_allocation_ratio'),
}
USED_FIELDS = {pl.VCPU: 'vcpus_used', pl.MEMORY_MB: 'memory_mb_used',
               pl.DISK_GB: 'local_gb_used'}


def mb_to_gb_ceil(mb):
    """Reserved disk is configured in MB; inventory is in GB, rounded up."""
    return pl.swap_gb(mb)


def node_reserved(node, reserved=None):
    """{total field: reserved amount}, each capped at the node's total.

    ``reserved`` ({'vcpus', 'memory_mb', 'local_gb'}) overrides the
    node's own ``*_reserved`` fields: the tracker passes its configured
    amounts, which the node cannot store before the upgrade gate opens.
    """
    out = {}
    for total, reserved_field, _ratio in NODE_FIELDS.values():
        amount = (getattr(node, reserved_field) if reserved is None
                  else reserved[total])
        out[total] = min(amount, getattr(node, total))
    return out


def node_inventory(node, pci_total=0, reserved=None):
    """{class: inventory dict} of the node's provider, zero totals left out.

    The same values ComputeNode.save() writes for VCPU, MEMORY_MB and
    DISK_GB, plus PCI_DEVICE (the node's ``type-PCI`` devices), which
    only the tracker knows. ``reserved`` as for :func:`node_reserved`.
    """
    inventory = {}
    held = node_reserved(node, reserved)
    for rc, (total, _reserved, ratio) in NODE_FIELDS.items():
        amount = getattr(node, total)
        if amount < 1:
            continue
        inventory[rc] = {
            'total': amount, 'reserved': held[total],
            'min_unit': 1, 'max_unit': amount, 'step_size': 1,
            'allocation_ratio': float(getattr(node, ratio))}
    if pci_total:
        inventory[pl.PCI_DEVICE] = {
            'total': pci_total, 'reserved': 0, 'min_unit': 1,
            'max_unit': pci_total, 'step_size': 1, 'allocation_ratio': 1.0}
    return inventory


def capacity(inventory):
    """{class: capacity} from an inventory dict."""
    return {rc: int((inv['total'] - inv['reserved']) *
                    inv['allocation_ratio'])
            for rc, inv in inventory.items()}


class NodeUsage:
    """What tracked consumers hold on one provider, per consumer."""

    def __init__(self):
        self._held = {}
        self.orphan_memory_mb = 0

    def set(self, consumer_uuid, amounts):
        if amounts:
            self._held[consumer_uuid] = dict(amounts)
        else:
            self._held.pop(consumer_uuid, None)

    def remove(self, consumer_uuid):
        self._held.pop(consumer_uuid, None)

    def get(self, consumer_uuid):
        return dict(self._held.get(consumer_uuid, {}))

    def reset(self):
        self._held.clear()
        self.orphan_memory_mb = 0

    def totals(self, include_orphans=True):
        totals = collections.Counter()
        for amounts in self._held.values():
            totals.update(amounts)
        if include_orphans and self.orphan_memory_mb:
            totals[pl.MEMORY_MB] += self.orphan_memory_mb
        return dict(totals)

    def __len__(self):
        return len(self._held)


def shortages(provider, caps, used, wanted, already=None):
    """The classes of ``wanted`` that do not fit, with how much is short.

    ``already`` is what the consumer holds now (a resize counts only its
    growth against what is free). A class without inventory has
    capacity 0.
    """
    already = already or {}
    short = []
    for rc, amount in sorted(wanted.items()):
        extra = amount - already.get(rc, 0)
        if extra <= 0:
            continue
        free = caps.get(rc, 0) - used.get(rc, 0)
        if extra > free:
            short.append({'resource_class': rc, 'provider': provider,
                          'requested': extra, 'free': max(free, 0),
                          'short': extra - max(free, 0)})
    return short


def check(node_name, consumer, provider, caps, used, wanted, already=None):
    """Raise ComputeResourcesUnavailable naming every shortage."""
    short = shortages(provider, caps, used, wanted, already)
    if short:
        raise exception.ComputeResourcesUnavailable(
            node=node_name, consumer=consumer, shortages=short)


def apply_to_node(node, used, running_vms, reserved=None):
    """Write usage into the ComputeNode's legacy fields (not saved).

    ``free_ram_mb`` and ``free_disk_gb`` are net of the reserved amounts
    (``reserved`` as for :func:`node_reserved`): the legacy columns are
    where services older than the inventory gate see them.
    """
    held = node_reserved(node, reserved)
    for rc, field in USED_FIELDS.items():
        setattr(node, field, int(used.get(rc, 0)))
    node.free_ram_mb = (node.memory_mb - held['memory_mb'] -
                        node.memory_mb_used)
    node.free_disk_gb = (node.local_gb - held['local_gb'] -
                         node.local_gb_used)
    node.running_vms = running_vms
