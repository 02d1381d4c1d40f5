"""Objects through a conductor: the indirection API of DB-less services.

``use_conductor(conf)`` is what a service with ``[conductor] use_local =
false`` calls at start: from then on every remotable object method, and
every backport its serializer needs, runs in a resobj-conductor, and the
database facade refuses to be used in this process.
"""

import copy

from oslo_log import log as logging

from resobj.conductor import rpcapi
from resobj.db import facade
from resobj.objects import base
from resobj.objects import service as service_obj
from resobj import rpc

LOG = logging.getLogger(__name__)


def _sent_by_this_code(context):
    """``context`` saying this code's service version to the conductor.

    The conductor records it for this node's Service (registration and
    reports). A copy: the context may have come from another node, with
    that node's version in it.
    """
    context = copy.copy(context)
    context.service_version = service_obj.SERVICE_VERSION
    return context


class ConductorIndirectionAPI(base.ovo_base.VersionedObjectIndirectionAPI):
    """oslo.versionedobjects' indirection API over the conductor RPC API."""

    def __init__(self, conf, transport):
        self.rpcapi = rpcapi.ConductorAPI(conf, transport)

    def object_action(self, context, objinst, objmethod, args, kwargs):
        return self.rpcapi.object_action(_sent_by_this_code(context),
                                         objinst, objmethod, args, kwargs)

    def object_class_action(self, context, objname, objmethod, objver,
                            args, kwargs):
        # The single-version form predates manifests; ask with this
        # process's whole manifest instead, which the conductor answers.
        return self.object_class_action_versions(
            context, objname, objmethod,
            base.obj_tree_get_versions(objname), args, kwargs)

    def object_class_action_versions(self, context, objname, objmethod,
                                     object_versions, args, kwargs):
        return self.rpcapi.object_class_action_versions(
            _sent_by_this_code(context), objname, objmethod, object_versions,
            args, kwargs)

    def object_backport_versions(self, context, objinst, object_versions):
        return self.rpcapi.object_backport_versions(
            _sent_by_this_code(context), objinst, object_versions)


def use_conductor(conf, transport=None):
    """Send every object call of this process to a conductor.

    Returns a function that undoes it (for tests). The database facade is
    refused for as long, so a code path that would still reach the
    database directly fails loudly instead of opening a connection.
    """
    _warn_of_database_settings(conf)
    transport = transport or rpc.get_transport(conf)
    api = ConductorIndirectionAPI(conf, transport)
    previous = base.ResobjObject.indirection_api
    base.ResobjObject.indirection_api = api
    allow = facade.forbid('[conductor] use_local is false: this service '
                          'reaches the database only through '
                          'resobj-conductor')

    def undo():
        base.ResobjObject.indirection_api = previous
        allow()
    return undo


def _warn_of_database_settings(conf):
    """One warning if the user set [database] options this process ignores.

    A host configured for both is most likely a mistake: it may mean to
    use the database it names, and does not.
    """
    ignored = sorted(name for name in conf.database
                     if _set_by_user(conf, name, 'database'))
    if ignored:
        LOG.warning('[database] options set but not used (%s): with '
                    '[conductor] use_local = false this process reaches '
                    'the database only through resobj-conductor. Remove '
                    'them from its configuration, or set use_local = true '
                    'to use that database directly.', ', '.join(ignored))


def _set_by_user(conf, name, group):
    # oslo.config gives no location for an option left at a default of
    # None.
    location = conf.get_location(name, group)
    return location is not None and location.location.is_user_controlled
