"""The client side of the compute RPC API: one compute host calling another.

Each method is sent to one host's ``resobj-compute`` (topic
``[compute] topic``, server = that host) and carries Instance and
Migration objects, which the receiver's serializer reads at its own
versions (asking the conductor for a backport when they are newer).

Version history (a new method or argument bumps the minor version; the
server keeps serving every older minor version of the same major):

* 1.0 - build_instance, delete_instance, prep_resize, resize_source,
  confirm_resize, revert_resize, finish_revert_resize,
  check_can_live_migrate_destination, check_shared_storage,
  live_migration, pre_live_migration,
  post_live_migration_at_destination,
  rollback_live_migration_at_destination.
* 1.1 - every state-changing method (STATE_CHANGING) takes an
  ``idempotency_key``: the receiver carries a call out at most once per
  key and answers a repeat with what the first did
  (resobj.compute.outcome). The caller sends each try with a per-try
  timeout (``[compute] call_timeout``) and sends again with the same
  key, up to ``[compute] call_retries`` times.

A call capped to 1.0 (an N-1 compute alive) is sent in the 1.0 form,
without a key, once: it waits ``[DEFAULT] rpc_response_timeout`` and is
never retried, since the receiver could not tell a repeat from a new
call.

``[upgrade_levels] compute`` caps the version sent: a version, or
``auto`` for the newest version every live compute service serves (from
the Service records' versions, ``SERVICE_VERSION_RPC``), read again
every ``[upgrade_levels] auto_interval`` seconds while the service runs
(resobj.upgrade_levels).
"""

import time

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import uuidutils

from resobj import exception
from resobj.objects import compute_node as cn_obj
from resobj import rpc
from resobj import upgrade_levels

LOG = logging.getLogger(__name__)

VERSION = '1.1'
BINARY = cn_obj.COMPUTE_BINARY

# (service version, newest compute RPC API version it serves), oldest
# first: [upgrade_levels] compute = auto caps at the row of the oldest
# live compute service.
SERVICE_VERSION_RPC = ((1, '1.0'), (4, '1.1'))


# The methods that change state: from 1.1 each carries an idempotency
# key and is retried; the others (checks) are read-only and sent once.
STATE_CHANGING = frozenset((
    'build_instance', 'delete_instance', 'prep_resize', 'resize_source',
    'confirm_resize', 'revert_resize', 'finish_revert_resize',
    'live_migration', 'pre_live_migration',
    'post_live_migration_at_destination',
    'rollback_live_migration_at_destination'))
KEYED = '1.1'
# Seconds between two tries when the broker could not be reached.
UNREACHABLE_PAUSE = 1.0


def rpc_version_for_service(service_version):
    """The newest compute RPC version a service of that version serves."""
    return upgrade_levels.served_by(SERVICE_VERSION_RPC, service_version)


def version_cap(conf, context):
    """The version cap ``[upgrade_levels] compute`` asks for, or None.

    ``auto``: what the oldest live compute service serves while one runs
    an older service version than this code; None once none does (or no
    compute service runs at all: nobody older to protect).
    """
    return upgrade_levels.resolve(conf.upgrade_levels.compute, context,
                                  BINARY, SERVICE_VERSION_RPC)


class ComputeAPI:
    """Calls the compute service of a given host."""

    def __init__(self, conf, transport, context):
        self.topic = conf.compute.topic
        self._cap = upgrade_levels.VersionCap(
            'compute', conf.upgrade_levels.compute,
            lambda: version_cap(conf, context),
            conf.upgrade_levels.auto_interval, SERVICE_VERSION_RPC[0][1])
        self.timeout = conf.rpc_response_timeout
        self.call_timeout = conf.compute.call_timeout
        self.call_retries = conf.compute.call_retries
        # Capped per call (rpc.prepare): an auto cap changes.
        self.client = rpc.get_client(transport, self.topic, VERSION,
                                     timeout=self.timeout)

    @property
    def version_cap(self):
        """The cap of a call sent now (None: not capped)."""
        return self._cap.get()

    def _call(self, context, host, version, method, **kwargs):
        cap = self.version_cap
        if method in STATE_CHANGING and self.client.prepare(
                version_cap=cap).can_send_version(KEYED):
            return self._keyed_call(context, host, method, cap, **kwargs)
        cctxt = rpc.prepare(self.client, 'compute', method, version,
                            cap, server=host)
        try:
            return rpc.call(cctxt, context, method, **kwargs)
        except messaging.MessagingTimeout:
            raise exception.ComputeTimeout(host=host, method=method,
                                           timeout=self.timeout)

    def _keyed_call(self, context, host, method, cap, **kwargs):
        """Send at 1.1 with one idempotency key, again until answered.

        Sent again after a try that timed out. A try that cannot reach
        the broker fails the call at once with ComputeUnavailable (not
        carried out) when no earlier try can have reached the compute;
        after one that timed out it is sent again too, since the key
        makes a repeat harmless and the repeat learns what the first
        did. ComputeTimeout when every try went unanswered: carried out
        or not, nobody can tell.
        """
        key = uuidutils.generate_uuid()
        cctxt = rpc.prepare(self.client, 'compute', method, KEYED, cap,
                            server=host, timeout=self.call_timeout)
        started = time.monotonic()
        timed_out = False
        for attempt in range(self.call_retries + 1):
            try:
                return rpc.call(cctxt, context, method,
                                idempotency_key=key, **kwargs)
            except messaging.MessagingTimeout:
                timed_out = True
                LOG.warning('%(method)s to %(host)s: no answer within '
                            '%(timeout)s s (try %(try)d of %(tries)d)',
                            {'method': method, 'host': host,
                             'timeout': self.call_timeout,
                             'try': attempt + 1,
                             'tries': self.call_retries + 1})
            except messaging.MessageDeliveryFailure as exc:
                if not timed_out:
                    raise exception.ComputeUnavailable(
                        host=host, method=method, reason=exc)
                LOG.warning('%(method)s to %(host)s: the broker is out of '
                            'reach (try %(try)d of %(tries)d): %(error)s',
                            {'method': method, 'host': host,
                             'try': attempt + 1,
                             'tries': self.call_retries + 1, 'error': exc})
                # Give the broker time to return rather than spend every
                # try at once.
                time.sleep(UNREACHABLE_PAUSE)
        raise exception.ComputeTimeout(
            host=host, method=method,
            timeout=int(time.monotonic() - started))

    def build_instance(self, context, host, instance, node,
                       pci_requests=None):
        """On ``host``: claim ``node``'s resources and start the guest."""
        return self._call(context, host, '1.0', 'build_instance',
                          instance=instance, node=node,
                          pci_requests=pci_requests)

    def delete_instance(self, context, host, instance):
        return self._call(context, host, '1.0', 'delete_instance',
                          instance=instance)

    def prep_resize(self, context, host, instance, new_flavor, node,
                    pci_requests=None):
        """On the destination: claim, have the source follow, finish."""
        return self._call(context, host, '1.0', 'prep_resize',
                          instance=instance, new_flavor=new_flavor,
                          node=node, pci_requests=pci_requests)

    def resize_source(self, context, host, instance, migration):
        """On the source: hold the old flavor for the migration."""
        return self._call(context, host, '1.0', 'resize_source',
                          instance=instance, migration=migration)

    def confirm_resize(self, context, host, instance, migration):
        return self._call(context, host, '1.0', 'confirm_resize',
                          instance=instance, migration=migration)

    def revert_resize(self, context, host, instance, migration):
        return self._call(context, host, '1.0', 'revert_resize',
                          instance=instance, migration=migration)

    def finish_revert_resize(self, context, host, instance, migration):
        return self._call(context, host, '1.0', 'finish_revert_resize',
                          instance=instance, migration=migration)

    def check_can_live_migrate_destination(self, context, host, instance,
                                           node):
        return self._call(context, host, '1.0',
                          'check_can_live_migrate_destination',
                          instance=instance, node=node)

    def check_shared_storage(self, context, host, instance, node,
                             sharing_provider):
        return self._call(context, host, '1.0', 'check_shared_storage',
                          instance=instance, node=node,
                          sharing_provider=sharing_provider)

    def live_migration(self, context, host, instance, migration):
        return self._call(context, host, '1.0', 'live_migration',
                          instance=instance, migration=migration)

    def pre_live_migration(self, context, host, instance, migration):
        return self._call(context, host, '1.0', 'pre_live_migration',
                          instance=instance, migration=migration)

    def post_live_migration_at_destination(self, context, host, instance,
                                           migration):
        return self._call(context, host, '1.0',
                          'post_live_migration_at_destination',
                          instance=instance, migration=migration)

    def rollback_live_migration_at_destination(self, context, host,
                                               instance, migration):
        return self._call(context, host, '1.0',
                          'rollback_live_migration_at_destination',
                          instance=instance, migration=migration)
