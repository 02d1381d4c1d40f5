"""The client side of the conductor RPC API.

Version history (a new method or argument bumps the minor version; the
server keeps serving every older minor version of the same major):

* 1.0 - object_class_action_versions, object_action,
  object_backport_versions: oslo.versionedobjects' indirection contract.

``[upgrade_levels] conductor`` caps the version this client sends, so a
service upgraded before the conductors never asks an older conductor for
something it does not serve: a version, or ``auto`` for the newest
version every live conductor serves (``SERVICE_VERSION_RPC``), read again
every ``[upgrade_levels] auto_interval`` seconds (resobj.upgrade_levels).
"""

from oslo_log import log as logging
import oslo_messaging as messaging

from resobj import context as resobj_context
from resobj import exception
from resobj import rpc
from resobj import upgrade_levels

LOG = logging.getLogger(__name__)

VERSION = '1.0'
BINARY = 'resobj-conductor'

# (service version, newest conductor RPC API version it serves), oldest
# first: [upgrade_levels] conductor = auto caps at the row of the oldest
# live conductor.
SERVICE_VERSION_RPC = ((1, '1.0'),)


def version_cap(conf, context):
    """The version cap ``[upgrade_levels] conductor`` asks for, or None.

    ``auto``: what the oldest live conductor serves while one runs an
    older service version than this code; None once none does.
    """
    return upgrade_levels.resolve(conf.upgrade_levels.conductor, context,
                                  BINARY, SERVICE_VERSION_RPC)


class ConductorAPI:
    """Calls conductors on ``[conductor] topic`` over ``transport``."""

    def __init__(self, conf, transport, timeout=None):
        self.topic = conf.conductor.topic
        context = resobj_context.get_admin_context()
        self._cap = upgrade_levels.VersionCap(
            'conductor', conf.upgrade_levels.conductor,
            lambda: version_cap(conf, context),
            conf.upgrade_levels.auto_interval, SERVICE_VERSION_RPC[0][1])
        self.timeout = timeout or conf.rpc_response_timeout
        self.retries = conf.conductor.call_retries
        # Capped per call (rpc.prepare): an auto cap changes.
        self.client = rpc.get_client(transport, self.topic, VERSION,
                                     timeout=self.timeout)

    @property
    def version_cap(self):
        """The cap of a call sent now (None: not capped)."""
        return self._cap.get()

    def _call(self, context, version, method, **kwargs):
        cctxt = rpc.prepare(self.client, 'conductor', method, version,
                            self.version_cap)
        for attempt in range(self.retries + 1):
            try:
                return rpc.call(cctxt, context, method, **kwargs)
            except messaging.MessagingTimeout:
                # Carried out or not, nobody can tell: sent again only as
                # many times as [conductor] call_retries allows. After
                # the last attempt, ConductorTimeout says it, once, to
                # whoever handles it.
                if attempt < self.retries:
                    LOG.warning('No conductor answered %(method)s within '
                                '%(timeout)s s (attempt %(attempt)d of '
                                '%(attempts)d); sending it again',
                                {'method': method, 'timeout': self.timeout,
                                 'attempt': attempt + 1,
                                 'attempts': self.retries + 1})
            except messaging.MessageDeliveryFailure as exc:
                raise exception.ConductorUnavailable(topic=self.topic,
                                                     reason=exc)
        raise exception.ConductorTimeout(topic=self.topic, method=method,
                                         timeout=self.timeout,
                                         attempts=self.retries + 1)

    def object_class_action_versions(self, context, objname, objmethod,
                                     object_versions, args, kwargs):
        return self._call(context, '1.0', 'object_class_action_versions',
                          objname=objname, objmethod=objmethod,
                          object_versions=object_versions, args=args,
                          kwargs=kwargs)

    def object_action(self, context, objinst, objmethod, args, kwargs):
        return self._call(context, '1.0', 'object_action', objinst=objinst,
                          objmethod=objmethod, args=args, kwargs=kwargs)

    def object_backport_versions(self, context, objinst, object_versions):
        return self._call(context, '1.0', 'object_backport_versions',
                          objinst=objinst, object_versions=object_versions)
