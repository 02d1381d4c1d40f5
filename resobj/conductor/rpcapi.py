"""The client side of the conductor RPC API.

Version history (a new method or argument bumps the minor version; the
server keeps serving every older minor version of the same major):

* 1.0 - object_class_action_versions, object_action,
  object_backport_versions: oslo.versionedobjects' indirection contract.
* 1.1 - object_class_action_versions and object_action take an
  ``idempotency_key``: one per logical call, the same in every repeat of
  it. A conductor carries a state-changing method out at most once per
  key and answers each repeat as it answered the first (service
  version 4).

A keyed call (1.1) that gets no answer within ``[conductor]
call_timeout`` is sent again with its key after a short pause, until
``[DEFAULT] rpc_response_timeout`` has passed since it was first sent;
ConductorTimeout only then. A call capped to 1.0 carries no key: it
waits ``rpc_response_timeout`` and is sent again only ``[conductor]
call_retries`` times (0 by default), as before 1.1, since a repeat of
it may run twice.

``[upgrade_levels] conductor`` caps the version this client sends, so a
service upgraded before the conductors never asks an older conductor for
something it does not serve: a version, or ``auto`` for the newest
version every live conductor serves (``SERVICE_VERSION_RPC``), read again
every ``[upgrade_levels] auto_interval`` seconds (resobj.upgrade_levels).
"""

import time

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import uuidutils

from resobj import context as resobj_context
from resobj import exception
from resobj import rpc
from resobj import upgrade_levels

LOG = logging.getLogger(__name__)

VERSION = '1.1'
BINARY = 'resobj-conductor'

# (service version, newest conductor RPC API version it serves), oldest
# first: [upgrade_levels] conductor = auto caps at the row of the oldest
# live conductor.
SERVICE_VERSION_RPC = ((1, '1.0'), (4, '1.1'))

# Seconds between the tries of a keyed call: the first pause, and the
# longest (each pause doubles the one before).
FIRST_PAUSE = 0.5
LONGEST_PAUSE = 2.0


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
        self.try_timeout = min(conf.conductor.call_timeout, self.timeout)
        # Capped per call (rpc.prepare): an auto cap changes.
        self.client = rpc.get_client(transport, self.topic, VERSION,
                                     timeout=self.timeout)

    @property
    def version_cap(self):
        """The cap of a call sent now (None: not capped)."""
        return self._cap.get()

    def _call(self, context, version, method, **kwargs):
        """An unkeyed call: ``[conductor] call_retries`` more tries."""
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

    def _keyed_call(self, context, method, **kwargs):
        """A call at 1.1 with an idempotency key, tried until answered.

        Capped to 1.0 (a conductor of the previous release may get it),
        it goes without the key, as :meth:`_call` sends it.
        """
        cap = self.version_cap
        if not self.client.prepare(version_cap=cap).can_send_version('1.1'):
            return self._call(context, '1.0', method, **kwargs)
        kwargs['idempotency_key'] = uuidutils.generate_uuid()
        deadline = time.monotonic() + self.timeout
        attempt = 0
        pause = FIRST_PAUSE
        timed_out = False
        while True:
            attempt += 1
            left = deadline - time.monotonic()
            cctxt = rpc.prepare(self.client, 'conductor', method, '1.1',
                                cap, timeout=min(self.try_timeout, left))
            try:
                return rpc.call(cctxt, context, method, **kwargs)
            except messaging.MessagingTimeout:
                timed_out = True
                left = deadline - time.monotonic()
                if left <= pause:
                    break
                LOG.warning('No conductor answered %(method)s within '
                            '%(timeout)s s (try %(attempt)d); sending it '
                            'again with its idempotency key %(key)s',
                            {'method': method, 'timeout': self.try_timeout,
                             'attempt': attempt,
                             'key': kwargs['idempotency_key']})
                time.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)
            except messaging.MessageDeliveryFailure as exc:
                if not timed_out:
                    # No try can have reached a conductor: a clear error
                    # now, not a wait for the broker.
                    raise exception.ConductorUnavailable(topic=self.topic,
                                                         reason=exc)
                # An earlier try may have been carried out: with the key
                # a repeat is harmless and learns what it did, so wait for
                # the broker within the deadline.
                if deadline - time.monotonic() <= pause:
                    break
                LOG.warning('Cannot reach the broker for %(method)s (try '
                            '%(attempt)d): %(error)s; trying again',
                            {'method': method, 'attempt': attempt,
                             'error': exc})
                time.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)
        raise exception.ConductorTimeout(topic=self.topic, method=method,
                                         timeout=self.timeout,
                                         attempts=attempt)

    def object_class_action_versions(self, context, objname, objmethod,
                                     object_versions, args, kwargs):
        return self._keyed_call(context, 'object_class_action_versions',
                                objname=objname, objmethod=objmethod,
                                object_versions=object_versions, args=args,
                                kwargs=kwargs)

    def object_action(self, context, objinst, objmethod, args, kwargs):
        return self._keyed_call(context, 'object_action', objinst=objinst,
                                objmethod=objmethod, args=args,
                                kwargs=kwargs)

    def object_backport_versions(self, context, objinst, object_versions):
        return self._call(context, '1.0', 'object_backport_versions',
                          objinst=objinst, object_versions=object_versions)
