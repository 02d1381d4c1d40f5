"""The client side of the conductor RPC API.

Version history (a new method or argument bumps the minor version; the
server keeps serving every older minor version of the same major):

* 1.0 - object_class_action_versions, object_action,
  object_backport_versions: oslo.versionedobjects' indirection contract.

``[upgrade_levels] conductor`` caps the version this client sends, so a
service upgraded before the conductors never asks an older conductor for
something it does not serve.
"""

import oslo_messaging as messaging

from resobj import exception
from resobj import rpc

VERSION = '1.0'


class ConductorAPI:
    """Calls conductors on ``[conductor] topic`` over ``transport``."""

    def __init__(self, conf, transport, timeout=None):
        self.topic = conf.conductor.topic
        self.version_cap = conf.upgrade_levels.conductor
        self.timeout = timeout or conf.rpc_response_timeout
        self.client = rpc.get_client(transport, self.topic, VERSION,
                                     version_cap=self.version_cap,
                                     timeout=self.timeout)

    def _call(self, context, version, method, **kwargs):
        if not self.client.can_send_version(version):
            raise exception.RPCVersionCapped(
                api='conductor', method=method, version=version,
                cap=self.version_cap)
        cctxt = self.client.prepare(version=version)
        try:
            return cctxt.call(context, method, **kwargs)
        except messaging.MessagingTimeout:
            # The call may have been carried out or not: it is not sent
            # again (a claim would be made twice); the caller decides.
            raise exception.ConductorTimeout(topic=self.topic,
                                             method=method,
                                             timeout=self.timeout)
        except messaging.MessageDeliveryFailure as exc:
            raise exception.ConductorUnavailable(topic=self.topic,
                                                 reason=exc)

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
