"""PciDevice: one PCI device (a PF, a VF or a plain device) of a node.

A device moves through a small state machine::

    available --claim--> claimed --allocate--> allocated
        ^                   |                      |
        +-------free--------+----------free--------+
    available --remove--> removed

The transition methods change the object in memory only and change
nothing when they refuse; ``save()`` writes the result.
"""

from resobj.db.api import pci_device as pci_device_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields


class PciDeviceStatus(fields.Enum):
    AVAILABLE = 'available'
    CLAIMED = 'claimed'
    ALLOCATED = 'allocated'
    REMOVED = 'removed'
    DELETED = 'deleted'
    UNAVAILABLE = 'unavailable'
    UNCLAIMABLE = 'unclaimable'

    ALL = (AVAILABLE, CLAIMED, ALLOCATED, REMOVED, DELETED, UNAVAILABLE,
           UNCLAIMABLE)

    def __init__(self):
        super().__init__(valid_values=PciDeviceStatus.ALL)


class PciDeviceType(fields.Enum):
    STANDARD = 'type-PCI'
    SRIOV_PF = 'type-PF'
    SRIOV_VF = 'type-VF'
    VDPA = 'type-VDPA'

    ALL = (STANDARD, SRIOV_PF, SRIOV_VF, VDPA)

    def __init__(self):
        super().__init__(valid_values=PciDeviceType.ALL)


class PciDeviceStatusField(fields.BaseEnumField):
    AUTO_TYPE = PciDeviceStatus()


class PciDeviceTypeField(fields.BaseEnumField):
    AUTO_TYPE = PciDeviceType()


# Where versions before 1.2 keep the address of a VF's parent PF.
PHYS_FUNCTION = 'phys_function'

# Fields a primitive older than their version lacks, and the version that
# added them.
_ADDED_IN = {'request_id': '1.1', 'numa_node': '1.1', 'parent_addr': '1.2'}

# Columns a new row cannot do without.
_REQUIRED = ('compute_node_id', 'address', 'vendor_id', 'product_id',
             'dev_type', 'status', 'label')

# A device in use by an instance cannot be deleted under it.
_IN_USE = (PciDeviceStatus.CLAIMED, PciDeviceStatus.ALLOCATED)


@base.ResobjObjectRegistry.register
class PciDevice(base.ResobjPersistentObject, base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds request_id and numa_node
    # Version 1.2: adds parent_addr (older versions keep it in
    #              extra_info['phys_function'])
    # Version 1.3: adds statuses unavailable and unclaimable and dev_type
    #              type-VDPA
    VERSION = '1.3'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'compute_node_id': fields.IntegerField(),
        'address': fields.PCIAddressField(),
        'vendor_id': fields.StringField(),
        'product_id': fields.StringField(),
        'dev_type': PciDeviceTypeField(),
        'status': PciDeviceStatusField(),
        'dev_id': fields.StringField(nullable=True),
        'label': fields.StringField(),
        'instance_uuid': fields.UUIDField(nullable=True),
        'request_id': fields.UUIDField(nullable=True),
        'numa_node': fields.IntegerField(nullable=True),
        'parent_addr': fields.PCIAddressField(nullable=True),
        'extra_info': fields.DictOfStringsField(default={}),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        # Refuse first: an older peer would misread these values, and
        # nothing is worth converting for a primitive that is not sent.
        base.raise_on_too_new_values(
            'PciDevice', target_version, primitive, 'status',
            {PciDeviceStatus.UNAVAILABLE: '1.3',
             PciDeviceStatus.UNCLAIMABLE: '1.3'})
        base.raise_on_too_new_values(
            'PciDevice', target_version, primitive, 'dev_type',
            {PciDeviceType.VDPA: '1.3'})
        if base.version_tuple(target_version) < (1, 2):
            parent_addr = primitive.pop('parent_addr', None)
            if parent_addr is not None:
                # parent_addr is the newer, authoritative copy: it wins
                # over a stale phys_function.
                extra_info = dict(primitive.get('extra_info') or {})
                extra_info[PHYS_FUNCTION] = parent_addr
                primitive['extra_info'] = extra_info
        base.drop_fields_added_after(primitive, target_version, _ADDED_IN)

    def obj_load_attr(self, attrname):
        """Fill a field that a primitive older than the field lacked.

        A device read from an older peer has no request_id or numa_node
        (unknown: None) and keeps its parent PF's address in
        ``extra_info['phys_function']``. The filled value is not a
        change: saving must not overwrite what the database knows with
        None.
        """
        if attrname not in _ADDED_IN:
            raise exception.ObjectActionError(
                action='obj_load_attr',
                reason='attribute %s is not lazy-loadable' % attrname)
        value = None
        if attrname == 'parent_addr':
            value = self._parent_addr_from_extra_info()
        setattr(self, attrname, value)
        self.obj_reset_changes([attrname])

    def refresh_from(self, other):
        """Take the stored state of ``other``, a fresher read of this device.

        For a holder of this object after a list-level transition
        (PciDeviceList.claim_for_instance and friends): its copy now
        matches the database, with nothing left to save.
        """
        if other.id != self.id:
            raise exception.ObjectActionError(
                action='refresh_from', reason='device %s is not %s' % (
                    other.id, self.id))
        for name in self.fields:
            if name != 'id' and other.obj_attr_is_set(name):
                setattr(self, name, getattr(other, name))
        self._stored_status = other.status_as_stored()
        self.obj_reset_changes()

    def status_as_stored(self):
        """The status this device was read with, or None if unknown.

        A device read from the database remembers it. One that crossed a
        process boundary (a conductor's answer) cannot, since only fields
        travel; while its status is unchanged, the status is the stored
        one.
        """
        stored = getattr(self, '_stored_status', None)
        if stored is None and self.obj_attr_is_set('status') and \
                'status' not in self.obj_what_changed():
            stored = self.status
        return stored

    def _parent_addr_from_extra_info(self):
        if not self.obj_attr_is_set('extra_info'):
            return None
        value = self.extra_info.get(PHYS_FUNCTION)
        try:
            return fields.PCIAddressField(nullable=True).coerce(
                self, 'parent_addr', value)
        except ValueError:
            # Not an address: leave it where it is, in extra_info.
            return None

    @staticmethod
    def _from_db_object(context, obj, db_row, skip=()):
        base.ResobjObject._from_db_object(context, obj, db_row, skip)
        # What save() compares against: the status as stored.
        obj._stored_status = db_row['status']
        if obj.obj_attr_is_set('parent_addr') and obj.parent_addr is None:
            parent_addr = obj._parent_addr_from_extra_info()
            if parent_addr is not None:
                # A change on purpose: the next save() moves the address
                # into its own column.
                obj.parent_addr = parent_addr
        return obj

    @classmethod
    @base.remotable
    def get_by_id(cls, context, device_id):
        return cls._from_db_object(context, cls(),
                                   pci_device_db.get(context, device_id))

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        missing = [name for name in _REQUIRED
                   if not self.obj_attr_is_set(name)]
        if missing:
            raise exception.ObjectActionError(
                action='create', reason='%s not set' % ', '.join(missing))
        self.obj_set_defaults('extra_info')
        values = self.obj_get_db_changes()
        self._from_db_object(self.obj_context, self,
                             pci_device_db.create(self.obj_context, values))

    def _save_change(self):
        """(id, expected status, values) for this device's changes.

        A status change is a compare-and-swap against the status the
        device was read with, so a device claimed by another writer
        since then is not claimed again (PciDeviceStatusChanged).
        """
        values = self.obj_get_db_changes()
        values.pop('id', None)
        expected = self.status_as_stored() if 'status' in values else None
        return self.id, expected, values

    @base.remotable
    def save(self):
        device_id, expected, values = self._save_change()
        if values:
            row = pci_device_db.update(self.obj_context, device_id, values,
                                       expected_status=expected)
            self._from_db_object(self.obj_context, self, row)

    @base.remotable
    def destroy(self):
        """Soft-delete the device; its status becomes 'deleted'.

        Refused for a claimed or allocated device: its instance still
        counts on it, so free() it first.
        """
        if self.status in _IN_USE:
            self._refuse('destroy', _allowed_except(_IN_USE))
        self._from_db_object(self.obj_context, self,
                             pci_device_db.destroy(self.obj_context, self.id))

    # The state machine. Each method checks everything before it changes
    # anything, so a refusal leaves the object as it was.

    def claim(self, instance_uuid, request_id=None):
        """Reserve an available device for ``instance_uuid``."""
        self._check('claim', (PciDeviceStatus.AVAILABLE,))
        # Validate both before setting either.
        instance_uuid = _uuid(self, 'instance_uuid', instance_uuid)
        request_id = (None if request_id is None
                      else _uuid(self, 'request_id', request_id))
        self.instance_uuid = instance_uuid
        self.request_id = request_id
        self.status = PciDeviceStatus.CLAIMED

    def allocate(self, instance_uuid):
        """Give a device claimed by ``instance_uuid`` to that instance.

        Only a claimed device can be allocated: claim() is where the
        device is reserved and its owner and request recorded, and one
        path into 'allocated' keeps every allocation traceable to a claim.
        A caller rebuilding the state of a running instance claims and
        allocates in memory, then saves once.
        """
        self._check('allocate', (PciDeviceStatus.CLAIMED,), instance_uuid)
        self.status = PciDeviceStatus.ALLOCATED

    def free(self, instance_uuid=None):
        """Make a claimed or allocated device available again.

        With ``instance_uuid``, refuses a device another instance holds.
        """
        self._check('free', _IN_USE, instance_uuid)
        self.instance_uuid = None
        self.request_id = None
        self.status = PciDeviceStatus.AVAILABLE

    def remove(self):
        """Mark an available device as gone from its node."""
        self._check('remove', (PciDeviceStatus.AVAILABLE,))
        self.status = PciDeviceStatus.REMOVED

    def _check(self, transition, allowed, instance_uuid=None):
        if self.status not in allowed:
            self._refuse(transition, allowed)
        if instance_uuid is None:
            return
        # Compare canonical forms, as the field stores them.
        wanted = _uuid(self, 'instance_uuid', instance_uuid)
        if self.instance_uuid != wanted:
            raise exception.PciDeviceInvalidOwner(
                transition=transition, address=self.address,
                instance_uuid=wanted, owner=self.instance_uuid)

    def _refuse(self, transition, allowed):
        raise exception.PciDeviceInvalidStatus(
            transition=transition, address=self.address, status=self.status,
            allowed=', '.join(allowed))


def _uuid(device, name, value):
    return fields.UUIDField().coerce(device, name, value)


def _allowed_except(statuses):
    return tuple(s for s in PciDeviceStatus.ALL if s not in statuses)


@base.ResobjObjectRegistry.register
class PciDeviceList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: PciDevice 1.0
    # Version 1.1: PciDevice 1.1
    # Version 1.2: PciDevice 1.2
    # Version 1.3: PciDevice 1.3
    # Version 1.4: adds claim_for_instance, allocate_for_instance and
    #              free_for_instance
    VERSION = '1.4'

    fields = {
        'objects': fields.ListOfObjectsField('PciDevice'),
    }
    # The device version each list version carries (see ObjectListBase).
    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1'), ('1.2', '1.2'),
                    ('1.3', '1.3'), ('1.4', '1.3')],
    }

    @classmethod
    @base.remotable
    def get_by_compute_node(cls, context, compute_node_id):
        return base.obj_make_list(
            context, cls(context),
            pci_device_db.get_all_by_compute_node(context, compute_node_id))

    @classmethod
    @base.remotable
    def get_by_instance_uuid(cls, context, uuid):
        return base.obj_make_list(
            context, cls(context),
            pci_device_db.get_all_by_instance_uuid(context, uuid))

    # Several devices change state together or not at all: one
    # transaction compares and swaps every device's status (see
    # pci_device_db.transition_all), so a claim that loses a race to
    # another writer leaves nothing claimed, and no reader ever sees
    # part of a claim. Each returns the devices as stored afterwards;
    # a refusal (PciDeviceInvalidStatus, PciDeviceInvalidOwner,
    # PciDeviceStatusChanged, PciDeviceNotFound) changes nothing.

    @classmethod
    @base.remotable
    def claim_for_instance(cls, context, device_ids, instance_uuid,
                           request_id=None):
        """Claim the available devices ``device_ids`` for the instance."""
        return cls._transition(
            context, device_ids, (PciDeviceStatus.AVAILABLE,),
            {'status': PciDeviceStatus.CLAIMED,
             'instance_uuid': _uuid(cls, 'instance_uuid', instance_uuid),
             'request_id': (None if request_id is None else
                            _uuid(cls, 'request_id', request_id))})

    @classmethod
    @base.remotable
    def allocate_for_instance(cls, context, device_ids, instance_uuid):
        """Allocate devices the instance has claimed, all of them."""
        return cls._transition(
            context, device_ids, (PciDeviceStatus.CLAIMED,),
            {'status': PciDeviceStatus.ALLOCATED}, instance_uuid)

    @classmethod
    @base.remotable
    def free_for_instance(cls, context, device_ids, instance_uuid):
        """Make the instance's claimed or allocated devices available."""
        return cls._transition(
            context, device_ids, _IN_USE,
            {'status': PciDeviceStatus.AVAILABLE, 'instance_uuid': None,
             'request_id': None}, instance_uuid)

    @classmethod
    def _transition(cls, context, device_ids, from_statuses, values,
                    instance_uuid=None):
        if instance_uuid is not None:
            instance_uuid = _uuid(cls, 'instance_uuid', instance_uuid)
        return base.obj_make_list(
            context, cls(context), pci_device_db.transition_all(
                context, list(device_ids), from_statuses, values,
                instance_uuid))
