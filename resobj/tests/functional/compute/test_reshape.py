"""The upgrade reshape: a flat node restarted with NUMA cells, every backend.

A node that reported VCPU and MEMORY_MB on its root provider (as every
node did under the previous release) restarts with a NUMA topology; its
first audit moves that inventory and every allocation on it to the cell
providers in one transaction while its instances keep running. Run with
the in-process client and with the HTTP one (POST /reshaper).
"""

import fixtures

from resobj.compute import exception
from resobj.compute import fake_driver
from resobj.compute import numa
from resobj.compute import report_http
from resobj.compute import tracker as rt
from resobj.db.api import reshaper as reshaper_db
from resobj import exception as resobj_exc
from resobj import objects
from resobj.tests.functional.compute import base
from resobj.tests.functional.compute import test_report_clients


class _Injected(Exception):
    pass


class ReshapeContract:

    def setUp(self):
        super().setUp()
        self.flat = self.tracker('host1', vcpus=8, memory_mb=8192,
                                 local_gb=200)
        self.sizes = [self.flavor('small', vcpus=2, memory_mb=2048),
                      self.flavor('medium', vcpus=3, memory_mb=1024),
                      self.flavor('tiny', vcpus=1, memory_mb=512)]
        self.instances = []
        for flavor in self.sizes:
            inst = self.instance(flavor)
            self.flat.instance_claim(self.context, inst)
            self.instances.append(inst)
        # Another node that stays flat (say, still on the old release).
        self.other = self.tracker('host2', vcpus=8, memory_mb=8192,
                                  local_gb=200)

    def restart_with_cells(self):
        driver = fake_driver.FakeDriver('host1', vcpus=8, memory_mb=8192,
                                        local_gb=200, numa_cells=2)
        tracker = rt.ResourceTracker('host1', 'host1', driver, self.client)
        tracker.update_available_resource(self.context)
        return tracker

    def cell(self, cell_id):
        return numa.cell_provider_uuid(self.flat.provider, cell_id)

    def state(self):
        """Everything a reshape may change, as placement reports it."""
        providers = [self.flat.provider, self.cell(0), self.cell(1)]
        return ({rp: self.client.get_inventory(rp)[1] if self._exists(rp)
                 else None for rp in providers},
                {i.uuid: self.allocations(i.uuid) for i in self.instances})

    def assert_unchanged(self, before):
        """Allocations and the root's inventory are as ``before``.

        The cell providers, created before the reshape, have none.
        """
        after_inventory, after_allocations = self.state()
        self.assertEqual(before[1], after_allocations)
        self.assertEqual(before[0][self.flat.provider],
                         after_inventory[self.flat.provider])
        for cell_id in (0, 1):
            self.assertIn(after_inventory[self.cell(cell_id)], (None, {}))

    def _exists(self, rp):
        try:
            objects.ResourceProvider.get_by_uuid(self.context, rp)
            return True
        except Exception:
            return False

    def test_flat_node_moves_inventory_and_allocations_to_cells(self):
        tracker = self.restart_with_cells()
        self.assertEqual({'DISK_GB'}, set(self.client.get_inventory(
            tracker.provider)[1]))
        for cell_id in (0, 1):
            self.assertEqual({'VCPU', 'MEMORY_MB'}, set(
                self.client.get_inventory(self.cell(cell_id))[1]))
        placed = {}
        for inst, flavor in zip(self.instances, self.sizes):
            allocations = self.allocations(inst.uuid)
            self.assertEqual({'DISK_GB': 20},
                             allocations.pop(tracker.provider))
            (cell_rp, amounts), = allocations.items()
            self.assertEqual({'VCPU': flavor.vcpus,
                              'MEMORY_MB': flavor.memory_mb}, amounts)
            placed[inst.uuid] = cell_rp
            stored = self.reload(inst).numa_topology
            self.assertEqual([tracker.cells.providers[cell_rp]],
                             [c.id for c in stored.cells])
        # Deterministic: in uuid order, each on the first cell it fits.
        used = {0: 0, 1: 0}
        for inst in sorted(self.instances, key=lambda i: i.uuid):
            memory = self.reload(inst).flavor.memory_mb
            want = 0 if used[0] + memory <= 4096 else 1
            self.assertEqual(self.cell(want), placed[inst.uuid])
            used[want] += memory
        self.assertEqual(tracker.accounting(), {
            rp: self.usages(rp)
            for rp in (tracker.provider, self.cell(0), self.cell(1))
            if self.usages(rp)})
        # Running on: a second audit changes nothing, and both nodes,
        # the reshaped one and the flat one, still take claims.
        before = self.state()
        tracker.update_available_resource(self.context)
        self.assertEqual(before, self.state())
        new = self.instance(self.sizes[0])
        tracker.instance_claim(self.context, new)
        self.assertEqual({'DISK_GB': 20},
                         self.allocations(new.uuid)[tracker.provider])
        flat_new = self.instance(self.sizes[0])
        self.other.instance_claim(self.context, flat_new)
        self.assertEqual({self.other.provider: {
            'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}},
            self.allocations(flat_new.uuid))

    def test_a_failure_mid_reshape_changes_nothing(self):
        before = self.state()
        real = reshaper_db.alloc_db.replace_all

        def fail_after_moving_allocations(*args, **kwargs):
            # The interim inventory and the moved allocations are
            # written in this transaction by now.
            real(*args, **kwargs)
            raise _Injected('injected mid-reshape')

        with fixtures.MockPatchObject(reshaper_db.alloc_db, 'replace_all',
                                      fail_after_moving_allocations):
            # In process the error itself; over HTTP the API's 500.
            self.assertRaises((_Injected, exception.PlacementError),
                              self.restart_with_cells)
        self.assert_unchanged(before)
        # The next start reshapes.
        tracker = self.restart_with_cells()
        self.assertEqual({'DISK_GB'}, set(self.client.get_inventory(
            tracker.provider)[1]))

    def test_an_instance_no_cell_can_hold_stops_the_reshape(self):
        # 4500 MB fit the flat node beside the others, but no cell has
        # more than 4096 MB.
        wide = self.instance(self.flavor('wide', vcpus=1, memory_mb=4500))
        self.flat.instance_claim(self.context, wide)
        self.instances.append(wide)
        before = self.state()
        exc = self.assertRaises(resobj_exc.NUMAReshapeFailed,
                                self.restart_with_cells)
        self.assertIn('fit no cells', str(exc))
        self.assert_unchanged(before)

    def test_a_migration_consumer_moves_too(self):
        inst = self.instances[0]
        migration = self.other.resize_claim(self.context, inst,
                                            self.sizes[1])
        self.restart_with_cells()
        held = self.allocations(migration.migration.uuid)
        self.assertEqual({'DISK_GB': 20}, held.pop(self.flat.provider))
        (cell_rp, amounts), = held.items()
        self.assertIn(cell_rp, (self.cell(0), self.cell(1)))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 2048}, amounts)


class TestReshapeLocal(ReshapeContract, base.TrackerTestCase):
    pass


class TestReshapeHTTP(ReshapeContract, base.TrackerTestCase):

    def make_client(self):
        server = self.useFixture(test_report_clients.APIServerFixture())
        return report_http.HTTPReportClient(server.url, retries=3,
                                            backoff=0.01)
