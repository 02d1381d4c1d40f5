"""The tracker in a cluster mid-upgrade: an older compute is still alive.

A ComputeNode keeps its reserved amounts in its provider's inventory,
which it writes only once every compute runs INVENTORY_SERVICE_VERSION
(the gate: ComputeNode.writes_inventory). With the default configuration
(``[compute] reserved_host_memory_mb = 512``) the tracker must audit and
claim whether the gate is open or not, honour the reserved amounts all
along (its checks, the inventory it reports, the legacy free_ram_mb older
computes read) and have the node hold them once the gate opens.

Services are real rows, trackers are built with ``from_conf`` from a
default configuration and register their own service, as in a
deployment; nothing here creates the tracker's service for it.
"""

import datetime
import itertools
from unittest import mock

from oslo_utils import timeutils

from resobj.compute import exception
from resobj.compute import fake_driver
from resobj.compute import report_http
from resobj.compute import tracker as rt
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.objects import service as service_obj
from resobj.tests.api import server
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.compute import base

# A compute one release behind: it reads only the legacy columns.
OLD = cn_obj.INVENTORY_SERVICE_VERSION - 1
# [compute] reserved_host_memory_mb's default.
RESERVED_MB = 512
MEMORY_MB = 4096


def seconds_ago(seconds):
    return timeutils.utcnow(with_timezone=True) - datetime.timedelta(
        seconds=seconds)


class MixedClusterTestCase(base.TrackerTestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(resobj_fixtures.ConfFixture()).conf
        self.assertEqual(RESERVED_MB,
                         self.conf.compute.reserved_host_memory_mb)

    def old_compute(self, host='old-host', seen=0):
        """A compute of the previous release, last seen ``seen`` s ago."""
        service = objects.Service(
            self.context, host=host, binary=cn_obj.COMPUTE_BINARY,
            version=OLD, last_seen_up=seconds_ago(seen))
        service.create()
        return service

    def start(self, host='host1'):
        """A tracker as a compute service starts it, after its first audit."""
        driver = fake_driver.FakeDriver(host, vcpus=8, memory_mb=MEMORY_MB,
                                        local_gb=100)
        tracker = rt.ResourceTracker.from_conf(self.conf, host, host, driver,
                                               self.client)
        tracker.update_available_resource(self.context)
        return tracker

    def gate_open(self):
        return objects.Service.get_minimum_version(
            self.context, cn_obj.INVENTORY_READER_BINARIES) >= \
            cn_obj.INVENTORY_SERVICE_VERSION

    def stored_node(self, tracker):
        return objects.ComputeNode.get_by_id(self.context, tracker.node.id)

    def node_reserved(self, tracker):
        node = self.stored_node(tracker)
        return (node.vcpus_reserved, node.memory_mb_reserved,
                node.local_gb_reserved)

    def assert_reserved_honoured(self, tracker, used_mb=0):
        """The reserved memory counts everywhere the tracker reports."""
        _gen, inventory = self.client.get_inventory(tracker.provider)
        self.assertEqual(RESERVED_MB, inventory['MEMORY_MB']['reserved'])
        # What computes older than the gate read.
        self.assertEqual(MEMORY_MB - RESERVED_MB - used_mb,
                         self.stored_node(tracker).free_ram_mb)
        # A claim of one MB more than is free is refused, by the
        # tracker's own check.
        free = MEMORY_MB - RESERVED_MB - used_mb
        too_big = self.instance(self.flavor(
            'free+1-%d' % free, vcpus=1, memory_mb=free + 1, root_gb=1))
        exc = self.assertRaises(exception.ComputeResourcesUnavailable,
                                tracker.instance_claim, self.context,
                                too_big)
        self.assertEqual([('MEMORY_MB', free)], [
            (s['resource_class'], s['free']) for s in exc.shortages])

    def claim(self, tracker, memory_mb=1024):
        instance = self.instance(self.flavor(
            'm%d' % memory_mb, vcpus=1, memory_mb=memory_mb, root_gb=1))
        tracker.instance_claim(self.context, instance)
        return instance


class TestGateClosed(MixedClusterTestCase):
    """(a) An N-1 and an N compute, both alive."""

    def test_audits_and_claims_with_an_older_compute_alive(self):
        self.old_compute()
        tracker = self.start()
        self.claim(tracker)
        # Every audit, not only the first.
        tracker.update_available_resource(self.context)
        tracker.update_available_resource(self.context)
        self.assertFalse(self.gate_open())
        self.assert_reserved_honoured(tracker, used_mb=1024)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 1},
                         self.usages(tracker.provider))

    def test_the_tracker_reports_its_own_service(self):
        self.old_compute()
        tracker = self.start()
        service = objects.Service.get_by_compute_host(self.context, 'host1')
        self.assertEqual(service_obj.SERVICE_VERSION, service.version)
        self.assertEqual(service.id, self.stored_node(tracker).service_id)
        seen = service.last_seen_up
        self.assertIsNotNone(seen)
        tracker.update_available_resource(self.context)
        service = objects.Service.get_by_compute_host(self.context, 'host1')
        self.assertEqual(1, service.report_count)
        self.assertGreaterEqual(service.last_seen_up, seen)
        # The older compute still holds the cloud at its version.
        self.assertEqual(OLD, objects.Service.get_minimum_version(
            self.context, cn_obj.COMPUTE_BINARY))

    def test_gate_closing_between_check_and_save(self):
        # The gate is open, the configured reserved memory changes, and an
        # older compute comes back just after the tracker asked the gate
        # (first answer True, then the save's own check says False).
        tracker = self.start()
        self.assertEqual((0, RESERVED_MB, 0), self.node_reserved(tracker))
        tracker.reserved['memory_mb'] = 1024
        self.old_compute()
        answers = itertools.chain([True], itertools.repeat(False))
        with mock.patch.object(cn_obj.ComputeNode, 'writes_inventory',
                               side_effect=answers):
            tracker.update_available_resource(self.context)
        self.assertEqual(set(), tracker.node.obj_what_changed())
        # The tracker honours the new amount and reports it to placement;
        # free_ram_mb is net of it.
        _gen, inventory = self.client.get_inventory(tracker.provider)
        self.assertEqual(1024, inventory['MEMORY_MB']['reserved'])
        self.assertEqual(MEMORY_MB - 1024,
                         self.stored_node(tracker).free_ram_mb)


class TestGateOpens(MixedClusterTestCase):
    """(b) The gate opens mid-run, and can close again."""

    def test_when_the_older_compute_is_upgraded(self):
        old = self.old_compute()
        tracker = self.start()
        self.claim(tracker)
        self.assertFalse(self.gate_open())
        # The old host restarts on the new code.
        objects.Service.register(self.context, old.host,
                                 cn_obj.COMPUTE_BINARY)
        tracker.update_available_resource(self.context)
        self.assertTrue(self.gate_open())
        self.assertEqual((0, RESERVED_MB, 0), self.node_reserved(tracker))
        self.assert_reserved_honoured(tracker, used_mb=1024)

    def test_when_the_older_compute_goes_dead_and_back(self):
        old = self.old_compute()
        tracker = self.start()
        self.assertFalse(self.gate_open())
        # It stopped reporting longer ago than service_down_time (60 s).
        old.last_seen_up = seconds_ago(61)
        old.save()
        tracker.update_available_resource(self.context)
        self.assertTrue(self.gate_open())
        self.assertEqual((0, RESERVED_MB, 0), self.node_reserved(tracker))
        self.assert_reserved_honoured(tracker)
        # It reports again (its own code's version): the gate closes;
        # audits go on.
        with service_obj.acting_for(OLD):
            old.heartbeat()
        self.assertFalse(self.gate_open())
        tracker.update_available_resource(self.context)
        self.claim(tracker)
        tracker.update_available_resource(self.context)
        self.assert_reserved_honoured(tracker, used_mb=1024)


class TestUnregisteredHost(MixedClusterTestCase):
    """(c) A host whose compute service has no row yet."""

    def test_first_audit_registers_it_and_opens_the_gate(self):
        # No service row at all: the gate counted the compute binary as
        # version 0 until the tracker registered its own.
        tracker = self.start()
        service = objects.Service.get_by_compute_host(self.context, 'host1')
        self.assertEqual(service_obj.SERVICE_VERSION, service.version)
        self.assertTrue(self.gate_open())
        self.assertEqual((0, RESERVED_MB, 0), self.node_reserved(tracker))
        self.assert_reserved_honoured(tracker)

    def test_next_to_an_older_compute(self):
        self.old_compute()
        tracker = self.start()
        self.assertEqual(service_obj.SERVICE_VERSION,
                         objects.Service.get_by_compute_host(
                             self.context, 'host1').version)
        self.assertFalse(self.gate_open())
        self.assert_reserved_honoured(tracker)


class TestPlacementElsewhere(MixedClusterTestCase):
    """Placement in its own service and database, as in a deployment.

    There the node's provider inventory (in the objects' database) and
    placement's are apart, so what the node holds shows on its own: the
    reserved amount reaches the node once the gate opens, while
    placement has it from the first audit.
    """

    def make_client(self):
        api = self.useFixture(server.ServerFixture(workers=1))
        return report_http.HTTPReportClient(api.url, retries=3,
                                            backoff=0.05)

    def test_reserved_in_placement_at_once_and_on_the_node_at_the_gate(self):
        old = self.old_compute()
        tracker = self.start()
        self.claim(tracker)
        tracker.update_available_resource(self.context)
        self.assertEqual((0, 0, 0), self.node_reserved(tracker))
        self.assert_reserved_honoured(tracker, used_mb=1024)
        objects.Service.register(self.context, old.host,
                                 cn_obj.COMPUTE_BINARY)
        tracker.update_available_resource(self.context)
        self.assertEqual((0, RESERVED_MB, 0), self.node_reserved(tracker))
        self.assert_reserved_honoured(tracker, used_mb=1024)
