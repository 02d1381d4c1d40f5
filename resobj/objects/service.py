"""Service: one running resobj service binary on one host.

The service version (``SERVICE_VERSION``) is separate from the object
version: it counts releases of the service code, and
``Service.get_minimum_version`` is how new code decides whether every
reader of some data is new enough for a new format (upgrade gating).
"""

from resobj.db.api import service as service_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

# Bump SERVICE_VERSION and append an entry whenever a service starts to
# depend on something older services cannot do. Each entry says what
# became true at that version; index 0 is a service that reported none.
SERVICE_VERSION_HISTORY = (
    # Version 0: reported by no real service; the minimum when none runs.
    {'note': 'no version reported'},
    # Version 1: the first resobj release (services and their objects).
    {'note': 'initial release'},
)
SERVICE_VERSION = len(SERVICE_VERSION_HISTORY) - 1


@base.ResobjObjectRegistry.register
class Service(base.ResobjPersistentObject, base.ResobjObject):
    # Version 1.0: initial version
    VERSION = '1.0'

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
        'version': fields.NonNegativeIntegerField(default=SERVICE_VERSION),
    }

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
    def get_minimum_version(cls, context, binaries):
        """The lowest service version among live services of ``binaries``.

        0 when any of them has no live service, so that a feature gated on
        a version stays off until every binary has reported one.
        """
        if isinstance(binaries, str):
            binaries = [binaries]
        versions = service_db.get_minimum_version(context, binaries)
        return min(versions.values()) if versions else 0

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        # The table's defaults cover the other fields; the service version
        # is this code's, not the column's 0.
        self.obj_set_defaults('version')
        values = self.obj_get_db_changes()
        self._from_db_object(self._context, self,
                             service_db.create(self._context, values))

    @base.remotable
    def save(self):
        values = self.obj_get_db_changes()
        values.pop('id', None)
        if values:
            row = service_db.update(self._context, self.id, values)
            self._from_db_object(self._context, self, row)

    @base.remotable
    def destroy(self):
        # The deleted row: the caller's object shows deleted and deleted_at.
        self._from_db_object(self._context, self,
                             service_db.destroy(self._context, self.id))


@base.ResobjObjectRegistry.register
class ServiceList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Service 1.0
    VERSION = '1.0'

    fields = {
        'objects': fields.ListOfObjectsField('Service'),
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
