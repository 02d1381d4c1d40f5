"""Service: one running resobj service binary on one host.

The service version (``SERVICE_VERSION``) is separate from the object
version: it counts releases of the service code, and
``Service.get_minimum_version`` is how new code decides whether every
reader of some data is new enough for a new format (upgrade gating).
"""

import contextlib
import contextvars

from oslo_log import log as logging
from oslo_utils import versionutils

from resobj.conf import service as service_conf
from resobj.db.api import service as service_db
from resobj import exception
from resobj.objects import base
from resobj.objects import compute_node
from resobj.objects import fields

# Bump SERVICE_VERSION and append an entry whenever a service starts to
# depend on something older services cannot do. Each entry says what
# became true at that version (``note``) and which versions of the
# Service object code of that version was released with
# (``service_objects``; add the new one when Service's VERSION changes):
# a caller that does not say its service version -- code older than
# version 3 -- is known by the Service version it sends
# (:func:`version_of_caller`). The RPC API versions each service version
# serves are in the APIs' own tables (``SERVICE_VERSION_RPC`` in
# resobj/compute/rpcapi.py and resobj/conductor/rpcapi.py). Index 0 is a
# service that reported none.
SERVICE_VERSION_HISTORY = (
    # Version 0: reported by no real service; the minimum when none runs.
    {'note': 'no version reported', 'service_objects': ()},
    # Version 1: the first resobj release (services and their objects).
    {'note': 'initial release', 'service_objects': ('1.0', '1.1')},
    # Version 2: compute nodes write resource-provider inventory (VCPU,
    # MEMORY_MB, DISK_GB) alongside their legacy columns, and read it in
    # preference to them; gates ComputeNode's dual write.
    {'note': 'compute nodes write resource-provider inventory',
     'service_objects': ('1.2', '1.3', '1.4')},
    # Version 3: understands NUMA objects (ComputeNode 1.6, Instance 1.5)
    # and NUMA cell child providers: a compute node with a NUMA topology
    # reports VCPU and MEMORY_MB on one child provider per cell, and at
    # its first audit reshapes a node that used to report them flat.
    # Sends its service version with every call to a conductor.
    {'note': 'NUMA topologies and NUMA cell child providers',
     'service_objects': ('1.5',)},
    # Version 4: compute RPC 1.1 and conductor RPC 1.1: every
    # state-changing call carries an idempotency key and is carried out
    # at most once per key (a compute's bounded outcome record, a
    # conductor's call_outcomes table); callers send calls again with
    # their key when no answer comes in time. Still Service 1.5: a caller
    # that sent 1.5 without saying its version is taken for version 3
    # (the oldest that shipped it), but code of this version always says
    # it.
    {'note': 'compute and conductor RPC 1.1: keyed calls, carried out at '
             'most once, retried',
     'service_objects': ('1.5',)},
)
SERVICE_VERSION = len(SERVICE_VERSION_HISTORY) - 1
# The service version of the previous release (N-1, 0.0.1): the oldest
# that may run beside this code. A release may bump SERVICE_VERSION more
# than once; move this when a release is cut, with the upgrade tests'
# baseline (resobj/tests/upgrade/test_service_versions.py checks it
# against the baseline's code).
PREVIOUS_RELEASE_SERVICE_VERSION = 2

# Seconds without a report after which a service is down and no longer
# counts in get_minimum_version. Set by resobj.objects.configure(conf)
# from [DEFAULT] service_down_time; the option's default until then.
_service_down_time = service_conf.service_down_time_opt.default


LOG = logging.getLogger(__name__)

# The service version of the code a Service method runs for: a
# conductor runs methods for its callers (acting_for); anything else
# runs its own code's.
_acting_for = contextvars.ContextVar('resobj_acting_for', default=None)


def set_service_down_time(seconds):
    global _service_down_time
    _service_down_time = seconds


@contextlib.contextmanager
def acting_for(version):
    """Run the block's Service methods for code of service ``version``.

    A conductor runs each caller's call in this block: the Service
    record a registration or report writes then carries the caller's
    version, not the conductor's. None: this code's own.
    """
    token = _acting_for.set(version)
    try:
        yield
    finally:
        _acting_for.reset(token)


def running_version():
    """The service version of the code this call runs for."""
    version = _acting_for.get()
    return SERVICE_VERSION if version is None else version


def version_of_caller(object_versions):
    """The service version of a caller that did not say, or None.

    ``object_versions`` is what the call carries ({object name:
    version}: a manifest, or the objects sent). Code older than service
    version 3 does not send its service version; it is known by the
    version of the Service object it sends, through
    SERVICE_VERSION_HISTORY. Where several service versions shipped that
    Service version, the oldest: a version gate then stays shut rather
    than open a feature the caller may lack. None without a Service.
    """
    sent = object_versions.get(Service.obj_name())
    if sent is None:
        return None
    shipped = [version for version, entry in
               enumerate(SERVICE_VERSION_HISTORY)
               if sent in entry.get('service_objects', ())]
    if shipped:
        return min(shipped)
    # A Service version no release shipped (a development build):
    # the newest service version that began at or below it.
    sent = versionutils.convert_version_to_tuple(sent)
    began = [version for version, entry in
             enumerate(SERVICE_VERSION_HISTORY)
             if entry.get('service_objects') and versionutils
             .convert_version_to_tuple(entry['service_objects'][0]) <= sent]
    return max(began, default=0)


@base.ResobjObjectRegistry.register
class Service(base.ResobjPersistentObject, base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds compute_node (lazy-loaded) and get_by_compute_host()
    # Version 1.2: version has no field default; create() fills in
    #              SERVICE_VERSION. A default of SERVICE_VERSION put the
    #              service version into this object's fingerprint, so
    #              every service version bump looked like a schema change.
    #              Same fields and wire format: the backport is a no-op.
    # Version 1.3: ComputeNode 1.5
    # Version 1.4: adds register() and heartbeat(); get_minimum_version()
    #              leaves out services not seen for service_down_time.
    #              No field change: the backport is a no-op.
    # Version 1.5: ComputeNode 1.6
    VERSION = '1.5'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'host': fields.StringField(),
        'binary': fields.StringField(),
        'topic': fields.StringField(nullable=True),
        'report_count': fields.NonNegativeIntegerField(default=0),
        'disabled': fields.BooleanField(default=False),
        'disabled_reason': fields.StringField(nullable=True),
        'last_seen_up': fields.DateTimeField(nullable=True),
        'forced_down': fields.BooleanField(default=False),
        # Filled with SERVICE_VERSION by create(); see Version 1.2.
        'version': fields.NonNegativeIntegerField(),
        'compute_node': fields.ObjectField('ComputeNode', nullable=True),
    }

    ADDED_IN = {'compute_node': '1.1'}

    # The ComputeNode version each Service version carries.
    obj_relationships = {
        'compute_node': [('1.1', '1.4'), ('1.3', '1.5'), ('1.4', '1.5'),
                         ('1.5', '1.6')],
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        base.drop_fields_added_after(primitive, target_version,
                                     self.ADDED_IN)

    @staticmethod
    def _from_db_object(context, service, db_row, skip=()):
        # compute_node is not a column: it loads on first access.
        return base.ResobjObject._from_db_object(
            context, service, db_row, skip=tuple(skip) + ('compute_node',))

    def obj_load_attr(self, attrname):
        if attrname != 'compute_node':
            raise exception.ObjectActionError(
                action='obj_load_attr',
                reason='attribute %s is not lazy-loadable' % attrname)
        if self.obj_context is None:
            raise exception.ObjectActionError(
                action='obj_load_attr',
                reason='no context to load compute_node with')
        if self.binary != compute_node.COMPUTE_BINARY:
            raise exception.ObjectActionError(
                action='obj_load_attr',
                reason='service %s/%s is not a compute service and has no '
                       'compute node' % (self.host, self.binary))
        nodes = compute_node.ComputeNodeList.get_all_by_host(
            self.obj_context, self.host)
        if not nodes:
            raise exception.ComputeNodeNotFound(key='host=%s' % self.host)
        # A compute service may drive several nodes (e.g. bare metal); the
        # first one created is the service's own, as old code assumed.
        self.compute_node = nodes[0]
        self.obj_reset_changes(['compute_node'])

    @classmethod
    @base.remotable
    def get_by_id(cls, context, service_id):
        return cls._from_db_object(context, cls(),
                                   service_db.get(context, service_id))

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context, uuid):
        return cls._from_db_object(context, cls(),
                                   service_db.get_by_uuid(context, uuid))

    @classmethod
    @base.remotable
    def get_by_host_and_binary(cls, context, host, binary):
        return cls._from_db_object(
            context, cls(),
            service_db.get_by_host_and_binary(context, host, binary))

    @classmethod
    @base.remotable
    def get_by_compute_host(cls, context, host):
        """The compute service running on ``host``."""
        return cls.get_by_host_and_binary(context, host,
                                          compute_node.COMPUTE_BINARY)

    @classmethod
    @base.remotable
    def get_minimum_version(cls, context, binaries):
        """The lowest service version among live services of ``binaries``.

        A service counts unless it is deleted, forced down, or down: its
        last report (``last_seen_up``) is older than service_down_time. A
        service that never reported counts: it runs code from before
        services reported, and nothing tells whether it is alive.

        0 when any of them has no such service, so that a feature gated
        on a version stays off until every binary has reported one.
        """
        if isinstance(binaries, str):
            binaries = [binaries]
        versions = service_db.get_minimum_version(
            context, binaries, down_time=_service_down_time)
        return min(versions.values()) if versions else 0

    @classmethod
    @base.remotable
    def register(cls, context, host, binary, topic=None):
        """The service of ``binary`` on ``host``, recorded as started now.

        A service calls this at start: it creates the row, or updates the
        live one, with the running code's service version (the caller's,
        when a conductor runs it: :func:`running_version`; lower than the
        row's after a rollback: the running code is what counts) and
        ``last_seen_up`` now. Disabled and forced-down flags stay as the
        operator set them.
        """
        return cls._from_db_object(context, cls(), service_db.register(
            context, host, binary, running_version(), topic=topic))

    @base.remotable
    def heartbeat(self):
        """Report this service alive: ``last_seen_up`` now, one more report.

        The time is taken where the database is written, so a node's own
        clock does not matter. The version is the running code's again
        (:func:`running_version`), so a record always shows what its
        service runs. Raises ServiceNotFound when the service was
        deleted meanwhile.
        """
        self._from_db_object(self.obj_context, self, service_db.heartbeat(
            self.obj_context, self.id, running_version()))

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        # The table's defaults cover the other fields; the service version
        # is the running code's, not the column's 0.
        if not self.obj_attr_is_set('version'):
            self.version = running_version()
        values = self._db_values()
        self._from_db_object(self.obj_context, self,
                             service_db.create(self.obj_context, values))

    @base.remotable
    def save(self):
        values = self._db_values()
        if values:
            row = service_db.update(self.obj_context, self.id, values)
            self._from_db_object(self.obj_context, self, row)

    def _db_values(self):
        values = self.obj_get_db_changes()
        values.pop('id', None)
        # The node is saved through its own object, never through this.
        values.pop('compute_node', None)
        return values

    @base.remotable
    def destroy(self):
        # The deleted row: the caller's object shows deleted and deleted_at.
        self._from_db_object(self.obj_context, self,
                             service_db.destroy(self.obj_context, self.id))


def report_alive(context, service, host, binary, topic=None):
    """Report a running service alive; return its Service.

    ``service`` is what the last report returned, None at start: the
    service is registered (created, or brought to this code's version),
    then each later report is a heartbeat. One deleted meanwhile by an
    operator is registered again: the host runs it, and a service
    missing from the table would let the upgrade gate open without it.
    """
    if service is not None:
        try:
            service.heartbeat()
            return service
        except exception.ServiceNotFound:
            LOG.warning('The %(binary)s service of %(host)s was deleted '
                        'while it runs; registering it again',
                        {'binary': binary, 'host': host})
    return Service.register(context, host, binary, topic=topic)


@base.ResobjObjectRegistry.register
class ServiceList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Service 1.0
    # Version 1.1: Service 1.1
    # Version 1.2: Service 1.2
    # Version 1.3: Service 1.3
    # Version 1.4: Service 1.4
    # Version 1.5: Service 1.5
    VERSION = '1.5'

    fields = {
        'objects': fields.ListOfObjectsField('Service'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1'), ('1.2', '1.2'),
                    ('1.3', '1.3'), ('1.4', '1.4'), ('1.5', '1.5')],
    }

    @classmethod
    @base.remotable
    def get_all(cls, context, include_disabled=True):
        return base.obj_make_list(
            context, cls(context),
            service_db.get_all(context, include_disabled=include_disabled))

    @classmethod
    @base.remotable
    def get_by_binary(cls, context, binary, include_disabled=True):
        return base.obj_make_list(
            context, cls(context),
            service_db.get_all(context, binary=binary,
                               include_disabled=include_disabled))
