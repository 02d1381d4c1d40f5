"""ResourceTracker: one compute node's resources, claims and reports.

One tracker per (host, node), each with its own lock: claims and the
periodic audit of one node are serialised, other nodes run in parallel.
All state lives in objects (ComputeNode, Instance, Migration, PciDevice)
and in placement, reached through a reporting client; the tracker never
touches the database itself.

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
generation read *before* the rows (see update_available_resource).
"""

import threading
import time

from oslo_log import log as logging

from resobj.compute import audit
from resobj.compute import claims
from resobj.compute import exception
from resobj.compute import move_tracker
from resobj.compute import numa
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


class ResourceTracker(numa_tracker.NUMAMixin, move_tracker.MoveMixin):

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
        self.lock = threading.RLock()
        # {alias name: {'vendor_id', 'product_id'}}: [compute] pci_alias.
        self.pci_aliases = dict(pci_aliases or {})
        # The node's NUMA cells (compute.cells.NodeCells); None: flat.
        self.cells = None
        self.service = None
        self.node = None
        # Reserved amounts the node held before _store_reserved changed
        # them: {field: amount}.
        self._held_reserved = {}
        self.sharing_provider = None
        self.pci_devices = []
        self.usage = usage.NodeUsage()
        # consumer uuid -> (payload, project_id, user_id)
        self.tracked = {}
        self.last_audit_seconds = None
        # The inventory last made placement's (see _save_node).
        self._reported_inventory = None

    @classmethod
    def from_conf(cls, conf, host, nodename, driver, client):
        """A tracker with ``conf``'s [compute] reserved amounts, aliases."""
        return cls(host, nodename, driver, client,
                   pci_aliases=compute_conf.pci_aliases(conf),
                   **compute_conf.reserved(conf))

    # Node state.

    @property
    def provider(self):
        return self.node.uuid

    def _report_alive(self, context):
        """Register the host's compute service, or report it alive."""
        self.service = service_obj.report_alive(
            context, self.service, self.host, cn_obj.COMPUTE_BINARY)

    def _ensure_node(self, context):
        resources = self.driver.get_available_resource(self.nodename)
        if self.node is None:
            try:
                self.node = objects.ComputeNode.get_by_host_and_nodename(
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
                self.node = node
        if self.node.service_id != self.service.id:
            self.node.service_id = self.service.id
        self.node.update_from_virt_driver(resources)
        self._store_reserved()
        self.client.ensure_provider(self.node.uuid, self.nodename)
        self._refresh_cells()
        self.pci_devices = pci.sync(
            context, self.node,
            list(objects.PciDeviceList.get_by_compute_node(context,
                                                           self.node.id)),
            self.driver.get_pci_devices(self.nodename), objects.PciDevice)
        self.sharing_provider = None
        if self.driver.uses_shared_storage(self.nodename):
            found = self.client.get_sharing_providers(self.node.uuid,
                                                      pl.DISK_GB)
            if not found:
                raise exception.SharingProviderNotFound(
                    node=self.nodename, provider=self.node.uuid)
            self.sharing_provider = found[0]

    def _reserved(self):
        """The configured reserved amounts, capped at the node's totals."""
        return usage.node_reserved(self.node, self.reserved)

    def _store_reserved(self):
        """Put the reserved amounts on the node, if it can keep them.

        Only when one differs from what the node holds, so the gate is
        asked only then. The amounts the node had are kept to put back
        if the gate closes before the save (_save_node).
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

    def _ready(self, context):
        """A claim before the first audit runs that audit first."""
        if self.node is None:
            self.update_available_resource(context)

    def _pci_total(self):
        return sum(1 for d in self.pci_devices
                   if d.dev_type == pl.PCI_COUNTED_TYPE and
                   d.status not in ('removed', 'deleted'))

    def inventory(self):
        """The root provider's inventory (without the cells' classes)."""
        return self._root_inventory(usage.node_inventory(
            self.node, self._pci_total(), self.reserved))

    def _save_node(self, audit=False):
        """Save usage into the node, then the provider's inventory.

        ComputeNode.save() writes VCPU, MEMORY_MB and DISK_GB inventory in
        its own transaction; set_inventory then adds what only the tracker
        knows (PCI_DEVICE) and, over HTTP, writes the whole inventory
        with the provider generation. It writes nothing when placement
        already has it.

        A claim changes usage, not inventory: unless ``audit``, placement
        is asked only when the inventory differs from the one last made
        its own. That read costs two remotable calls through a conductor
        on every claim; the periodic audit still compares with placement
        every time, so a change made there by someone else is put right
        at the next audit, as before.
        """
        totals = self.usage.totals()
        for rc, amount in self._numa_used_totals().items():
            totals[rc] = totals.get(rc, 0) + amount
        usage.apply_to_node(self.node, totals,
                            len({t[3] for t in self.tracked.values()}),
                            self.reserved)
        self._sync_node_topology()
        try:
            self.node.save()
        except resobj_exc.ReservedNeedsInventory:
            # The gate closed since _store_reserved asked (an older
            # service came back): the node keeps what it had, as before
            # the gate; everything else is saved.
            LOG.info('Reserved amounts of %s not stored on the node: an '
                     'older service is running again', self.nodename)
            for field, amount in self._held_reserved.items():
                setattr(self.node, field, amount)
            self.node.obj_reset_changes(list(self._held_reserved))
            self._held_reserved = {}
            self.node.save()
        inventories = {self.node.uuid: self.inventory()}
        inventories.update(self._cell_inventories())
        if audit or inventories != self._reported_inventory:
            for provider, inventory in sorted(inventories.items()):
                self.client.set_inventory(provider, inventory)
            self._reported_inventory = inventories

    def _payload(self, flavor, instance, pci_count):
        return pl.build(flavor, instance.booted_from_volume, self.provider,
                        self.sharing_provider, pci_count)

    def _track(self, consumer, payload, instance):
        self.tracked[consumer] = (payload, instance.project_id,
                                  instance.user_id, instance.uuid)
        self.usage.set(consumer, pl.on_provider(payload, self.provider))

    def _untrack(self, consumer):
        self.tracked.pop(consumer, None)
        self.usage.remove(consumer)
        if self.cells is not None:
            self.cells.unpin(consumer)

    def _check(self, consumer, payload, already=None):
        usage.check(self.nodename, consumer, self.provider,
                    usage.capacity(self.inventory()), self.usage.totals(),
                    pl.on_provider(payload, self.provider), already)

    def _placement_shortages(self, consumer, payload, exc):
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
        allocations, sets the instance's host and node.
        """
        with self.lock:
            self._ready(context)
            pci_requests, recorded = self._pci_requests(instance.flavor,
                                                        pci_requests)
            devices = pci.select(self.pci_devices, pci_requests,
                                 self.nodename, instance.uuid)
            counted = sum(1 for d in devices
                          if d.dev_type == pl.PCI_COUNTED_TYPE)
            payload = self._claim_payload(instance.uuid, instance.flavor,
                                          instance, counted)
            try:
                self._check(instance.uuid, payload)
            except exception.ComputeResourcesUnavailable:
                self._untrack(instance.uuid)
                raise
            pci.claim(devices, instance.uuid, self.nodename)
            try:
                self.client.put_allocations(
                    instance.uuid, payload, instance.project_id,
                    instance.user_id)
            except exception.AllocationConflict as exc:
                pci.free(devices, instance.uuid)
                self._untrack(instance.uuid)
                raise self._placement_shortages(instance.uuid, payload, exc)
            self._track(instance.uuid, payload, instance)
            try:
                instance.host, instance.node = self.host, self.nodename
                self._record_topology(instance)
                instance.pci_requests = recorded
                instance.save()
            except Exception:
                with claims.logged_undo('undo claim of %s' % instance.uuid):
                    self.client.delete_allocations(instance.uuid)
                    pci.free(devices, instance.uuid)
                    self._untrack(instance.uuid)
                raise
            self._save_node()
            return claims.Claim(context, self, instance, payload, devices)

    def abort_instance_claim(self, context, instance):
        """Give back everything the instance holds here; unset its host."""
        with self.lock:
            self._release_instance(instance)
            instance.host, instance.node = None, None
            instance.save()
            self._save_node()

    def remove_instance(self, context, instance):
        """Free a deleted instance's resources (the instance is kept)."""
        with self.lock:
            self._release_instance(instance)
            self._save_node()

    def _release_instance(self, instance):
        pci.free([d for d in self.pci_devices
                  if d.instance_uuid == instance.uuid], instance.uuid)
        self.client.delete_allocations(instance.uuid)
        self._untrack(instance.uuid)

    def update_usage(self, context, instance):
        """Re-report a tracked instance after a change (flavor, state)."""
        with self.lock:
            if instance.uuid not in self.tracked:
                return
            if instance.vm_state in ('deleted', 'soft-delete'):
                self._release_instance(instance)
            else:
                # An instance still on its source while this node is the
                # move's destination is charged its new flavor here.
                arriving = (instance.node != self.nodename and
                            instance.new_flavor is not None)
                flavor = (instance.new_flavor if arriving
                          else instance.flavor)
                payload = self._claim_payload(
                    instance.uuid, flavor, instance,
                    self._pci_count(instance.uuid),
                    current=self.tracked[instance.uuid][0])
                if payload != self.tracked[instance.uuid][0]:
                    self.client.put_allocations(
                        instance.uuid, payload, instance.project_id,
                        instance.user_id)
                    self._track(instance.uuid, payload, instance)
            self._save_node()

    def _pci_count(self, instance_uuid):
        return pl.pci_count(self.pci_devices, instance_uuid)

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
           many there are), and work out every consumer to track.
        4. Charge orphans (guests the driver runs that nothing tracks)
           their memory; save the node and its inventory.
        5. PUT the allocations of each tracked consumer whose allocation
           differs; DELETE those of consumers on the node's provider
           that nothing here tracks. Both compare-and-swap.
        """
        started = time.monotonic()
        with self.lock:
            self._report_alive(context)
            self._ensure_node(context)
            self._reshape_if_flat(context)
            held = self._held_allocations()
            shared = (self.client.get_provider_allocations(
                self.sharing_provider) if self.sharing_provider else {})
            instances = objects.InstanceList.get_by_host_and_node(
                context, self.host, self.nodename)
            migration_list = objects.MigrationList
            migrations = migration_list.get_in_progress_by_host_and_node(
                context, self.host, self.nodename)
            here = {i.uuid for i in instances}
            away = {m.instance_uuid for m in migrations} - here
            moved = {i.uuid: i for i in objects.InstanceList.get_by_uuids(
                context, away)} if away else {}
            wanted = {}
            items = list(audit.tracked_consumers(
                self.host, self.nodename, instances, migrations, moved))
            if self.cells is not None:
                self.cells.pins = {}
                # Consumers whose allocations already name cells first,
                # so a new fit never takes their place.
                items.sort(key=lambda item: (
                    not numa.cells_in(self._current(
                        item.consumer, held, shared)[0],
                        self.cells.providers), item.consumer))
            for item in items:
                count = (self._pci_count(item.instance.uuid)
                         if item.kind == 'instance' or
                         item.migration is None or
                         item.migration.source_compute !=
                         item.migration.dest_compute else 0)
                payload = self._audit_payload(item, count, held, shared,
                                              wanted)
                wanted[item.consumer] = (
                    payload, item.instance.project_id,
                    item.instance.user_id, item.instance.uuid)
            self.tracked = {}
            self.usage.reset()
            for consumer, entry in wanted.items():
                self.tracked[consumer] = entry
                self.usage.set(consumer,
                               pl.on_provider(entry[0], self.provider))
            running = self.driver.get_per_instance_usage()
            self.usage.orphan_memory_mb = sum(
                u.get('memory_mb', 0) for uuid, u in running.items()
                if uuid not in {e[3] for e in wanted.values()})
            self._save_instance_topologies(instances)
            self._save_node(audit=True)
            self._reconcile(held, shared, wanted)
        self.last_audit_seconds = time.monotonic() - started
        return self.last_audit_seconds

    def _current(self, consumer, held, shared):
        current = {}
        generation = None
        for source in (held, shared):
            entry = source.get(consumer)
            if entry is not None:
                current.update(entry.allocations)
                generation = entry.generation
        return current, generation

    def _reconcile(self, held, shared, wanted):
        for consumer, (payload, project, user, _iuuid) in sorted(
                wanted.items()):
            current, generation = self._current(consumer, held, shared)
            if current == payload:
                continue
            LOG.info('Correcting allocations of %s on %s: %s -> %s',
                     consumer, self.nodename, current, payload)
            self._write(consumer, payload, project, user, generation)
        for consumer in sorted(set(held) - set(wanted)):
            entry = held[consumer]
            project, user = entry.project_id, entry.user_id
            if project is None:
                # A provider's allocation listing does not name owners
                # over HTTP; the write must restate them. The generation
                # stays the one read before the instances.
                owner = self.client.get_allocations(consumer)
                project, user = owner.project_id, owner.user_id
            if project is None:
                continue  # gone meanwhile
            LOG.info('Deleting stale allocations of %s on %s', consumer,
                     self.nodename)
            self._write(consumer, {}, project, user, entry.generation)

    def _write(self, consumer, payload, project, user, generation):
        try:
            self.client.put_allocations(consumer, payload, project, user,
                                        generation=generation)
        except exception.AllocationConflict as exc:
            # Changed under us (a move, a delete) or does not fit: the
            # next audit sees the new state and tries again.
            LOG.warning('Allocations of %s not corrected on %s: %s',
                        consumer, self.nodename, exc)

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
