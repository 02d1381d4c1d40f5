"""Two resobj-compute processes without a database, and a conductor.

The deployment of the upgrade guide, in small: a resobj-conductor on
PostgreSQL, two compute hosts (``cmp1``, ``cmp2``) as separate
``resobj-compute`` processes with ``[conductor] use_local = false`` and
no ``[database]`` at all, all on RabbitMQ. The test calls them over the
compute RPC API as a scheduler would: a boot on cmp1, a resize to cmp2
(cmp2 claims and calls cmp1 for the source's part), confirm, and their
periodic audits; what they did is read back from PostgreSQL directly.
"""

import os
import time

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.compute import exception
from resobj.compute import rpcapi as compute_rpcapi
from resobj import objects
from resobj import rpc
from resobj.tests.functional.conductor import test_service as conductors
from resobj.tests import service_process


class ComputeProcess(fixtures.Fixture):
    """``resobj-compute`` for ``host``, served by ``conductor_fixture``."""

    def __init__(self, conductor_fixture, host, topic, extra=''):
        super().__init__()
        self.conductors = conductor_fixture
        self.host = host
        self.topic = topic
        # More configuration; the broker is the conductors'.
        self.extra = extra

    def _setUp(self):
        path = os.path.join(self.conductors.dir, '%s.conf' % self.host)
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nhost = %s\ntransport_url = %s\n'
                    '[conductor]\nuse_local = false\ntopic = %s\n'
                    '[compute]\ntopic = %s\naudit_interval = 1\n'
                    'reserved_host_memory_mb = 0\n'
                    '[fake_driver]\nvcpus = 8\nmemory_mb = 8192\n'
                    'local_gb = 200\n'
                    % (self.host, self.conductors.transport_url,
                       self.conductors.topic, self.topic))
            f.write(self.extra)
        self.service = self.useFixture(service_process.ServiceProcess(
            'resobj.cmd.compute', path))

    def log(self):
        return self.service.log()


class TestTwoComputes(conductors.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.topic = 'resobj-test-compute-' + uuidutils.generate_uuid()
        self.conf.set_override('topic', self.topic, group='compute')
        self.computes = {
            host: self.useFixture(ComputeProcess(self.conductors, host,
                                                 self.topic))
            for host in ('cmp1', 'cmp2')}
        self.compute_rpc = compute_rpcapi.ComputeAPI(
            self.conf, self.transport, self.context)

    def provider(self, host):
        return self.conductors.scalar(
            'SELECT uuid FROM compute_nodes WHERE host = :host '
            'AND deleted = 0', host=host)

    def usage(self, host):
        """{class: used} of ``host``'s provider, read in PostgreSQL."""
        with self.conductors.engine.connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT rc.name, i.used FROM inventories i '
                'JOIN resource_classes rc ON rc.id = i.resource_class_id '
                'JOIN resource_providers rp '
                'ON rp.id = i.resource_provider_id WHERE rp.uuid = :uuid'),
                {'uuid': self.provider(host)}).all()
        return {name: used for name, used in rows if used}

    def test_boot_resize_confirm_and_audits(self):
        small = self.flavor('small', 2, 2048, 20)
        large = self.flavor('large', 4, 4096, 40)

        # A boot that does not fit: the caller gets the shortages the
        # compute found, not only their wording.
        huge = self.instance(self.flavor('huge', 2, 20000, 20))
        exc = self.assertRaises(exception.ComputeResourcesUnavailable,
                                self.compute_rpc.build_instance,
                                self.context, 'cmp1', huge, 'cmp1')
        self.assertEqual(['MEMORY_MB'], [shortage['resource_class']
                                         for shortage in exc.shortages])
        self.assertEqual({}, self.used(huge.uuid))

        inst = self.instance(small)
        inst = self.compute_rpc.build_instance(self.context, 'cmp1', inst,
                                               'cmp1')
        self.assertEqual(('cmp1', 'active'), (inst.host, inst.vm_state))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.used(inst.uuid))

        migration = self.compute_rpc.prep_resize(self.context, 'cmp2', inst,
                                                 large, 'cmp2')
        self.assertEqual('finished', migration.status)
        inst = objects.Instance.get_by_uuid(self.context, inst.uuid)
        self.assertEqual(('cmp2', 'large'), (inst.host, inst.flavor.name))
        # The instance holds the destination, the migration the source.
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40},
                         self.used(inst.uuid))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.used(migration.uuid))

        # Both hosts' audits run meanwhile (every second) and keep it.
        seen = self.conductors.scalar(
            "SELECT max(last_seen_up) FROM services WHERE host = 'cmp1'")
        deadline = time.monotonic() + 30
        while self.conductors.scalar(
                "SELECT min(last_seen_up) FROM services WHERE host "
                "IN ('cmp1', 'cmp2')") <= seen:
            self.assertLess(time.monotonic(), deadline, 'no audit ran')
            time.sleep(0.2)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.usage('cmp1'))
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40},
                         self.usage('cmp2'))

        # Confirm on the source frees it.
        self.compute_rpc.confirm_resize(self.context, 'cmp1', inst,
                                        migration)
        self.assertEqual({}, self.used(migration.uuid))
        self.assertEqual({}, self.usage('cmp1'))
        for compute in self.computes.values():
            self.assertNotIn('Traceback', compute.log())

    def test_revert_and_live_migration(self):
        flavor = self.flavor('small', 2, 2048, 20)
        inst = self.compute_rpc.build_instance(
            self.context, 'cmp1', self.instance(flavor), 'cmp1')
        small = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}

        # A resize to cmp2, reverted: cmp2 gives its claim back and cmp1
        # takes the instance back.
        migration = self.compute_rpc.prep_resize(self.context, 'cmp2', inst,
                                                 flavor, 'cmp2')
        self.compute_rpc.revert_resize(self.context, 'cmp2', inst,
                                       migration)
        inst = objects.Instance.get_by_uuid(self.context, inst.uuid)
        self.assertEqual('cmp1', inst.host)
        self.assertEqual(small, self.usage('cmp1'))
        self.assertEqual({}, self.usage('cmp2'))
        self.assertEqual({}, self.used(migration.uuid))

        # A live migration, driven by the source: cmp2 checks and claims,
        # cmp1 lets go.
        migration = self.compute_rpc.check_can_live_migrate_destination(
            self.context, 'cmp2', inst, 'cmp2')
        self.assertEqual('accepted', migration.status)
        migration = self.compute_rpc.live_migration(self.context, 'cmp1',
                                                    inst, migration)
        self.assertEqual('completed', migration.status)
        inst = objects.Instance.get_by_uuid(self.context, inst.uuid)
        self.assertEqual(('cmp2', None), (inst.host, inst.task_state))
        self.assertEqual({}, self.usage('cmp1'))
        self.assertEqual(small, self.usage('cmp2'))
        self.assertEqual(small, self.used(inst.uuid))

        # No room left for a second copy on cmp2: refused before anything
        # is claimed.
        big = self.instance(self.flavor('big', 2, 8192, 20))
        big = self.compute_rpc.build_instance(self.context, 'cmp1', big,
                                              'cmp1')
        self.assertRaises(
            exception.MigrationPreCheckError,
            self.compute_rpc.check_can_live_migrate_destination,
            self.context, 'cmp2', big, 'cmp2')
        self.assertEqual(small, self.usage('cmp2'))

    def keyed(self, host, method, key, **kwargs):
        """``method`` sent at 1.1 with ``key``, as one try of a retry."""
        cctxt = rpc.prepare(self.compute_rpc.client, 'compute', method,
                            compute_rpcapi.KEYED, None, server=host)
        return rpc.call(cctxt, self.context, method, idempotency_key=key,
                        **kwargs)

    def migrations(self, instance):
        return self.conductors.scalar(
            'SELECT count(*) FROM migrations WHERE instance_uuid = :uuid',
            uuid=instance.uuid)

    def test_a_repeated_resize_moves_once_even_after_a_restart(self):
        small = self.flavor('small', 2, 2048, 20)
        large = self.flavor('large', 4, 4096, 40)
        inst = self.compute_rpc.build_instance(
            self.context, 'cmp1', self.instance(small), 'cmp1')
        key = uuidutils.generate_uuid()
        first = self.keyed('cmp2', 'prep_resize', key, instance=inst,
                           new_flavor=large, node='cmp2')
        # The answer of the first try was lost; the caller sends again.
        again = self.keyed('cmp2', 'prep_resize', key, instance=inst,
                           new_flavor=large, node='cmp2')
        self.assertEqual(first.uuid, again.uuid)
        self.assertEqual(1, self.migrations(inst))
        # cmp2 restarts between two tries: its record is gone, and the
        # finished resize to it is answered, not claimed again.
        self.computes['cmp2'].service.stop()
        self.computes['cmp2'] = self.useFixture(ComputeProcess(
            self.conductors, 'cmp2', self.topic))
        after = self.keyed('cmp2', 'prep_resize', key, instance=inst,
                           new_flavor=large, node='cmp2')
        self.assertEqual(first.uuid, after.uuid)
        self.assertEqual(1, self.migrations(inst))
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 40},
                         self.used(inst.uuid))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20},
                         self.used(first.uuid))
        for process in self.computes.values():
            self.assertNotIn('Traceback', process.log())
