"""ComputeNode over resource-provider inventory, with legacy fallback.

Every backend. The gate (Service.get_minimum_version of the binaries that
read node resources) is opened or closed with real service rows, so these
tests go through the same query production does.
"""

from unittest import mock

import fixtures
import sqlalchemy as sa

from resobj.db.api import compute_node as cn_db
from resobj.db.api import resource_class as rc_db
from resobj.db import facade
from resobj.db.models import compute_node as cn_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models
from resobj.db import online_migrations
from resobj import exception
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj.objects import service as service_obj
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import test_compute_node as db_helpers
from resobj.tests.functional import db_base
from resobj.tests.functional import provider_fixtures

objects.register_all()

_CN = cn_models.ComputeNode.__table__
_RP = rp_models.ResourceProvider.__table__
_INV = inv_models.Inventory.__table__


@facade.reader
def legacy_columns(context, node_id):
    """What old readers see: the compute_nodes row's own columns."""
    return dict(context.session.execute(sa.select(
        _CN.c.vcpus, _CN.c.memory_mb, _CN.c.local_gb,
        _CN.c.cpu_allocation_ratio).where(_CN.c.id == node_id)
    ).mappings().one())


@facade.reader
def provider_row(context, uuid):
    row = context.session.execute(sa.select(_RP).where(
        _RP.c.uuid == uuid)).mappings().first()
    return dict(row) if row else None


@facade.reader
def inventories(context, uuid):
    """{class: (total, reserved, max_unit, ratio)} of provider ``uuid``."""
    rows = context.session.execute(
        sa.select(_INV.c.resource_class_id, _INV.c.total, _INV.c.reserved,
                  _INV.c.max_unit, _INV.c.allocation_ratio)
        .join(_RP, _RP.c.id == _INV.c.resource_provider_id)
        .where(_RP.c.uuid == uuid)).all()
    names = {v: k for k, v in rc_db.ids_by_names(
        context, ['VCPU', 'MEMORY_MB', 'DISK_GB']).items()}
    return {names.get(rc, rc): (total, reserved, max_unit, ratio)
            for rc, total, reserved, max_unit, ratio in rows}


@facade.writer
def set_inventory_total(context, uuid, rc_name, total):
    rc_id = rc_db.ids_by_names(context, [rc_name])[rc_name]
    provider_id = context.session.execute(sa.select(_RP.c.id).where(
        _RP.c.uuid == uuid)).scalar_one()
    context.session.execute(sa.update(_INV).where(
        _INV.c.resource_provider_id == provider_id,
        _INV.c.resource_class_id == rc_id).values(total=total,
                                                  max_unit=total))


EXPECTED = {'VCPU': (16, 0, 16, 4.0), 'MEMORY_MB': (65536, 0, 65536, 1.0),
            'DISK_GB': (500, 0, 500, 1.0)}


class ComputeNodeInventoryTestCase(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)

    def open_gate(self, version=cn_obj.INVENTORY_SERVICE_VERSION):
        """A live service of every reader binary, at ``version``."""
        for binary in cn_obj.INVENTORY_READER_BINARIES:
            objects.Service(self.context, host='gate-%s' % binary,
                            binary=binary, version=version).create()

    def new_node(self, **kw):
        node = objects.ComputeNode(self.context,
                                   **db_helpers.node_values(**kw))
        node.create()
        return node

    def get(self, node):
        return objects.ComputeNode.get_by_id(self.context, node.id)


class TestGate(ComputeNodeInventoryTestCase):

    def test_service_version_2_is_the_inventory_version(self):
        self.assertEqual(2, cn_obj.INVENTORY_SERVICE_VERSION)
        self.assertGreaterEqual(service_obj.SERVICE_VERSION,
                                cn_obj.INVENTORY_SERVICE_VERSION)
        self.assertIn('resource-provider inventory',
                      service_obj.SERVICE_VERSION_HISTORY[2]['note'])

    def test_create_honours_the_gate(self):
        # One reader still at version 1: legacy columns only.
        self.open_gate(version=1)
        node = self.new_node()
        self.assertIsNone(provider_row(self.context, node.uuid))
        self.assertEqual(16, legacy_columns(self.context, node.id)['vcpus'])

    def test_save_honours_the_gate(self):
        node = self.new_node()
        self.open_gate(version=1)
        node.vcpus = 32
        node.save()
        self.assertIsNone(provider_row(self.context, node.uuid))
        self.assertEqual(32, legacy_columns(self.context, node.id)['vcpus'])
        self.assertEqual(32, self.get(node).vcpus)

    def test_no_reader_service_means_closed(self):
        # No live service of a reader binary: its version is unknown, so
        # nothing is written to the provider.
        node = self.new_node()
        self.assertIsNone(provider_row(self.context, node.uuid))


class TestWrites(ComputeNodeInventoryTestCase):

    def setUp(self):
        super().setUp()
        self.open_gate()

    def test_create_creates_provider_and_inventories(self):
        node = self.new_node()
        provider = provider_row(self.context, node.uuid)
        self.assertEqual('node1', provider['name'])
        self.assertEqual(1, provider['generation'])
        self.assertEqual(EXPECTED, inventories(self.context, node.uuid))
        # Dual write: the legacy columns keep real values for old readers.
        self.assertEqual({'vcpus': 16, 'memory_mb': 65536, 'local_gb': 500,
                          'cpu_allocation_ratio': 4.0},
                         legacy_columns(self.context, node.id))
        self.assertEqual((16, 65536, 500),
                         (node.vcpus, node.memory_mb, node.local_gb))

    def test_save_updates_inventories_and_legacy_columns(self):
        node = self.new_node()
        node.vcpus = 24
        node.cpu_allocation_ratio = 2.0
        node.save()
        self.assertEqual((24, 0, 24, 2.0),
                         inventories(self.context, node.uuid)['VCPU'])
        self.assertEqual(24, legacy_columns(self.context, node.id)['vcpus'])
        self.assertEqual(2, provider_row(self.context, node.uuid)[
            'generation'])
        self.assertEqual((24, 2.0), (node.vcpus, node.cpu_allocation_ratio))

    def test_save_without_resource_change_keeps_the_generation(self):
        node = self.new_node()
        node.running_vms = 3
        node.save()
        self.assertEqual(1, provider_row(self.context, node.uuid)[
            'generation'])

    def test_save_creates_inventories_of_a_never_migrated_node(self):
        with mock.patch.object(cn_obj.ComputeNode, 'writes_inventory',
                               return_value=False):
            node = self.new_node()
        self.assertIsNone(provider_row(self.context, node.uuid))
        node.running_vms = 1
        node.save()
        self.assertEqual(EXPECTED, inventories(self.context, node.uuid))

    def test_provider_name_clash_gets_a_unique_name(self):
        objects.ResourceProvider(self.context, name='node1').create()
        node = self.new_node()
        self.assertEqual('node1-%s' % node.uuid,
                         provider_row(self.context, node.uuid)['name'])

    def test_existing_provider_is_reused_and_reserved_kept(self):
        provider = objects.ResourceProvider(self.context, name='byhand')
        provider.create()
        provider.add_inventory(objects.Inventory(
            resource_class='VCPU', total=8, reserved=2, max_unit=8))
        node = self.new_node(uuid=provider.uuid)
        self.assertEqual('byhand',
                         provider_row(self.context, node.uuid)['name'])
        # Reserved is not a node field: what the operator set stays.
        self.assertEqual((16, 2, 16, 4.0),
                         inventories(self.context, node.uuid)['VCPU'])

    def test_zero_total_deletes_unused_inventory(self):
        node = self.new_node()
        node.local_gb = 0
        node.save()
        self.assertNotIn('DISK_GB', inventories(self.context, node.uuid))
        self.assertEqual(0, node.local_gb)
        self.assertEqual(0, legacy_columns(self.context, node.id)[
            'local_gb'])

    def test_zero_total_keeps_inventory_in_use(self):
        node = self.new_node()
        provider = provider_row(self.context, node.uuid)
        provider_fixtures.allocate(self.context, provider['id'], 'DISK_GB',
                                   10)
        logger = self.useFixture(fixtures.FakeLogger())
        node.local_gb = 0
        node.save()
        self.assertEqual(500, inventories(self.context, node.uuid)[
            'DISK_GB'][0])
        self.assertIn('keeping the inventory', logger.output)
        # The provider still has the inventory, so it is what reads see.
        self.assertEqual(500, node.local_gb)
        self.assertEqual(0, legacy_columns(self.context, node.id)[
            'local_gb'])

    def test_failure_half_way_changes_nothing(self):
        node = self.new_node()
        before = (legacy_columns(self.context, node.id),
                  inventories(self.context, node.uuid),
                  provider_row(self.context, node.uuid)['generation'])
        real = cn_db._delete_unused

        def fail_after_writing(*args, **kwargs):
            real(*args, **kwargs)
            raise exception.ResobjException('injected')

        # Raised inside the DB API transaction, after the legacy UPDATE
        # and the DISK_GB inventory DELETE ran, before VCPU/MEMORY_MB.
        self.useFixture(fixtures.MockPatchObject(
            cn_db, '_delete_unused', side_effect=fail_after_writing))
        node.vcpus = 99
        node.memory_mb = 1024
        node.local_gb = 0
        self.assertRaises(exception.ResobjException, node.save)
        self.assertEqual(before, (
            legacy_columns(self.context, node.id),
            inventories(self.context, node.uuid),
            provider_row(self.context, node.uuid)['generation']))

    def test_failure_on_create_leaves_no_node(self):
        # The node insert and the provider's creation succeed, then the
        # generation compare-and-swap fails (as when a concurrent writer
        # moved it): the node row and the provider go with it.
        with mock.patch.object(cn_db.rp_db, 'increment_generation',
                               side_effect=exception.
                               ResourceProviderConcurrentUpdateDetected(
                                   provider='x', generation=0)):
            self.assertRaises(
                exception.ResourceProviderConcurrentUpdateDetected,
                self.new_node)
        self.assertEqual(0, len(objects.ComputeNodeList.get_all(
            self.context)))
        self.assertEqual(0, len(
            objects.ResourceProviderList.get_all_by_filters(self.context)))


class TestReads(ComputeNodeInventoryTestCase):

    def migrated_node(self):
        self.open_gate()
        return self.new_node()

    def test_legacy_node_reads_legacy_values(self):
        node = self.new_node(vcpus_used=3, memory_mb_used=512,
                             local_gb_used=7)
        again = self.get(node)
        self.assertEqual((16, 65536, 500, 3, 512, 7, 4.0, 1.0, 1.0), (
            again.vcpus, again.memory_mb, again.local_gb, again.vcpus_used,
            again.memory_mb_used, again.local_gb_used,
            again.cpu_allocation_ratio, again.ram_allocation_ratio,
            again.disk_allocation_ratio))

    def test_migrated_and_legacy_nodes_read_the_same(self):
        legacy = self.new_node()
        self.open_gate()
        migrated = self.new_node(hypervisor_hostname='node2')
        fields = ('vcpus', 'memory_mb', 'local_gb', 'vcpus_used',
                  'memory_mb_used', 'local_gb_used', 'cpu_allocation_ratio',
                  'ram_allocation_ratio', 'disk_allocation_ratio')
        # memory_mb_used is 512 in the legacy row; the provider has no
        # allocations, so its usage is 0: the one intended difference.
        a, b = self.get(legacy), self.get(migrated)
        self.assertEqual(
            {f: getattr(a, f) for f in fields if f != 'memory_mb_used'},
            {f: getattr(b, f) for f in fields if f != 'memory_mb_used'})
        self.assertEqual((512, 0), (a.memory_mb_used, b.memory_mb_used))

    def test_provider_wins_over_differing_legacy_columns(self):
        node = self.migrated_node()
        set_inventory_total(self.context, node.uuid, 'VCPU', 64)
        provider = provider_row(self.context, node.uuid)
        provider_fixtures.allocate(self.context, provider['id'], 'VCPU',
                                   2, 3)
        provider_fixtures.allocate(self.context, provider['id'],
                                   'MEMORY_MB', 1024)
        self.assertEqual(16, legacy_columns(self.context, node.id)['vcpus'])
        for found in (self.get(node),
                      objects.ComputeNode.get_by_uuid(self.context,
                                                      node.uuid),
                      objects.ComputeNode.get_by_host_and_nodename(
                          self.context, 'host1', 'node1'),
                      objects.ComputeNodeList.get_all(self.context)[0],
                      objects.ComputeNodeList.get_all_by_host(
                          self.context, 'host1')[0]):
            self.assertEqual((64, 5, 1024, 0),
                             (found.vcpus, found.vcpus_used,
                              found.memory_mb_used, found.local_gb_used))

    def test_class_without_inventory_falls_back_alone(self):
        node = self.migrated_node()
        node.local_gb = 0
        node.save()
        self.assertNotIn('DISK_GB', inventories(self.context, node.uuid))
        cn_db.update(self.context, node.id, {'local_gb': 250,
                                             'local_gb_used': 9})
        again = self.get(node)
        self.assertEqual((16, 250, 9), (again.vcpus, again.local_gb,
                                        again.local_gb_used))

    def test_list_runs_a_constant_number_of_statements(self):
        self.open_gate()

        def statements_for(count):
            for i in range(count):
                self.new_node(host='h%d-%d' % (count, i))
            with resobj_fixtures.StatementCounter(self.engine) as counter:
                nodes = objects.ComputeNodeList.get_all_by_host(
                    self.context, 'h%d-0' % count) + \
                    objects.ComputeNodeList.get_all(self.context)
            self.assertTrue(all(n.vcpus == 16 for n in nodes))
            return counter.count

        few = statements_for(2)
        # The counter saw the statements, so the comparison can fail.
        self.assertGreater(few, 0)
        self.assertEqual(few, statements_for(20))


class TestOnlineMigration(ComputeNodeInventoryTestCase):

    def migrate(self, max_count):
        return cn_db.migrate_inventories(
            self.context, max_count, {'cpu': 4.0, 'ram': 1.0, 'disk': 1.0})

    def test_batches_resumes_and_finishes(self):
        ids = [db_helpers.insert_legacy_row(
            self.context, uuid='00000000-0000-0000-0000-00000000000%d' % i,
            hypervisor_hostname='n%d' % i,
            cpu_allocation_ratio=None if i == 0 else 8.0)
            for i in range(5)]
        # No uuid yet: left for the uuid backfill, not found here.
        db_helpers.insert_legacy_row(self.context, hypervisor_hostname='x')
        # A deleted node is not migrated.
        deleted = db_helpers.insert_legacy_row(
            self.context, uuid='00000000-0000-0000-0000-0000000000d0',
            hypervisor_hostname='gone')
        cn_db.destroy(self.context, deleted)
        for left, batch in ((5, (2, 2)), (3, (2, 2)), (1, (1, 1)),
                            (0, (0, 0))):
            # The count names what the migration then finds.
            self.assertEqual(left, cn_db.count_lacking_inventories(
                self.context))
            self.assertEqual(batch, self.migrate(2))
        for i, node_id in enumerate(ids):
            node = objects.ComputeNode.get_by_id(self.context, node_id)
            self.assertEqual(
                {'VCPU': (16, 0, 16, 4.0 if i == 0 else 8.0),
                 'MEMORY_MB': (65536, 0, 65536, 1.0),
                 'DISK_GB': (500, 0, 500, 1.0)},
                inventories(self.context, node.uuid))
        self.assertIsNone(provider_row(
            self.context, '00000000-0000-0000-0000-0000000000d0'))

    def test_only_missing_classes_are_added(self):
        node_id = db_helpers.insert_legacy_row(
            self.context, uuid='00000000-0000-0000-0000-000000000001',
            local_gb=0)
        self.assertEqual((1, 1), self.migrate(10))
        uuid = '00000000-0000-0000-0000-000000000001'
        self.assertNotIn('DISK_GB', inventories(self.context, uuid))
        # A total of 0 needs no inventory: the node is done.
        self.assertEqual(0, cn_db.count_lacking_inventories(self.context))
        self.assertEqual((0, 0), self.migrate(10))
        # Provider values are never overwritten by legacy ones.
        set_inventory_total(self.context, uuid, 'VCPU', 3)
        cn_db.update(self.context, node_id, {'local_gb': 20})
        # A class the provider lacks counts, not the ones it has.
        self.assertEqual(1, cn_db.count_lacking_inventories(self.context))
        self.assertEqual((1, 1), self.migrate(10))
        self.assertEqual(3, inventories(self.context, uuid)['VCPU'][0])
        self.assertEqual(20, inventories(self.context, uuid)['DISK_GB'][0])

    def test_a_numa_node_gets_no_vcpu_or_memory_on_its_root(self):
        # Its cells' child providers hold those; the root only DISK_GB.
        node_id = db_helpers.insert_legacy_row(
            self.context, uuid='00000000-0000-0000-0000-000000000001')
        cn_db.update(self.context, node_id, {'numa_topology': {'cells': [
            {'id': 0, 'cpuset': [0, 1], 'memory_mb': 1024}]}})
        self.assertEqual(1, cn_db.count_lacking_inventories(self.context))
        self.assertEqual((1, 1), self.migrate(10))
        self.assertEqual(['DISK_GB'], sorted(inventories(
            self.context, '00000000-0000-0000-0000-000000000001')))
        self.assertEqual(0, cn_db.count_lacking_inventories(self.context))

    def test_registered_and_run_by_the_runner(self):
        conf = self.useFixture(resobj_fixtures.ConfFixture()).conf
        names = [n for n, _ in online_migrations.registered(conf)]
        self.assertLess(names.index('compute_node_uuids'),
                        names.index('compute_node_inventories'))
        db_helpers.insert_legacy_row(self.context)
        results, remaining = online_migrations.run(
            self.context, online_migrations.registered(conf))
        self.assertFalse(remaining)
        by_name = {r.name: r for r in results}
        self.assertEqual((1, 1, None),
                         by_name['compute_node_inventories'][1:])
        [node] = objects.ComputeNodeList.get_all(self.context)
        self.assertEqual(EXPECTED, inventories(self.context, node.uuid))


class TestReserved(ComputeNodeInventoryTestCase):
    """Reserved amounts (ComputeNode 1.5) live in the provider inventory."""

    def test_written_and_read_through_the_inventory(self):
        self.open_gate()
        node = self.new_node(vcpus_reserved=2, memory_mb_reserved=1024)
        reserved = {rc: values[1] for rc, values in
                    inventories(self.context, node.uuid).items()}
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 0},
                         reserved)
        node.local_gb_reserved = 50
        node.save()
        fresh = self.get(node)
        self.assertEqual((2, 1024, 50), (fresh.vcpus_reserved,
                                         fresh.memory_mb_reserved,
                                         fresh.local_gb_reserved))

    def test_legacy_node_reads_zero(self):
        node = self.new_node()
        self.assertEqual((0, 0, 0), (self.get(node).vcpus_reserved,
                                     self.get(node).memory_mb_reserved,
                                     self.get(node).local_gb_reserved))

    def test_refused_before_the_gate_rather_than_lost(self):
        node = self.new_node()
        self.open_gate(version=1)
        node.vcpus_reserved = 4
        node.vcpus = 20
        exc = self.assertRaises(exception.ReservedNeedsInventory,
                                node.save)
        self.assertIsInstance(exc, exception.ObjectActionError)
        self.assertIn('vcpus_reserved', str(exc))
        # Nothing half-written either.
        self.assertEqual(16, legacy_columns(self.context, node.id)['vcpus'])

    def test_more_reserved_than_total_is_refused(self):
        self.open_gate()
        node = self.new_node()
        node.vcpus_reserved = 17
        self.assertRaises(exception.InvalidInventoryValue, node.save)
        self.assertEqual(0, self.get(node).vcpus_reserved)
