"""TrackedNode: the ComputeNode a tracker keeps, and its inventory.

The tracker's collaborator for the node record: it refreshes the
ComputeNode from the driver (with its PCI devices and the provider that
shares its disk), works out the root provider's inventory with the
configured reserved amounts, and saves the tracker's usage into the
node and its inventory into placement.

It shares the tracker's lock (memory only, never held across a remote
call: resobj.compute.tracker's module docstring) and has a lock of its
own that lets one writer at a time save or refresh the node. What the
tracker counts comes from ``counted``, a function of the tracker's
that the node calls with the tracker's lock held.
"""

import threading

from oslo_log import log as logging

from resobj.compute import exception
from resobj.compute import payload as pl
from resobj.compute import pci
from resobj.compute import usage
from resobj import exception as resobj_exc
from resobj import objects

LOG = logging.getLogger(__name__)


class TrackedNode:
    """One compute node's record, refreshed and saved for its tracker.

    ``lock``: the tracker's lock. ``numa``: the tracker's NUMAPlacement.
    ``reserved``: the configured reserved amounts, {total field: amount}.
    ``counted()``: ``(payloads, usage totals, instance uuids)`` the
    tracker holds; called with ``lock`` held.
    """

    def __init__(self, host, nodename, driver, client, numa, lock,
                 reserved, counted):
        self.host = host
        self.nodename = nodename
        self.driver = driver
        self.client = client
        self.numa = numa
        self.lock = lock
        self.reserved = reserved
        self.counted = counted
        self.node = None
        self.sharing_provider = None
        self.pci_devices = []
        # One writer of the node at a time (refresh or save).
        self._writer = threading.Lock()
        self._dirty = False
        self._inventory_due = False
        # Reserved amounts the node held before _store_reserved changed
        # them: {field: amount}.
        self._held_reserved = {}
        # The inventory last made placement's (see _write).
        self._reported_inventory = None

    def refresh(self, context, service):
        """Refresh the node from the driver; reshape a flat node's cells.

        The first refresh reads the node, or creates it for ``service``.
        """
        with self._writer:
            self._ensure(context, service)
            self.numa.reshape_if_flat(context, self.host, self.node,
                                      self.reserved_amounts())

    def _ensure(self, context, service):
        resources = self.driver.get_available_resource(self.nodename)
        if self.node is None:
            try:
                node = objects.ComputeNode.get_by_host_and_nodename(
                    context, self.host, self.nodename)
            except resobj_exc.ComputeNodeNotFound:
                node = objects.ComputeNode(
                    context, host=self.host, stats={},
                    service_id=service.id,
                    hypervisor_hostname=self.nodename)
                node.update_from_virt_driver(resources)
                if self.driver.get_numa_topology(self.nodename):
                    # Created with its cells: VCPU and MEMORY_MB never go
                    # on the root provider.
                    node.numa_topology = objects.NUMATopology(cells=[])
                node.create()
        else:
            node = self.node
        with self.lock:
            if node.service_id != service.id:
                node.service_id = service.id
            node.update_from_virt_driver(resources)
        self.client.ensure_provider(node.uuid, self.nodename)
        self.numa.refresh(node)
        devices = pci.sync(
            context, node,
            list(objects.PciDeviceList.get_by_compute_node(context,
                                                           node.id)),
            self.driver.get_pci_devices(self.nodename), objects.PciDevice)
        sharing = None
        if self.driver.uses_shared_storage(self.nodename):
            found = self.client.get_sharing_providers(node.uuid,
                                                      pl.DISK_GB)
            if not found:
                raise exception.SharingProviderNotFound(
                    node=self.nodename, provider=node.uuid)
            sharing = found[0]
        with self.lock:
            self.node = node
            self._store_reserved()
            self.pci_devices = devices
            self.sharing_provider = sharing

    def reserved_amounts(self):
        """The configured reserved amounts, capped at the node's totals."""
        return usage.node_reserved(self.node, self.reserved)

    def _store_reserved(self):
        """Put the reserved amounts on the node, if it can keep them.

        Only when one differs from what the node holds, so the gate is
        asked only then. The amounts the node had are kept to put back
        if the gate closes before the save (_write).
        """
        wanted = {total + '_reserved': amount
                  for total, amount in self.reserved_amounts().items()
                  if getattr(self.node, total + '_reserved') != amount}
        self._held_reserved = {}
        if not wanted or not self.node.writes_inventory():
            return
        for field, amount in wanted.items():
            self._held_reserved[field] = getattr(self.node, field)
            setattr(self.node, field, amount)

    def _pci_total(self):
        return sum(1 for d in self.pci_devices
                   if d.dev_type == pl.PCI_COUNTED_TYPE and
                   d.status not in ('removed', 'deleted'))

    def inventory(self):
        """The root provider's inventory (without the cells' classes)."""
        with self.lock:
            return self.numa.root_inventory(usage.node_inventory(
                self.node, self._pci_total(), self.reserved))

    def save(self, audit=False):
        """Save usage into the node, then the provider's inventory.

        One writer at a time: a caller that finds a save under way
        leaves its usage to that writer, which saves again before it
        stops, so no claim waits behind another's lost save.

        ComputeNode.save() writes VCPU, MEMORY_MB and DISK_GB inventory in
        its own transaction; set_inventory then adds what only the tracker
        knows (PCI_DEVICE) and, over HTTP, writes the whole inventory
        with the provider generation. A claim changes usage, not
        inventory: unless ``audit``, placement is asked only when the
        inventory differs from the one last made its own; the periodic
        audit compares with placement every time, so a change made there
        by someone else is put right at the next audit.
        """
        with self.lock:
            self._dirty = True
            self._inventory_due = self._inventory_due or audit
        while self._writer.acquire(blocking=False):
            try:
                while True:
                    with self.lock:
                        if not self._dirty:
                            break
                        self._dirty = False
                        due, self._inventory_due = self._inventory_due, False
                        inventories = self._usage_into_node()
                    try:
                        self._write(inventories, due)
                    except Exception:
                        with self.lock:
                            self._dirty = True
                            self._inventory_due = self._inventory_due or due
                        raise
            finally:
                self._writer.release()
            with self.lock:
                if not self._dirty:
                    return

    def _usage_into_node(self):
        """Put usage on the node (in memory); the inventories to report."""
        payloads, totals, instances = self.counted()
        for rc, amount in self.numa.used_totals(payloads).items():
            totals[rc] = totals.get(rc, 0) + amount
        usage.apply_to_node(self.node, totals, len(instances),
                            self.reserved)
        self.numa.sync_node_topology(self.node, payloads)
        inventories = {self.node.uuid: self.inventory()}
        inventories.update(self.numa.cell_inventories(
            self.node, self.reserved_amounts()))
        return inventories

    def _write(self, inventories, audit):
        try:
            self.node.save()
        except resobj_exc.ReservedNeedsInventory:
            # The gate closed since _store_reserved asked (an older
            # service came back): the node keeps what it had, as before
            # the gate; everything else is saved.
            LOG.info('Reserved amounts of %s not stored on the node: an '
                     'older service is running again', self.nodename)
            with self.lock:
                for field, amount in self._held_reserved.items():
                    setattr(self.node, field, amount)
                self.node.obj_reset_changes(list(self._held_reserved))
                self._held_reserved = {}
            self.node.save()
        if audit or inventories != self._reported_inventory:
            for provider, inventory in sorted(inventories.items()):
                self.client.set_inventory(provider, inventory)
            self._reported_inventory = inventories
