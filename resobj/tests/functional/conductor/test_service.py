"""Nodes without a database, served by real resobj-conductor processes.

Each test provisions a PostgreSQL database, syncs it with
``resobj-manage db sync`` and starts ``resobj-conductor`` processes on a
RabbitMQ topic of its own. The test process then plays a compute node
with ``[conductor] use_local = false``: its database facade is refused
(any direct use raises DatabaseAccessForbidden), so every object call the
tracker makes -- audits, instance, PCI and resize claims -- crosses the
broker to a conductor and back. What the conductors wrote is read back
from PostgreSQL directly.

Skipped with the reason when RabbitMQ or PostgreSQL cannot be used
(resobj.tests.backends); CI requires both.
"""

import os
import subprocess
import sys
import threading
import time
from unittest import mock

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.compute import fake_driver
from resobj.compute import report_local
from resobj.compute import tracker as rt
from resobj.db.api import service as service_db
from resobj.db import facade
from resobj import exception
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.objects import service as service_obj
from resobj.tests import backends
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests import service_process
from resobj import version

PCI = [{'address': '0000:81:00.%d' % i, 'vendor_id': '8086',
        'product_id': '1520'} for i in range(2)]


class ConductorsFixture(fixtures.Fixture):
    """A synced PostgreSQL database and resobj-conductors on a new topic.

    ``self.url`` is the database, ``self.topic`` the topic, and
    ``self.processes`` the running conductors; ``start()`` adds one.
    """

    def __init__(self, backend, count=1, transport_url=None, extra=''):
        super().__init__()
        self.backend = backend
        self.count = count
        self.processes = []
        # The broker's URL (through a proxy, say) and more configuration
        # for every conductor.
        self.transport_url = transport_url or backends.transport_url()
        self.extra = extra

    def _setUp(self):
        backend = self.backend
        name = 'resobj_cond_' + uuidutils.generate_uuid(dashed=False)[:12]
        backend.create_named_database(name)
        self.addCleanup(backend.drop_named_database, name)
        self.url = backend.provisioned_database_url(name).render_as_string(
            hide_password=False)
        self.topic = 'resobj-test-' + uuidutils.generate_uuid()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.conf_file = os.path.join(self.dir, 'conductor.conf')
        with open(self.conf_file, 'w') as f:
            f.write('[DEFAULT]\ntransport_url = %s\n'
                    '[database]\nconnection = %s\n'
                    '[conductor]\ntopic = %s\n'
                    % (self.transport_url, self.url, self.topic))
            f.write(self.extra)
        sync = subprocess.run(
            [sys.executable, '-m', 'resobj.cmd.manage', '--config-file',
             self.conf_file, 'db', 'sync'], capture_output=True, text=True,
            timeout=120)
        if sync.returncode:
            raise RuntimeError('db sync failed: %s%s'
                               % (sync.stdout, sync.stderr))
        self.engine = sa.create_engine(self.url,
                                       poolclass=sa.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        for _ in range(self.count):
            self.start()

    def start(self, wait=True):
        """One more conductor, running; its ServiceProcess.

        ``wait=False``: started only; the caller calls its wait_ready().
        """
        host_file = os.path.join(self.dir, 'host-%d.conf'
                                 % len(self.processes))
        with open(host_file, 'w') as f:
            f.write('[DEFAULT]\nhost = conductor-%d\n' % len(self.processes))
        # Killed at cleanup: the tests stop conductors themselves where
        # stopping is what they test.
        process = self.useFixture(service_process.ServiceProcess(
            'resobj.cmd.conductor', self.conf_file, host_file,
            graceful=False, wait=wait))
        self.processes.append(process)
        return process

    def scalar(self, sql, **params):
        """One value read from the database directly, not through resobj."""
        with self.engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()


class ConductorTestCase(base.TestCase):
    """The test process is a compute node that only has the conductors."""

    # Not a DB scenario run: named so that CI counts these as PostgreSQL
    # tests, which must run, never skip.
    scenarios = [('postgresql', {})]
    CONDUCTORS = 1
    TIMEOUT = 30
    # [conductor] call_timeout of this node; None: the option's default.
    CALL_TIMEOUT = None

    def setUp(self):
        super().setUp()
        # Decided here, in the test, never inside a fixture: a skip raised
        # in a fixture's set-up reaches the runner as a set-up error.
        backends.require('rabbitmq')
        self.conductors = self.useFixture(ConductorsFixture(
            backends.provisioning_backend('postgresql'), self.CONDUCTORS))
        client = self.useFixture(resobj_fixtures.ConductorClient(
            backends.transport_url(), self.conductors.topic, self.TIMEOUT,
            call_timeout=self.CALL_TIMEOUT))
        self.conf = client.conf
        self.transport = client.transport
        self.context = client.context

    def add_service(self, host):
        objects.Service(self.context, host=host,
                        binary=cn_obj.COMPUTE_BINARY).create()

    def tracker(self, host, **driver_kw):
        self.add_service(host)
        tracker = rt.ResourceTracker(
            host, host, fake_driver.FakeDriver(host, **driver_kw),
            report_local.LocalReportClient(self.context))
        tracker.update_available_resource(self.context)
        return tracker

    def flavor(self, name, vcpus, memory_mb, root_gb):
        flavor = objects.Flavor(self.context, flavorid=name, name=name,
                                vcpus=vcpus, memory_mb=memory_mb,
                                root_gb=root_gb, ephemeral_gb=0, swap=0)
        flavor.create()
        return flavor

    def instance(self, flavor):
        instance = objects.Instance(
            self.context, uuid=uuidutils.generate_uuid(),
            project_id='project-a', user_id='user-a', vm_state='building',
            vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
            root_gb=flavor.root_gb, ephemeral_gb=0, flavor=flavor)
        instance.create()
        return instance

    def used(self, consumer):
        """{resource class: amount} of ``consumer``, read in PostgreSQL."""
        with self.conductors.engine.connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT rc.name, a.used FROM allocations a '
                'JOIN consumers c ON c.id = a.consumer_id '
                'JOIN resource_classes rc ON rc.id = a.resource_class_id '
                'WHERE c.uuid = :uuid'), {'uuid': consumer}).all()
        return {name: used for name, used in rows}

    def hold_provider(self, conn, provider):
        """Lock ``provider``'s row on ``conn``: claims on it wait."""
        conn.execute(sa.text(
            'SELECT * FROM resource_providers WHERE uuid = :uuid '
            'FOR UPDATE'), {'uuid': provider})

    def wait_for_lock_waiters(self, count=1):
        deadline = time.monotonic() + 20
        while self.conductors.scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE "
                "wait_event_type = 'Lock' AND datname = "
                "current_database()") < count:
            self.assertLess(time.monotonic(), deadline,
                            'no call reached the lock')
            time.sleep(0.05)

    def claim_in_thread(self, tracker, inst):
        failures = []

        def claim():
            try:
                tracker.instance_claim(self.context, inst)
            except Exception as exc:  # noqa: B902 - recorded, asserted
                failures.append(exc)
        caller = threading.Thread(target=claim)
        caller.start()
        return caller, failures


class TestNodeWithoutDatabase(ConductorTestCase):

    def test_the_database_is_refused_here(self):
        exc = self.assertRaises(exception.DatabaseAccessForbidden,
                                service_db.get_all, self.context)
        self.assertIn('use_local is false', str(exc))
        self.assertRaises(exception.DatabaseAccessForbidden,
                          facade.get_engine)

    def test_claims_moves_and_audits_through_the_conductor(self):
        src = self.tracker('src', vcpus=8, memory_mb=8192, local_gb=200,
                           pci_devices=PCI)
        dst = self.tracker('dst', vcpus=8, memory_mb=8192, local_gb=200)
        small = self.flavor('small', 2, 2048, 20)
        large = self.flavor('large', 4, 4096, 40)

        # An instance claim with a PCI request.
        inst = self.instance(small)
        with src.instance_claim(self.context, inst, [{'count': 1}]):
            pass
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20,
                          'PCI_DEVICE': 1}, self.used(inst.uuid))
        self.assertEqual(1, self.conductors.scalar(
            "SELECT count(*) FROM pci_devices WHERE status = 'allocated' "
            "AND instance_uuid = :uuid", uuid=inst.uuid))

        # A resize claim on the other node: the migration holds the
        # source, the instance the destination.
        claim = dst.resize_claim(self.context, inst, large)
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40},
                         self.used(inst.uuid))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20,
                          'PCI_DEVICE': 1},
                         self.used(claim.migration.uuid))
        self.assertEqual('pre-migrating', self.conductors.scalar(
            'SELECT status FROM migrations WHERE uuid = :uuid',
            uuid=claim.migration.uuid))

        # Audits on both nodes keep what the claims made.
        src.update_available_resource(self.context)
        dst.update_available_resource(self.context)
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40},
                         self.used(inst.uuid))
        node = objects.ComputeNode.get_by_host_and_nodename(
            self.context, 'dst', 'dst')
        self.assertEqual((4, 4096), (node.vcpus_used, node.memory_mb_used))
        self.assertEqual(4, self.conductors.scalar(
            "SELECT i.used FROM inventories i JOIN resource_classes rc "
            "ON rc.id = i.resource_class_id JOIN resource_providers rp "
            "ON rp.id = i.resource_provider_id "
            "WHERE rc.name = 'VCPU' AND rp.uuid = :uuid", uuid=dst.provider))

    def test_the_conductor_registers_and_reports(self):
        # Its first report is at start; then every report_interval.
        self.assertEqual(['conductor-0'], [
            s.host for s in objects.ServiceList.get_all(self.context)
            if s.binary == 'resobj-conductor'])
        self.assertEqual(1, self.conductors.scalar(
            'SELECT count(*) FROM services WHERE "binary" = '
            "'resobj-conductor' AND last_seen_up IS NOT NULL"))
        # Its start line says what it runs.
        self.assertIn('resobj-conductor %s: serving topic'
                      % version.describe(),
                      self.conductors.processes[0].log())

    def test_a_node_is_recorded_at_the_version_it_runs(self):
        # The conductor runs today's code; this node says it runs the
        # previous service version (rolled back), then today's again.
        def recorded():
            return self.conductors.scalar(
                "SELECT version FROM services WHERE host = 'rolled-back'")

        older = service_obj.SERVICE_VERSION - 1
        with mock.patch.object(service_obj, 'SERVICE_VERSION', older):
            service = objects.Service.register(
                self.context, 'rolled-back', cn_obj.COMPUTE_BINARY)
            self.assertEqual((older, older), (service.version, recorded()))
            self.assertEqual(older, objects.Service.get_minimum_version(
                self.context, cn_obj.COMPUTE_BINARY))
        # Upgraded again: its next report shows it.
        service.heartbeat()
        self.assertEqual(service_obj.SERVICE_VERSION, recorded())

    def test_errors_cross_as_resobj_exceptions(self):
        self.assertRaises(exception.ComputeNodeNotFound,
                          objects.ComputeNode.get_by_host_and_nodename,
                          self.context, 'nowhere', 'nowhere')


class TestConductorFailures(ConductorTestCase):

    TIMEOUT = 3

    def test_conductor_killed_mid_call(self):
        tracker = self.tracker('host1', vcpus=8, memory_mb=8192,
                               local_gb=200)
        inst = self.instance(self.flavor('small', 2, 2048, 20))
        [conductor] = self.conductors.processes
        # Hold the provider's row so that the conductor's claim blocks in
        # its transaction, then kill the conductor there.
        with self.conductors.engine.connect() as conn:
            self.hold_provider(conn, tracker.provider)
            caller, failures = self.claim_in_thread(tracker, inst)
            self.wait_for_lock_waiters()
            conductor.kill()
            caller.join(30)
            conn.rollback()
        self.assertFalse(caller.is_alive())
        [failure] = failures
        self.assertIsInstance(failure, exception.ConductorTimeout)
        self.assertIn('1 time(s) sent', str(failure))
        # Nothing of the claim was written.
        self.assertEqual({}, self.used(inst.uuid))

        # Another conductor serves the retry.
        self.conductors.start()
        tracker.instance_claim(self.context, inst)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.used(inst.uuid))


class TestConductorsSideBySide(ConductorTestCase):

    CONDUCTORS = 2

    def test_sigterm_stops_one_and_the_other_serves(self):
        first, second = self.conductors.processes
        for i in range(10):
            self.add_service('host-%d' % i)
        self.assertEqual(0, first.stop(), first.log())
        self.assertIn('stopped', first.log())
        for i in range(10, 20):
            self.add_service('host-%d' % i)
        self.assertEqual(20, len(objects.ServiceList.get_by_binary(
            self.context, cn_obj.COMPUTE_BINARY)))
        self.assertIsNone(second.process.poll())
