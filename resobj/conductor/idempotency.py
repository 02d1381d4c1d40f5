"""Keyed conductor calls: carried out at most once, answered alike.

From conductor RPC 1.1 a caller sends ``object_action`` and
``object_class_action_versions`` with an ``idempotency_key``, one per
logical call, the same for every time it sends that call again. A
conductor runs a state-changing method and records the answer it
prepared for the caller in the same database transaction
(resobj.db.api.call_outcome.run_recorded): the call's writes and its
record commit together or not at all, whichever conductor ran it and
whatever became of that conductor. A repeat of a committed call gets
the recorded answer; a repeat of a call still running waits on the
key's row until the first commits (then gets its answer) or rolls back
(then runs). A call that failed changed nothing and left no record:
its repeat runs again.

Read-only methods (:data:`READ_ONLY`) change nothing; they run as
before, unrecorded. doc/source/user/upgrade.rst tables every method.
"""

import threading
import time

from oslo_log import log as logging
from oslo_serialization import jsonutils

from resobj.db.api import call_outcome as outcome_db
from resobj import exception
from resobj import rpc

LOG = logging.getLogger(__name__)

# Remotable methods that read and change nothing, as "Class.method":
# carried out again when sent again, with no record. Every other
# remotable method is recorded (tests/unit/conductor/test_idempotency.py
# checks that each name here is a remotable method).
READ_ONLY = frozenset({
    'AllocationList.get_all_by_consumer_id',
    'AllocationList.get_all_by_resource_provider_uuid',
    'ComputeNode.get_by_host_and_nodename',
    'ComputeNode.get_by_id',
    'ComputeNode.get_by_uuid',
    'ComputeNodeList.get_all',
    'ComputeNodeList.get_all_by_host',
    'Consumer.get_by_uuid',
    'Flavor.get_by_flavor_id',
    'Flavor.get_by_id',
    'Flavor.get_by_name',
    'FlavorList.get_all',
    'Instance.get_by_id',
    'Instance.get_by_uuid',
    'InstanceList.get_by_host_and_node',
    'InstanceList.get_by_uuids',
    'InventoryList.get_all_by_resource_provider',
    'Migration.get_by_id',
    'Migration.get_by_uuid',
    'MigrationList.get_by_instance_uuid',
    'MigrationList.get_in_progress_by_host_and_node',
    'PciDevice.get_by_id',
    'PciDeviceList.get_by_compute_node',
    'PciDeviceList.get_by_instance_uuid',
    'Project.get_by_external_id',
    'ResourceClass.get_by_id',
    'ResourceClass.get_by_name',
    'ResourceClassList.get_all',
    'ResourceProvider.get_aggregates',
    'ResourceProvider.get_by_uuid',
    'ResourceProvider.get_traits',
    'ResourceProviderList.get_all_by_filters',
    'Service.get_by_compute_host',
    'Service.get_by_host_and_binary',
    'Service.get_by_id',
    'Service.get_by_uuid',
    'Service.get_minimum_version',
    'ServiceList.get_all',
    'ServiceList.get_by_binary',
    'Trait.get_by_name',
    'TraitList.get_all',
    'UsageList.get_all_by_project_user',
    'UsageList.get_all_by_resource_provider_uuid',
    'User.get_by_external_id',
})


def recorded(objname, objmethod):
    """Whether a keyed call of ``objname.objmethod`` is recorded."""
    return '%s.%s' % (objname, objmethod) not in READ_ONLY


def as_sent(context, answer):
    """``answer`` as the caller receives it: JSON of its primitives.

    What the RPC serializer and the wire make of it (objects as
    primitives, tuples as lists), so a first answer and a recorded one
    reach the caller alike.
    """
    return jsonutils.dumps(
        rpc.RequestContextSerializer().serialize_entity(context, answer))


def answer_once(context, key, name, run):
    """The answer of the keyed call ``key``: ``run()``'s or the recorded.

    ``run()`` carries the call out from scratch and returns its answer
    as :func:`as_sent` made it; it runs in the transaction that records
    that answer, and again if the transaction had to be retried.
    Returns the answer as the caller receives it.
    """
    try:
        answer = outcome_db.run_recorded(context, key, name, run)
    except exception.CallOutcomeExists:
        answer = outcome_db.get_answer(context, key)
        if answer is None:
            # Purged between the failed insert and this read: only a
            # retention shorter than a call's retries does that.
            raise exception.ObjectActionError(
                action=name,
                reason='the call with idempotency key %s was carried out, '
                       'but its answer is no longer recorded ([conductor] '
                       'call_outcome_retention)' % key)
        LOG.info('%(name)s with idempotency key %(key)s was carried out '
                 'already; sending its recorded answer again',
                 {'name': name, 'key': key})
    return jsonutils.loads(answer)


class Purger:
    """Deletes outcomes older than the retention, now and then.

    At most once per tenth of the retention per conductor, after a call:
    the table holds the calls of about that long.
    """

    def __init__(self, retention):
        self.retention = retention
        self._lock = threading.Lock()
        self._next = time.monotonic()

    def maybe_purge(self, context):
        with self._lock:
            now = time.monotonic()
            if now < self._next:
                return
            self._next = now + self.retention / 10
        try:
            deleted = outcome_db.purge(context, self.retention)
        except exception.ResobjException as exc:
            # The next purge catches up; the call itself succeeded.
            LOG.warning('Could not purge old call outcomes: %s', exc)
            return
        if deleted:
            LOG.debug('Purged %d call outcomes older than %d s', deleted,
                      self.retention)
