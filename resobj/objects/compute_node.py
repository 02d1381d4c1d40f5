"""ComputeNode: one hypervisor node, its resources and its PCI pools.

The resource fields (vcpus, memory_mb, local_gb, their ``_used`` values
and the allocation ratios) come from the node's resource provider when it
has VCPU, MEMORY_MB and DISK_GB inventory, and from the legacy
``compute_nodes`` columns otherwise. Once every service reading them is
new enough (INVENTORY_READER_BINARIES at INVENTORY_SERVICE_VERSION),
create() and save() write both stores in one transaction.
"""

from oslo_utils import uuidutils

from resobj.conf import compute as compute_conf
from resobj.db.api import compute_node as cn_db
from resobj.db.api import service as service_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields
from resobj.objects import numa
from resobj.objects import pci_device_pool

COMPUTE_BINARY = 'resobj-compute'

# The service binaries that read compute node resources. Inventory is
# written only once all their live services run INVENTORY_SERVICE_VERSION
# or later. resobj-compute is the only service binary resobj defines; a
# binary added later that reads ComputeNode resources belongs here.
INVENTORY_READER_BINARIES = (COMPUTE_BINARY,)
# The service version from which compute nodes write resource-provider
# inventory (objects.service.SERVICE_VERSION_HISTORY).
INVENTORY_SERVICE_VERSION = 2

# Resource class -> (total field, used field, ratio field, ratio key of
# the configured defaults).
INVENTORY_FIELDS = {
    'VCPU': ('vcpus', 'vcpus_used', 'cpu_allocation_ratio', 'cpu'),
    'MEMORY_MB': ('memory_mb', 'memory_mb_used', 'ram_allocation_ratio',
                  'ram'),
    'DISK_GB': ('local_gb', 'local_gb_used', 'disk_allocation_ratio',
                'disk'),
}

# The classes a node with a NUMA topology keeps on its cells' child
# providers rather than on its own provider.
CELL_CLASSES = ('VCPU', 'MEMORY_MB')

# Filled in by resobj.objects.configure(conf); option defaults until then.
_ratio_defaults = compute_conf.default_allocation_ratios()

RATIO_FIELDS = {'cpu': 'cpu_allocation_ratio',
                'ram': 'ram_allocation_ratio',
                'disk': 'disk_allocation_ratio'}

# What update_from_virt_driver copies from a virt driver's resources.
VIRT_DRIVER_KEYS = (
    'vcpus', 'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used',
    'local_gb_used', 'free_ram_mb', 'free_disk_gb', 'disk_available_least',
    'current_workload', 'running_vms', 'hypervisor_type',
    'hypervisor_version', 'hypervisor_hostname', 'cpu_info', 'host_ip',
)


def set_allocation_ratio_defaults(defaults):
    """Ratios ({'cpu', 'ram', 'disk'}) for nodes that have none."""
    global _ratio_defaults
    _ratio_defaults = dict(defaults)


@base.ResobjObjectRegistry.register
class ComputeNode(base.ResobjPersistentObject, base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds pci_device_pools
    # Version 1.2: service_id may be None (a node can be recorded before
    #              its service row exists)
    # Version 1.3: adds cpu, ram and disk allocation ratios
    # Version 1.4: adds uuid
    # Version 1.5: adds vcpus_reserved, memory_mb_reserved and
    #              local_gb_reserved (held by the node's resource-provider
    #              inventory)
    # Version 1.6: adds numa_topology (NUMATopology 1.0); older versions
    #              get the node as one flat set of CPUs and memory
    VERSION = '1.6'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(read_only=True),
        'service_id': fields.IntegerField(nullable=True),
        'host': fields.StringField(nullable=True),
        'hypervisor_hostname': fields.StringField(nullable=True),
        'host_ip': fields.IPAddressField(nullable=True),
        'hypervisor_type': fields.StringField(),
        'hypervisor_version': fields.IntegerField(),
        'cpu_info': fields.StringField(),
        'vcpus': fields.NonNegativeIntegerField(),
        'memory_mb': fields.NonNegativeIntegerField(),
        'local_gb': fields.NonNegativeIntegerField(),
        'vcpus_used': fields.NonNegativeIntegerField(),
        'memory_mb_used': fields.NonNegativeIntegerField(),
        'local_gb_used': fields.NonNegativeIntegerField(),
        'free_ram_mb': fields.IntegerField(nullable=True),
        'free_disk_gb': fields.IntegerField(nullable=True),
        'disk_available_least': fields.IntegerField(nullable=True),
        'current_workload': fields.IntegerField(nullable=True),
        'running_vms': fields.IntegerField(nullable=True),
        'cpu_allocation_ratio': fields.NonNegativeFloatField(),
        'ram_allocation_ratio': fields.NonNegativeFloatField(),
        'disk_allocation_ratio': fields.NonNegativeFloatField(),
        'stats': fields.DictOfNullableStringsField(default={}),
        'vcpus_reserved': fields.NonNegativeIntegerField(default=0),
        'memory_mb_reserved': fields.NonNegativeIntegerField(default=0),
        'local_gb_reserved': fields.NonNegativeIntegerField(default=0),
        'pci_device_pools': fields.ObjectField('PciDevicePoolList',
                                               nullable=True),
        # None: the host has no NUMA topology (flat).
        'numa_topology': fields.ObjectField('NUMATopology', nullable=True),
    }

    # The child version each ComputeNode version carries.
    obj_relationships = {
        'pci_device_pools': [('1.1', '1.1')],
        'numa_topology': [('1.6', '1.0')],
    }

    ADDED_IN = {
        'vcpus_reserved': '1.5',
        'memory_mb_reserved': '1.5',
        'local_gb_reserved': '1.5',
        'pci_device_pools': '1.1',
        'cpu_allocation_ratio': '1.3',
        'ram_allocation_ratio': '1.3',
        'disk_allocation_ratio': '1.3',
        'uuid': '1.4',
        'numa_topology': '1.6',
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        base.drop_fields_added_after(primitive, target_version,
                                     self.ADDED_IN)
        if base.version_tuple(target_version) < (1, 2) and \
                primitive.get('service_id') is None:
            # Before 1.2 service_id could not be None, and old peers use it
            # to find the node's service.
            primitive['service_id'] = self._service_id_for(
                primitive.get('host'))

    def _service_id_for(self, host):
        """The compute service's id on ``host``, or -1 when there is none.

        -1 is what old peers understand as "no service": never a real id.
        """
        if host is None or self.obj_context is None:
            return -1
        try:
            return service_db.get_by_host_and_binary(
                self.obj_context, host, COMPUTE_BINARY)['id']
        except exception.ServiceNotFound:
            return -1

    @staticmethod
    def _from_db_object(context, node, row):
        base.ResobjObject._from_db_object(
            context, node, row,
            skip=('uuid', 'pci_device_pools', 'numa_topology') +
            tuple(RATIO_FIELDS.values()))
        node.pci_device_pools = pci_device_pool.from_pci_stats(
            row['pci_stats'])
        node.numa_topology = numa.NUMATopology.from_dict(
            row.get('numa_topology'))
        for resource, name in RATIO_FIELDS.items():
            # Old code stored NULL or 0.0 for "use the configured ratio";
            # the online migration writes it, readers see it at once.
            value = row[name]
            setattr(node, name, value or _ratio_defaults[resource])
        for total, used, ratio, _key in INVENTORY_FIELDS.values():
            # Reserved amounts exist only in inventory: 0 without one.
            setattr(node, total + '_reserved',
                    row.get('inv_%s_reserved' % total) or 0)
            # The provider wins where it has inventory of the class; its
            # inv_ columns are all NULL otherwise (or absent: rows of a
            # destroy() come without them), and the legacy values stand.
            if row.get('inv_' + total) is not None:
                setattr(node, total, row['inv_' + total])
                setattr(node, used, row['inv_%s_used' % total])
                setattr(node, ratio, row['inv_' + ratio])
        uuid = row['uuid']
        if uuid is None:
            # A row from before uuids: give it one now, unless a
            # concurrent reader already did (then use theirs).
            uuid = cn_db.set_uuid_if_missing(context, row['id'],
                                             uuidutils.generate_uuid())
        node.uuid = uuid
        # Recursive: the pools were just built from the row, not changed.
        node.obj_reset_changes(recursive=True)
        return node

    def _db_values(self):
        values = self.obj_get_db_changes()
        values.pop('id', None)
        # Not legacy columns: they travel in the inventory (_inventories).
        for total, *_ in INVENTORY_FIELDS.values():
            values.pop(total + '_reserved', None)
        if 'pci_device_pools' in values:
            values['pci_stats'] = pci_device_pool.to_pci_stats(
                values.pop('pci_device_pools'))
        if values.get('host_ip') is not None:
            values['host_ip'] = str(values['host_ip'])
        if 'numa_topology' in values:
            values['numa_topology'] = numa.to_db(values['numa_topology'])
        return values

    @classmethod
    @base.remotable
    def get_by_id(cls, context, compute_node_id):
        return cls._from_db_object(context, cls(),
                                   cn_db.get(context, compute_node_id))

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context, uuid):
        return cls._from_db_object(context, cls(),
                                   cn_db.get_by_uuid(context, uuid))

    @classmethod
    @base.remotable
    def get_by_host_and_nodename(cls, context, host, nodename):
        return cls._from_db_object(
            context, cls(),
            cn_db.get_by_host_and_nodename(context, host, nodename))

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        if not self.obj_attr_is_set('uuid'):
            self.uuid = uuidutils.generate_uuid()
        for resource, name in RATIO_FIELDS.items():
            if not self.obj_attr_is_set(name):
                setattr(self, name, _ratio_defaults[resource])
        inventories = self._inventories_or_refuse('create')
        self._from_db_object(self.obj_context, self, cn_db.create(
            self.obj_context, self._db_values(), inventories))

    @base.remotable
    def save(self):
        values = self._db_values()
        values.pop('uuid', None)
        reserved = self._changed_reserved()
        if not values and not reserved:
            return
        inventories = self._inventories_or_refuse('save')
        if inventories is not None:
            # Every class, not only the changed ones: a node saved for the
            # first time since the upgrade gets its inventory this way.
            row = cn_db.save_with_inventory(self.obj_context, self.id, values,
                                            inventories)
        else:
            row = cn_db.update(self.obj_context, self.id, values)
        self._from_db_object(self.obj_context, self, row)

    def _changed_reserved(self):
        return [total + '_reserved' for total, *_ in INVENTORY_FIELDS.values()
                if total + '_reserved' in self.obj_what_changed()]

    def _inventories_or_refuse(self, action):
        """The inventories to write, or None before the upgrade gate.

        Reserved amounts live only in inventory; before every reader can
        read inventory there is nowhere to keep a changed one, so the
        write is refused rather than the value silently dropped.
        """
        if self.writes_inventory():
            return self._inventories()
        changed = self._changed_reserved()
        if changed:
            raise exception.ReservedNeedsInventory(
                action=action,
                reason='%s can only be stored in resource-provider '
                       'inventory, which is written once every service '
                       'reading compute nodes is upgraded'
                       % ', '.join(changed))
        return None

    def writes_inventory(self):
        """Whether every reader of node resources can read inventory.

        Until then only the legacy columns are written, which old and
        new readers alike read correctly, and a changed reserved amount
        is refused (ReservedNeedsInventory). Not remotable: it asks
        Service.get_minimum_version, which is.
        """
        # From the registry, not imported: the service module imports
        # this one.
        return base.newest_class('Service').get_minimum_version(
            self.obj_context, INVENTORY_READER_BINARIES) >= \
            INVENTORY_SERVICE_VERSION

    def _inventories(self):
        """{class: inventory values} from this node's resource fields.

        A class whose total field is not set is left out, and so left
        alone in the database; so are VCPU and MEMORY_MB of a node with a
        NUMA topology (its cells hold them). A 0.0 ratio means "the
        configured one", as on reads; inventory needs a ratio above 0.
        """
        inventories = {}
        for rc_name, (total, _used, ratio, key) in INVENTORY_FIELDS.items():
            if not self.obj_attr_is_set(total):
                continue
            if rc_name in CELL_CLASSES and self.obj_attr_is_set(
                    'numa_topology') and self.numa_topology is not None:
                # Held by the cells' child providers, which the tracker
                # writes; left alone on the root provider.
                continue
            value = (getattr(self, ratio) if self.obj_attr_is_set(ratio)
                     else None)
            inventories[rc_name] = {
                'total': getattr(self, total),
                'allocation_ratio': value or _ratio_defaults[key]}
            if self.obj_attr_is_set(total + '_reserved'):
                inventories[rc_name]['reserved'] = getattr(
                    self, total + '_reserved')
        return inventories

    @base.remotable
    def destroy(self):
        self._from_db_object(self.obj_context, self,
                             cn_db.destroy(self.obj_context, self.id))

    def update_from_virt_driver(self, resources):
        """Copy what a virt driver reports about this node.

        Keys other than VIRT_DRIVER_KEYS (and 'uuid') are not node data
        and are ignored. A driver reporting another uuid than the node
        already has is a misconfiguration and raises, changing nothing.
        """
        uuid = resources.get('uuid')
        if uuid is not None and self.obj_attr_is_set('uuid') and \
                uuid != self.uuid:
            raise exception.ComputeNodeUUIDMismatch(
                node=self.hypervisor_hostname, current=self.uuid, new=uuid)
        updates = {key: resources[key] for key in VIRT_DRIVER_KEYS
                   if key in resources}
        # Coerce everything before assigning anything, so a bad value
        # leaves the object untouched.
        for key, value in updates.items():
            self.fields[key].coerce(self, key, value)
        for key, value in updates.items():
            setattr(self, key, value)
        if uuid is not None and not self.obj_attr_is_set('uuid'):
            self.uuid = uuid


@base.ResobjObjectRegistry.register
class ComputeNodeList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, ComputeNode 1.0
    # Version 1.1: ComputeNode 1.1
    # Version 1.2: ComputeNode 1.2
    # Version 1.3: ComputeNode 1.3
    # Version 1.4: ComputeNode 1.4
    # Version 1.5: ComputeNode 1.5
    # Version 1.6: ComputeNode 1.6
    VERSION = '1.6'

    fields = {
        'objects': fields.ListOfObjectsField('ComputeNode'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1'), ('1.2', '1.2'),
                    ('1.3', '1.3'), ('1.4', '1.4'), ('1.5', '1.5'),
                    ('1.6', '1.6')],
    }

    @classmethod
    @base.remotable
    def get_all(cls, context):
        return base.obj_make_list(context, cls(context),
                                  cn_db.get_all(context))

    @classmethod
    @base.remotable
    def get_all_by_host(cls, context, host):
        return base.obj_make_list(context, cls(context),
                                  cn_db.get_all(context, host=host))
