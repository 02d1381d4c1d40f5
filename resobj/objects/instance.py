"""Instance: one server and the resources it consumes on its node."""

import warnings

from oslo_log import log as logging
from oslo_serialization import jsonutils

from resobj.db.api import instance as instance_db
from resobj import exception
from resobj.objects._ovo import base as ovo_base
from resobj.objects import base
from resobj.objects import fields
from resobj.objects import numa

LOG = logging.getLogger(__name__)

FLAVOR_FIELDS = ('flavor', 'old_flavor', 'new_flavor')

# Dict-style access is deprecated; each attribute warns once per process.
_DICT_ACCESS_WARNED = set()
# ``get(key)`` without a default, told apart from ``get(key, None)``.
_NO_DEFAULT = object()


class _DeprecatedDictCompat(ovo_base.VersionedObjectDictCompat):
    """``instance['vcpus']`` still works for old callers, with a warning."""

    def _warn_dict_access(self, key):
        if key in _DICT_ACCESS_WARNED:
            return
        _DICT_ACCESS_WARNED.add(key)
        warnings.warn("%s[%r] is deprecated; use the attribute %s.%s"
                      % (self.obj_name(), key, self.obj_name().lower(),
                         key), DeprecationWarning, stacklevel=3)

    def __getitem__(self, name):
        self._warn_dict_access(name)
        return super().__getitem__(name)

    def __setitem__(self, name, value):
        self._warn_dict_access(name)
        super().__setitem__(name, value)

    def get(self, key, value=_NO_DEFAULT):
        self._warn_dict_access(key)
        if value is _NO_DEFAULT:
            # As the library's own default: a lazy-loaded field loads.
            return super().get(key)
        return super().get(key, value)

    def update(self, updates):
        for key in updates:
            self._warn_dict_access(key)
        super().update(updates)


def flavor_to_db(flavor):
    """The flavor's primitive as stored: data only, no pending changes."""
    if flavor is None:
        return None
    primitive = flavor.obj_to_primitive()
    primitive.pop(base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.changes', None)
    return jsonutils.dumps(primitive)


def flavor_from_db(context, text):
    """A Flavor from its stored primitive, even one newer code wrote.

    During a rolling upgrade a newer service may store a Flavor of a newer
    minor version. Minor versions only add, so this code reads the fields
    it knows; it never rewrites the blob unless the flavor itself changes.
    """
    if not text:
        return None
    primitive = jsonutils.loads(text)
    if base.relabel_newer_minor_versions(primitive):
        LOG.debug('Reading a flavor stored by newer code as the version '
                  'this code knows')
    flavor = base.ResobjObject.obj_from_primitive(primitive, context)
    # Read from storage: nothing about it has changed.
    flavor.obj_reset_changes(recursive=True)
    return flavor


@base.ResobjObjectRegistry.register
class Instance(_DeprecatedDictCompat, base.ResobjPersistentObject,
               base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds old_flavor and new_flavor (resizes)
    # Version 1.2: adds pci_devices (lazy-loaded)
    # Version 1.3: adds booted_from_volume; older versions get root_gb=0
    #              for an instance booted from a volume, their convention
    # Version 1.4: PciDeviceList 1.4
    # Version 1.5: adds numa_topology (InstanceNUMATopology 1.0) and
    #              pci_requests (InstancePCIRequest 1.0). An instance
    #              pinned to host CPUs cannot go to an older peer, which
    #              would take it for a floating one and move or count it
    #              wrongly; an unpinned one goes without its cells.
    VERSION = '1.5'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'host': fields.StringField(nullable=True),
        'node': fields.StringField(nullable=True),
        'vm_state': fields.StringField(nullable=True),
        'task_state': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'vcpus': fields.NonNegativeIntegerField(nullable=True),
        'memory_mb': fields.NonNegativeIntegerField(nullable=True),
        'root_gb': fields.NonNegativeIntegerField(nullable=True),
        'ephemeral_gb': fields.NonNegativeIntegerField(nullable=True),
        'flavor': fields.ObjectField('Flavor', nullable=True),
        'old_flavor': fields.ObjectField('Flavor', nullable=True),
        'new_flavor': fields.ObjectField('Flavor', nullable=True),
        'pci_devices': fields.ObjectField('PciDeviceList', nullable=True),
        'booted_from_volume': fields.BooleanField(default=False),
        # None: not placed on NUMA cells.
        'numa_topology': fields.ObjectField('InstanceNUMATopology',
                                            nullable=True),
        # From the flavor's pci_passthrough:alias extra spec.
        'pci_requests': fields.ListOfObjectsField('InstancePCIRequest',
                                                  nullable=True),
    }

    # The child version each Instance version carries (the Flavor 1.1
    # of every version came with the first Instance).
    obj_relationships = {
        'flavor': [('1.0', '1.1')],
        'old_flavor': [('1.1', '1.1')],
        'new_flavor': [('1.1', '1.1')],
        'pci_devices': [('1.2', '1.3'), ('1.4', '1.4')],
        'numa_topology': [('1.5', '1.0')],
        'pci_requests': [('1.5', '1.0')],
    }

    ADDED_IN = {
        'old_flavor': '1.1',
        'new_flavor': '1.1',
        'pci_devices': '1.2',
        'booted_from_volume': '1.3',
        'numa_topology': '1.5',
        'pci_requests': '1.5',
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if base.version_tuple(target_version) < (1, 3) and \
                primitive.get('booted_from_volume'):
            # Older peers know no volume-backed flag; they count root_gb
            # as local disk, so tell them the truth their way.
            primitive['root_gb'] = 0
        if base.version_tuple(target_version) < (1, 5) and \
                self.obj_attr_is_set('numa_topology') and \
                self.numa_topology is not None and \
                self.numa_topology.pinned:
            # Pinned CPUs are held by this instance alone; an older peer
            # would move or count it as floating and hand them out twice.
            raise exception.ObjectBackportError(
                objname=self.obj_name(), target=target_version,
                reason='instance %s is pinned to host CPUs of NUMA cells '
                       '%s; versions before 1.5 cannot represent it' % (
                           primitive.get('uuid'),
                           sorted(c.id for c in self.numa_topology.cells
                                  if c.pinned)))
        # pci_requests is derived from the flavor's extra specs, which
        # older peers still receive.
        base.drop_fields_added_after(primitive, target_version,
                                     self.ADDED_IN)

    @staticmethod
    def _from_db_object(context, instance, row):
        base.ResobjObject._from_db_object(
            context, instance, row,
            skip=FLAVOR_FIELDS + ('pci_devices', 'numa_topology',
                                  'pci_requests'))
        for name in FLAVOR_FIELDS:
            setattr(instance, name, flavor_from_db(context, row[name]))
        instance.numa_topology = numa.InstanceNUMATopology.from_dict(
            row.get('numa_topology'))
        instance.pci_requests = numa.pci_requests_from_db(
            row.get('pci_requests'))
        instance.obj_reset_changes()
        return instance

    def obj_load_attr(self, attrname):
        if attrname != 'pci_devices':
            raise exception.ObjectActionError(
                action='obj_load_attr',
                reason='attribute %s is not lazy-loadable' % attrname)
        if self.obj_context is None or not self.obj_attr_is_set('uuid'):
            raise exception.ObjectActionError(
                action='obj_load_attr',
                reason='an instance needs a context and a uuid to load '
                       'pci_devices')
        from resobj.objects import pci_device
        self.pci_devices = pci_device.PciDeviceList.get_by_instance_uuid(
            self.obj_context, self.uuid)
        self.obj_reset_changes(['pci_devices'])

    def _db_values(self):
        values = self.obj_get_db_changes()
        values.pop('id', None)
        # Devices are saved through their own objects.
        values.pop('pci_devices', None)
        for name in FLAVOR_FIELDS:
            if name in values:
                values[name] = flavor_to_db(values[name])
        for name in ('numa_topology', 'pci_requests'):
            if name in values:
                values[name] = numa.to_db(values[name])
        return values

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context, uuid):
        return cls._from_db_object(context, cls(),
                                   instance_db.get_by_uuid(context, uuid))

    @classmethod
    @base.remotable
    def get_by_id(cls, context, instance_id):
        return cls._from_db_object(context, cls(),
                                   instance_db.get(context, instance_id))

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        self._from_db_object(self.obj_context, self, instance_db.create(
            self.obj_context, self._db_values()))

    @base.remotable
    def save(self, expected_task_state=instance_db.ANY_TASK_STATE):
        """Write the changed fields.

        With ``expected_task_state`` (a task state, None, or a list of
        them) the write is a compare-and-swap on the stored task_state and
        raises UnexpectedTaskState, writing nothing, when it differs.
        """
        values = self._db_values()
        if not values:
            return
        self._from_db_object(self.obj_context, self, instance_db.update(
            self.obj_context, self.uuid, values,
            expected_task_state=expected_task_state))

    @base.remotable
    def destroy(self):
        self._from_db_object(self.obj_context, self, instance_db.destroy(
            self.obj_context, self.uuid))


@base.ResobjObjectRegistry.register
class InstanceList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Instance 1.0
    # Version 1.1: Instance 1.1
    # Version 1.2: Instance 1.2
    # Version 1.3: Instance 1.3
    # Version 1.4: adds get_by_uuids()
    # Version 1.5: Instance 1.4
    # Version 1.6: Instance 1.5
    VERSION = '1.6'

    fields = {
        'objects': fields.ListOfObjectsField('Instance'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1'), ('1.2', '1.2'),
                    ('1.3', '1.3'), ('1.4', '1.3'), ('1.5', '1.4'),
                    ('1.6', '1.5')],
    }

    @classmethod
    @base.remotable
    def get_by_uuids(cls, context, uuids):
        """The live instances among ``uuids``, in one query."""
        return base.obj_make_list(
            context, cls(context),
            instance_db.get_all_by_uuids(context, sorted(set(uuids))))

    @classmethod
    @base.remotable
    def get_by_host_and_node(cls, context, host, node):
        return base.obj_make_list(
            context, cls(context),
            instance_db.get_all_by_host_and_node(context, host, node))
