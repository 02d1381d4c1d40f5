"""ResourceTracker: one compute node's resources, claims and reports.

One tracker per (host, node). All state lives in objects (ComputeNode,
Instance, Migration, PciDevice) and in placement, reached through a
reporting client; the tracker never touches the database itself. Two
collaborators do the rest: NUMA cell placement
(resobj.compute.numa_tracker.NUMAPlacement) and moves
(resobj.compute.move_tracker.MoveTracker), each called through its own
methods.

The lock guards memory only. Every object call and placement call may
be a remote call (a conductor RPC when the host has no database), and
one of those can be lost, so none is made under the lock: a claim
checks and reserves under it (so two claims can never both take the
last capacity), lets go for its remote writes, and takes it again to
commit or undo what it reserved (claims.UnitOfWork). One lost call
delays the operation that made it, not every other claim on the node.
Operations on one consumer run one at a time (``exclusive``); the
node's usage is saved by one writer at a time, and a claim that finds
a save under way leaves its usage to that writer (``save_node``).

Each audit reports the host's compute Service alive: it registers it
at the first audit (the tracker's start) and heartbeats it afterwards,
so Service.get_minimum_version sees which computes still run.

Reserved amounts come from configuration and always count in the
tracker's checks, in the inventory it reports and in the legacy
free_ram_mb / free_disk_gb older services read. The ComputeNode keeps
them (in its provider's inventory) only once the upgrade gate is open
(ComputeNode.writes_inventory); before that they are not put on the
node, whose save() would refuse them, so an older service that is
still alive never makes an audit fail.

Writes follow one order so that a concurrent audit elsewhere can never
undo them: database rows (instance, migration) first, allocations
second, each allocation write a compare-and-swap on the consumer
generation read *before* the rows (see update_available_resource). An
audit of this node leaves alone every consumer a claim, move or delete
touched while the audit read (it keeps what memory says of them).
"""

import threading
import time

from oslo_log import log as logging

from resobj.compute import audit
from resobj.compute import claims
from resobj.compute import exception
from resobj.compute import move_tracker
from resobj.compute import numa_tracker
from resobj.compute import payload as pl
from resobj.compute import pci
from resobj.compute import usage
from resobj.conf import compute as compute_conf
from resobj import exception as resobj_exc
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.objects import service as service_obj

LOG = logging.getLogger(__name__)


class ResourceTracker:

    def __init__(self, host, nodename, driver, client, reserved_vcpus=0,
                 reserved_memory_mb=0, reserved_disk_mb=0, pci_aliases=None):
        objects.register_all()
        self.host = host
        self.nodename = nodename
        self.driver = driver
        self.client = client
        self.reserved = {'vcpus': reserved_vcpus,
                         'memory_mb': reserved_memory_mb,
                         # Configured in MB, held in GB: round up, never
                         # multiply (nova Newton's MB * 1024 bug).
                         'local_gb': usage.mb_to_gb_ceil(reserved_disk_mb)}
        # Memory only; never held across a remote call (module docstring).
        self.lock = threading.RLock()
        self.operations = claims.Operations(self.lock)
        # One audit at a time; one writer of the node at a time.
        self._audit_lock = threading.Lock()
        self._node_lock = threading.Lock()
        self._node_dirty = False
        self._inventory_due = False
        # {alias name: {'vendor_id', 'product_id'}}: [compute] pci_alias.
        self.pci_aliases = dict(pci_aliases or {})
        self.numa = numa_tracker.NUMAPlacement(driver, client, nodename)
        self.moves = move_tracker.MoveTracker(self)
        self.service = None
        self.node = None
        # Reserved amounts the node held before _store_reserved changed
        # them: {field: amount}.
        self._held_reserved = {}
        self.sharing_provider = None
        self.pci_devices = []
        # {PCI device id: consumer} chosen by claims not yet stored.
        self._pci_taken = {}
        self.usage = usage.NodeUsage()
        # consumer uuid -> (payload, project_id, user_id, instance uuid)
        self.tracked = {}
        self.last_audit_seconds = None
        self._audited = False
        # The inventory last made placement's (see _write_node).
        self._reported_inventory = None

    @classmethod
    def from_conf(cls, conf, host, nodename, driver, client):
        """A tracker with ``conf``'s [compute] reserved amounts, aliases."""
        return cls(host, nodename, driver, client,
                   pci_aliases=compute_conf.pci_aliases(conf),
                   **compute_conf.reserved(conf))

    @property
    def provider(self):
        return self.node.uuid

    @property
    def cells(self):
        """The node's NUMA cells (compute.cells.NodeCells); None: flat."""
        return self.numa.cells

    # Moves (the MoveTracker's, called on the tracker).

    def resize_claim(self, context, instance, new_flavor, pci_requests=None,
                     migration_type=None, migration=None):
        return self.moves.resize_claim(context, instance, new_flavor,
                                       pci_requests, migration_type,
                                       migration)

    def rebuild_claim(self, context, instance, migration_type='evacuation'):
        return self.moves.rebuild_claim(context, instance, migration_type)

    def drop_move_claim(self, context, instance, migration, prefix='new'):
        return self.moves.drop_move_claim(context, instance, migration,
                                          prefix)

    def track_outgoing(self, context, instance, migration):
        return self.moves.track_outgoing(context, instance, migration)

    def adopt(self, instance, migration=None):
        return self.moves.adopt(instance, migration)

    # What claims and moves call: in memory, each under the lock.

    def exclusive(self, *consumers):
        """One operation at a time on each of ``consumers``."""
        return self.operations.exclusive(*consumers)

    def snapshot(self, consumer):
        """What memory holds of ``consumer``, for ``restore``."""
        with self.lock:
            return (self.tracked.get(consumer), self.numa.pins_of(consumer))

    def restore(self, consumer, snapshot):
        with self.lock:
            entry, pins = snapshot
            if entry is None:
                self.forget(consumer)
            else:
                self.tracked[consumer] = entry
                self.usage.set(consumer, pl.on_provider(entry[0],
                                                        self.provider))
            self.numa.set_pins(consumer, pins)

    def hold(self, consumer, payload, instance):
        """Count ``payload`` as held here by ``consumer``."""
        with self.lock:
            self.tracked[consumer] = (payload, instance.project_id,
                                      instance.user_id, instance.uuid)
            self.usage.set(consumer, pl.on_provider(payload, self.provider))

    def forget(self, consumer):
        with self.lock:
            self.tracked.pop(consumer, None)
            self.usage.remove(consumer)
            self.numa.unpin(consumer)

    def others(self, consumer=None):
        """The payloads held here by consumers other than ``consumer``."""
        with self.lock:
            return [entry[0] for c, entry in self.tracked.items()
                    if c != consumer]

    def payload_for(self, consumer, flavor, instance, pci_count,
                    current=None, others=None, placed_here=True):
        """The payload of a new claim (or audit) of ``consumer`` here.

        ``placed_here``: whether ``instance``'s stored topology, if any,
        describes its placement on this node (not so for a move's
        destination, which places the instance anew).
        """
        with self.lock:
            self.numa.check_flat(flavor, consumer)
            previous = None
            if placed_here and instance is not None and \
                    instance.obj_attr_is_set('numa_topology') and \
                    instance.numa_topology is not None and \
                    instance.node == self.nodename:
                previous = instance.numa_topology
            return self.numa.payload(
                consumer, flavor, self._payload(flavor, instance, pci_count),
                self.node, self._reserved(),
                self.others(consumer) if others is None else others,
                previous, current)

    def check(self, consumer, payload, already=None):
        with self.lock:
            usage.check(self.nodename, consumer, self.provider,
                        usage.capacity(self.inventory()),
                        self.usage.totals(),
                        pl.on_provider(payload, self.provider), already)

    def select_pci(self, requests, consumer):
        """Devices for ``requests``, kept from other claims until stored."""
        with self.lock:
            free = [d for d in self.pci_devices
                    if d.id not in self._pci_taken]
            devices = pci.select(free, requests, self.nodename, consumer)
            for device in devices:
                self._pci_taken[device.id] = consumer
            return devices

    def unselect_pci(self, devices):
        with self.lock:
            for device in devices:
                self._pci_taken.pop(device.id, None)

    def devices_of(self, instance_uuid):
        with self.lock:
            return [d for d in self.pci_devices
                    if d.instance_uuid == instance_uuid]

    def pci_count(self, instance_uuid):
        with self.lock:
            return pl.pci_count(self.pci_devices, instance_uuid)

    def instance_topology_of(self, consumer):
        """The InstanceNUMATopology ``consumer`` is tracked with here.

        None on a flat node or for a consumer not tracked here.
        """
        with self.lock:
            entry = self.tracked.get(consumer)
            return self.numa.instance_topology(
                consumer, entry[0] if entry else None)

    def ready(self, context):
        """A claim before the first audit runs that audit first.

        Until then memory counts nothing the node already holds.
        """
        if self._audited:
            return
        with self._audit_lock:
            if not self._audited:
                self._audit(context)

    # Node state.

    def _report_alive(self, context):
        """Register the host's compute service, or report it alive."""
        self.service = service_obj.report_alive(
            context, self.service, self.host, cn_obj.COMPUTE_BINARY)

    def _ensure_node(self, context):
        """Refresh the node from the driver (the audit's, node lock held)."""
        resources = self.driver.get_available_resource(self.nodename)
        if self.node is None:
            try:
                node = objects.ComputeNode.get_by_host_and_nodename(
                    context, self.host, self.nodename)
            except resobj_exc.ComputeNodeNotFound:
                node = objects.ComputeNode(
                    context, host=self.host, stats={},
                    service_id=self.service.id,
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
            if node.service_id != self.service.id:
                node.service_id = self.service.id
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

    def _reserved(self):
        """The configured reserved amounts, capped at the node's totals."""
        return usage.node_reserved(self.node, self.reserved)

    def _store_reserved(self):
        """Put the reserved amounts on the node, if it can keep them.

        Only when one differs from what the node holds, so the gate is
        asked only then. The amounts the node had are kept to put back
        if the gate closes before the save (_write_node).
        """
        wanted = {total + '_reserved': amount
                  for total, amount in self._reserved().items()
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

    def save_node(self, audit=False):
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
            self._node_dirty = True
            self._inventory_due = self._inventory_due or audit
        while self._node_lock.acquire(blocking=False):
            try:
                while True:
                    with self.lock:
                        if not self._node_dirty:
                            break
                        self._node_dirty = False
                        due, self._inventory_due = self._inventory_due, False
                        inventories = self._usage_into_node()
                    try:
                        self._write_node(inventories, due)
                    except Exception:
                        with self.lock:
                            self._node_dirty = True
                            self._inventory_due = self._inventory_due or due
                        raise
            finally:
                self._node_lock.release()
            with self.lock:
                if not self._node_dirty:
                    return

    def _usage_into_node(self):
        """Put usage on the node (in memory); the inventories to report."""
        payloads = [entry[0] for entry in self.tracked.values()]
        totals = self.usage.totals()
        for rc, amount in self.numa.used_totals(payloads).items():
            totals[rc] = totals.get(rc, 0) + amount
        usage.apply_to_node(self.node, totals,
                            len({t[3] for t in self.tracked.values()}),
                            self.reserved)
        self.numa.sync_node_topology(self.node, payloads)
        inventories = {self.node.uuid: self.inventory()}
        inventories.update(self.numa.cell_inventories(self.node,
                                                      self._reserved()))
        return inventories

    def _write_node(self, inventories, audit):
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

    def _payload(self, flavor, instance, pci_count):
        return pl.build(flavor, instance.booted_from_volume, self.provider,
                        self.sharing_provider, pci_count)

    def refused(self, consumer, payload, exc):
        """The error for an allocation placement refused.

        The node's own classes were checked before writing; what placement
        refuses is then (usually) the shared pool, whose usage is read
        now to say by how much.
        """
        short = []
        for provider, amounts in payload.items():
            if provider == self.provider:
                continue
            _gen, inventory = self.client.get_inventory(provider)
            short += usage.shortages(provider, usage.capacity(inventory),
                                     self.client.get_usages(provider),
                                     amounts)
        if short:
            return exception.ComputeResourcesUnavailable(
                node=self.nodename, consumer=consumer, shortages=short)
        return exception.ComputeResourcesUnavailable(
            node=self.nodename, consumer=consumer,
            reasons='placement refused the allocation: %s' % exc)

    # Claims.

    def instance_claim(self, context, instance, pci_requests=None):
        """Reserve ``instance``'s flavor on this node; a Claim.

        Checks everything first (capacity with reserved amounts and
        allocation ratios, PCI devices) and raises
        ComputeResourcesUnavailable naming every shortage without
        changing anything. Then claims PCI devices, writes the
        allocations, sets the instance's host and node; a failure of
        any of those undoes the others.
        """
        self.ready(context)
        consumer = instance.uuid
        with self.exclusive(consumer), claims.UnitOfWork(
                'undo claim of %s' % consumer) as work:
            with self.lock:
                requests, recorded = pci.requests_for(
                    instance.flavor, pci_requests, self.pci_aliases)
                devices = self.select_pci(requests, consumer)
                work.add(self.unselect_pci, devices)
                counted = sum(1 for d in devices
                              if d.dev_type == pl.PCI_COUNTED_TYPE)
                work.add(self.restore, consumer, self.snapshot(consumer))
                payload = self.payload_for(consumer, instance.flavor,
                                           instance, counted)
                self.check(consumer, payload)
                self.hold(consumer, payload, instance)
                topology = self.instance_topology_of(consumer)
            pci.claim(devices, consumer, self.nodename)
            work.add(pci.free, devices, consumer)
            try:
                self.client.put_allocations(
                    consumer, payload, instance.project_id,
                    instance.user_id)
            except exception.AllocationConflict as exc:
                raise self.refused(consumer, payload, exc)
            work.add(self.client.delete_allocations, consumer)
            instance.host, instance.node = self.host, self.nodename
            instance.numa_topology = topology
            instance.pci_requests = recorded
            instance.save()
        self.unselect_pci(devices)
        self.save_node()
        return claims.Claim(context, self, instance, payload, devices)

    def abort_instance_claim(self, context, instance):
        """Give back everything the instance holds here; unset its host."""
        with self.exclusive(instance.uuid):
            self._release_instance(instance)
            instance.host, instance.node = None, None
            instance.save()
        self.save_node()

    def remove_instance(self, context, instance):
        """Free a deleted instance's resources (the instance is kept)."""
        with self.exclusive(instance.uuid):
            self._release_instance(instance)
        self.save_node()

    def _release_instance(self, instance):
        """Free, delete the allocations, then stop counting them."""
        pci.free(self.devices_of(instance.uuid), instance.uuid)
        self.client.delete_allocations(instance.uuid)
        self.forget(instance.uuid)

    def update_usage(self, context, instance):
        """Re-report a tracked instance after a change (flavor, state)."""
        consumer = instance.uuid
        with self.exclusive(consumer):
            with self.lock:
                if consumer not in self.tracked:
                    return
                deleted = instance.vm_state in ('deleted', 'soft-delete')
                before = self.snapshot(consumer)
                if not deleted:
                    # An instance still on its source while this node is
                    # the move's destination is charged its new flavor.
                    arriving = (instance.node != self.nodename and
                                instance.new_flavor is not None)
                    flavor = (instance.new_flavor if arriving
                              else instance.flavor)
                    payload = self.payload_for(
                        consumer, flavor, instance, self.pci_count(consumer),
                        current=before[0][0])
            if deleted:
                self._release_instance(instance)
            elif payload != before[0][0]:
                with claims.UnitOfWork('undo usage update of %s'
                                       % consumer) as work:
                    work.add(self.restore, consumer, before)
                    self.client.put_allocations(
                        consumer, payload, instance.project_id,
                        instance.user_id)
                    self.hold(consumer, payload, instance)
        self.save_node()

    # The periodic audit.

    def update_available_resource(self, context):
        """Recompute this node's usage and make placement agree.

        1. Report the host's compute service alive (registering it at
           the first audit); refresh the node from the driver, its PCI
           devices and its sharing provider.
        2. Read the allocations held on the node's provider (and the
           shared pool) with their consumer generations -- before the
           instances, so that a move or delete racing with this audit
           shows up as a moved generation and is not undone.
        3. Read the node's instances, in-progress migrations into or out
           of it and the instances those move (three queries, however
           many there are), and work out every consumer to track --
           but a consumer an operation touched since step 1 keeps what
           memory says of it and is not written.
        4. Charge orphans (guests the driver runs that nothing tracks)
           their memory; save the node and its inventory.
        5. PUT the allocations of each tracked consumer whose allocation
           differs; DELETE those of consumers on the node's provider
           that nothing here tracks. Both compare-and-swap.
        """
        started = time.monotonic()
        with self._audit_lock:
            self._audit(context)
        self.last_audit_seconds = time.monotonic() - started
        return self.last_audit_seconds

    def _audit(self, context):
        """update_available_resource's steps (the audit lock held)."""
        since = self.operations.mark()
        self._report_alive(context)
        with self._node_lock:
            self._ensure_node(context)
            self.numa.reshape_if_flat(context, self.host, self.node,
                                      self._reserved())
        held = self.numa.held_allocations(self.provider)
        shared = (self.client.get_provider_allocations(
            self.sharing_provider) if self.sharing_provider else {})
        instances = objects.InstanceList.get_by_host_and_node(
            context, self.host, self.nodename)
        migrations = objects.MigrationList \
            .get_in_progress_by_host_and_node(context, self.host,
                                              self.nodename)
        here = {i.uuid for i in instances}
        away = {m.instance_uuid for m in migrations} - here
        moved = {i.uuid: i for i in objects.InstanceList.get_by_uuids(
            context, away)} if away else {}
        running = self.driver.get_per_instance_usage()
        with self.lock:
            skip = self.operations.touched_since(since)
            wanted = self._wanted(instances, migrations, moved, held,
                                   shared, skip)
            tracked = {c: e for c, e in self.tracked.items()
                       if c in skip}
            tracked.update(wanted)
            self.tracked = tracked
            self.usage.reset()
            for consumer, entry in tracked.items():
                self.usage.set(consumer,
                               pl.on_provider(entry[0], self.provider))
            self.usage.orphan_memory_mb = sum(
                u.get('memory_mb', 0) for uuid, u in running.items()
                if uuid not in {e[3] for e in tracked.values()})
            topologies = self.numa.changed_topologies(
                instances, self.tracked, skip)
            self._audited = True
        numa_tracker.save_topologies(topologies)
        self.save_node(audit=True)
        audit.reconcile(self.client, self.nodename, held, shared, wanted,
                        skip)

    def _wanted(self, instances, migrations, moved, held, shared, skip):
        """{consumer: tracked entry} the rows read say (lock held)."""
        items = [item for item in audit.tracked_consumers(
            self.host, self.nodename, instances, migrations, moved)
            if item.consumer not in skip]
        self.numa.reset_pins(skip)
        # Consumers whose allocations already name cells first, so a new
        # fit never takes their place.
        items.sort(key=lambda item: (not self.numa.names_cells(
            audit.current(item.consumer, held, shared)[0]), item.consumer))
        wanted = {}
        kept = [e[0] for c, e in self.tracked.items() if c in skip]
        for item in items:
            count = (self.pci_count(item.instance.uuid)
                     if item.kind == 'instance' or
                     item.migration is None or
                     item.migration.source_compute !=
                     item.migration.dest_compute else 0)
            payload = self._audit_payload(
                item, count, held, shared,
                kept + [e[0] for e in wanted.values()])
            wanted[item.consumer] = (payload, item.instance.project_id,
                                     item.instance.user_id,
                                     item.instance.uuid)
        return wanted

    def _audit_payload(self, item, count, held, shared, others):
        if self.numa.cells is None or item.flavor is None:
            return self._payload(item.flavor, item.instance, count)
        current, _gen = audit.current(item.consumer, held, shared)
        try:
            return self.payload_for(
                item.consumer, item.flavor, item.instance, count,
                current=current, others=others,
                placed_here=item.kind == 'instance')
        except (exception.ComputeResourcesUnavailable,
                resobj_exc.InvalidFlavorExtraSpec) as exc:
            LOG.warning('%s does not fit the NUMA cells of %s (%s); '
                        'counting it where it is', item.consumer,
                        self.nodename, exc)
            return self.numa.where_it_is(
                self._payload(item.flavor, item.instance, count),
                self.provider, item.flavor, current)

    def accounting(self):
        """{provider uuid: {class: amount}} this tracker says is held."""
        out = {}
        with self.lock:
            for payload, *_ in self.tracked.values():
                for provider, amounts in payload.items():
                    totals = out.setdefault(provider, {})
                    for rc, amount in amounts.items():
                        totals[rc] = totals.get(rc, 0) + amount
        return out
