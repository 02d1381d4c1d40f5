"""inventories.used follows every allocation write, whoever makes it.

The triggers of resobj/db/models/inventory_usage.py keep it on every
backend. The writes here are plain SQL on the tables, as a service of
the previous release (which knows nothing of the column) or an
operator would make them, except where a test names resobj's own write
path. Every DBTestCase also checks the column against the allocations
after each test (db_base.DBTestCase.assert_usage_counted).
"""

import sqlalchemy as sa

from resobj.db.api import allocation as alloc_db
from resobj.db.api import inventory as inventory_db
from resobj.db.api import resource_class as rc_db
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import inventory as inv_models
from resobj.db import online_migrations
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2
_ALLOC = alloc_models.Allocation.__table__
_INV = inv_models.Inventory.__table__


@facade.reader
def _used(context, rp_id):
    """{class id: inventories.used} of the provider, read raw."""
    return dict(context.session.execute(
        sa.select(_INV.c.resource_class_id, _INV.c.used).where(
            _INV.c.resource_provider_id == rp_id)).all())


class TestTriggers(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider_with(self.context, {VCPU: 64, MEMORY_MB: 4096})
        self.first = fx.consumer(self.context)
        self.second = fx.consumer(self.context)

    def test_a_new_inventory_has_no_usage(self):
        self.assertEqual({VCPU: 0, MEMORY_MB: 0},
                         _used(self.context, self.rp))

    def test_inserted_rows_are_added(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2),
                    (self.rp, self.first, MEMORY_MB, 512),
                    (self.rp, self.second, VCPU, 3))
        self.assertEqual({VCPU: 5, MEMORY_MB: 512},
                         _used(self.context, self.rp))

    def test_deleted_rows_are_taken_away(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2),
                    (self.rp, self.first, MEMORY_MB, 512),
                    (self.rp, self.second, VCPU, 3))
        self.assertEqual(2, fx.execute(self.context, sa.delete(_ALLOC).where(
            _ALLOC.c.consumer_id == self.first)))
        self.assertEqual({VCPU: 3, MEMORY_MB: 0},
                         _used(self.context, self.rp))

    def test_updated_rows_move_their_amount(self):
        other = fx.provider(self.context)
        fx.inventory(self.context, other, VCPU, total=8)
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2),
                    (self.rp, self.second, VCPU, 3))
        # A new amount, then another provider, then another class.
        fx.execute(self.context, sa.update(_ALLOC).where(
            _ALLOC.c.consumer_id == self.first).values(used=6))
        self.assertEqual(9, _used(self.context, self.rp)[VCPU])
        fx.execute(self.context, sa.update(_ALLOC).where(
            _ALLOC.c.consumer_id == self.second).values(
            resource_provider_id=other, used=4))
        self.assertEqual({VCPU: 6, MEMORY_MB: 0},
                         _used(self.context, self.rp))
        self.assertEqual({VCPU: 4}, _used(self.context, other))
        fx.execute(self.context, sa.update(_ALLOC).where(
            _ALLOC.c.consumer_id == self.first).values(
            resource_class_id=MEMORY_MB))
        self.assertEqual({VCPU: 0, MEMORY_MB: 6},
                         _used(self.context, self.rp))

    def test_an_inventory_added_under_allocations_counts_them(self):
        # Left by an older release: allocations of a class the provider
        # has no inventory of.
        fx.allocate(self.context, (self.rp, self.first, DISK_GB, 30),
                    (self.rp, self.second, DISK_GB, 12))
        fx.inventory(self.context, self.rp, DISK_GB, total=100)
        self.assertEqual(42, _used(self.context, self.rp)[DISK_GB])

    def test_another_providers_allocations_do_not_count(self):
        other = fx.provider(self.context)
        fx.inventory(self.context, other, VCPU, total=8)
        fx.allocate(self.context, (other, self.first, VCPU, 5))
        self.assertEqual({VCPU: 0, MEMORY_MB: 0},
                         _used(self.context, self.rp))
        self.assertEqual({VCPU: 5}, _used(self.context, other))

    def test_resobj_write_paths_keep_it(self):
        alloc_db.replace_for_consumers(
            self.context, [self.first],
            [(self.rp, self.first, VCPU, 4),
             (self.rp, self.first, MEMORY_MB, 1024)])
        alloc_db.replace_for_consumers(
            self.context, [self.second], [(self.rp, self.second, VCPU, 1)])
        self.assertEqual({VCPU: 5, MEMORY_MB: 1024},
                         _used(self.context, self.rp))
        # A replacement takes the old rows away and adds the new ones.
        alloc_db.replace_for_consumers(
            self.context, [self.first], [(self.rp, self.first, VCPU, 2)])
        self.assertEqual({VCPU: 3, MEMORY_MB: 0},
                         _used(self.context, self.rp))
        alloc_db.delete_all(self.context,
                            fx.consumer_uuid(self.context, self.second))
        self.assertEqual({VCPU: 2, MEMORY_MB: 0},
                         _used(self.context, self.rp))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 0},
                         fx.usage(self.context, self.rp))


class TestFixUsage(db_base.DBTestCase):
    """The online data migration that recounts a wrong usage."""

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rps = [fx.provider(self.context) for _ in range(3)]
        consumer = fx.consumer(self.context)
        for rp in self.rps:
            fx.inventory(self.context, rp, VCPU, total=64)
            fx.allocate(self.context, (rp, consumer, VCPU, 7))

    def _break(self, rp, value):
        fx.execute(self.context, sa.update(_INV).where(
            _INV.c.resource_provider_id == rp).values(used=value))

    def test_nothing_to_do_when_the_triggers_counted(self):
        self.assertEqual([], inventory_db.find_wrong_usage(self.context))
        self.assertEqual(0, inventory_db.count_wrong_usage(self.context))
        self.assertEqual((0, 0), inventory_db.fix_usage(self.context, 50))

    def test_wrong_usages_are_recounted_in_batches(self):
        self._break(self.rps[0], 0)
        self._break(self.rps[2], 99)
        wrong = inventory_db.find_wrong_usage(self.context)
        self.assertEqual(2, len(wrong))
        self.assertEqual(2, inventory_db.count_wrong_usage(self.context))
        self.assertEqual((1, 1), inventory_db.fix_usage(self.context, 1))
        self.assertEqual(1, len(inventory_db.find_wrong_usage(self.context)))
        self.assertEqual(1, inventory_db.count_wrong_usage(self.context))
        self.assertEqual((1, 1), inventory_db.fix_usage(self.context, 50))
        self.assertEqual([], inventory_db.find_wrong_usage(self.context))
        self.assertEqual(0, inventory_db.count_wrong_usage(self.context))
        self.assertEqual([{VCPU: 7}] * 3,
                         [_used(self.context, rp) for rp in self.rps])

    def test_it_runs_with_the_online_data_migrations(self):
        self._break(self.rps[1], 1)
        conf = self.useFixture(resobj_fixtures.ConfFixture()).conf
        migrations = [m for m in online_migrations.registered(conf)
                      if m[0] == 'inventory_usage']
        results, remaining = online_migrations.run(self.context, migrations)
        self.assertEqual([('inventory_usage', 1, 1, None)],
                         [tuple(r) for r in results])
        self.assertFalse(remaining)
        self.assertEqual({VCPU: 7}, _used(self.context, self.rps[1]))
