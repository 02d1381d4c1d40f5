"""Usage reads and the capacity report, on every backend."""

from resobj.db.api import resource_class as rc_db
from resobj.db.api import usage as usage_db
from resobj import exception
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2
SHARES = usage_db.SHARING_TRAIT


def _selects(statements):
    # SQLite's BEGIN and oslo.db's pings are not the queries under test.
    return [s for s in statements if s.lstrip().upper().startswith(
        ('SELECT', 'WITH'))]


class TestUsageByProvider(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider(self.context)
        self.uuid = fx.uuid(self.context, self.rp)
        fx.inventory(self.context, self.rp, VCPU, total=8)
        fx.inventory(self.context, self.rp, MEMORY_MB, total=4096)
        fx.inventory(self.context, self.rp, DISK_GB, total=100)

    def usage(self):
        return {row['resource_class']: row['usage'] for row in
                usage_db.get_provider_usages(self.context,
                                             self.uuid)['usages']}

    def test_unused_classes_show_zero(self):
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0},
                         self.usage())

    def test_sums_every_consumer_and_only_this_provider(self):
        other = fx.provider(self.context)
        fx.inventory(self.context, other, VCPU, total=8)
        c1, c2 = fx.consumer(self.context), fx.consumer(self.context)
        fx.allocate(self.context, (self.rp, c1, VCPU, 2),
                    (self.rp, c2, VCPU, 3), (self.rp, c1, MEMORY_MB, 512),
                    (other, c2, VCPU, 7))
        self.assertEqual({'VCPU': 5, 'MEMORY_MB': 512, 'DISK_GB': 0},
                         self.usage())

    def test_provider_without_inventory_is_empty(self):
        bare = fx.uuid(self.context, fx.provider(self.context))
        self.assertEqual(
            [], usage_db.get_provider_usages(self.context, bare)['usages'])

    def test_missing_provider(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          usage_db.get_provider_usages, self.context,
                          '00000000-0000-0000-0000-00000000dead')

    def _statements_with(self, consumers):
        for _ in range(consumers):
            c = fx.consumer(self.context)
            fx.allocate(self.context, (self.rp, c, VCPU, 1),
                        (self.rp, c, MEMORY_MB, 1))
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            usage_db.get_provider_usages(self.context, self.uuid)
        return _selects(counter.statements)

    def test_one_query_however_many_allocations(self):
        small = self._statements_with(1)
        large = self._statements_with(40)
        self.assertEqual(1, len(small), small)
        self.assertEqual(len(small), len(large))


class TestUsageByProjectUser(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        rp = fx.provider(self.context)
        for rc in (VCPU, MEMORY_MB, DISK_GB):
            fx.inventory(self.context, rp, rc, total=100000)
        # p1/u1: two instances each holding VCPU and MEMORY_MB (and one
        # DISK_GB), one migration, one untyped consumer.
        # p1/u2: one instance. p2: one instance, never counted for p1.
        i1 = fx.consumer(self.context, 'p1', 'u1', 'INSTANCE')
        i2 = fx.consumer(self.context, 'p1', 'u1', 'INSTANCE')
        m1 = fx.consumer(self.context, 'p1', 'u1', 'MIGRATION')
        n1 = fx.consumer(self.context, 'p1', 'u1')
        i3 = fx.consumer(self.context, 'p1', 'u2', 'INSTANCE')
        i4 = fx.consumer(self.context, 'p2', 'u1', 'INSTANCE')
        fx.allocate(self.context,
                    (rp, i1, VCPU, 2), (rp, i1, MEMORY_MB, 1024),
                    (rp, i1, DISK_GB, 10),
                    (rp, i2, VCPU, 4), (rp, i2, MEMORY_MB, 2048),
                    (rp, m1, VCPU, 1), (rp, m1, MEMORY_MB, 512),
                    (rp, n1, VCPU, 8),
                    (rp, i3, VCPU, 16), (rp, i3, MEMORY_MB, 4096),
                    (rp, i4, VCPU, 32))

    def get(self, *args, **kw):
        return {(r['consumer_type'], r['resource_class']):
                (r['usage'], r['consumer_count']) for r in
                usage_db.get_all_by_project_user(self.context, *args, **kw)}

    def test_without_counts_the_sums_are_the_same(self):
        rows = usage_db.get_all_by_project_user(self.context, 'p1',
                                                count_consumers=False)
        self.assertEqual(
            {k: usage for k, (usage, _count) in self.get('p1').items()},
            {(r['consumer_type'], r['resource_class']): r['usage']
             for r in rows})
        self.assertFalse(any('consumer_count' in r for r in rows))

    def test_project_per_type_counts_consumers_once(self):
        self.assertEqual({
            ('INSTANCE', 'VCPU'): (22, 3),
            ('INSTANCE', 'MEMORY_MB'): (7168, 3),
            ('INSTANCE', 'DISK_GB'): (10, 3),
            ('MIGRATION', 'VCPU'): (1, 1),
            ('MIGRATION', 'MEMORY_MB'): (512, 1),
            ('unknown', 'VCPU'): (8, 1),
        }, self.get('p1'))

    def test_project_and_user(self):
        self.assertEqual({
            ('INSTANCE', 'VCPU'): (6, 2),
            ('INSTANCE', 'MEMORY_MB'): (3072, 2),
            ('INSTANCE', 'DISK_GB'): (10, 2),
            ('MIGRATION', 'VCPU'): (1, 1),
            ('MIGRATION', 'MEMORY_MB'): (512, 1),
            ('unknown', 'VCPU'): (8, 1),
        }, self.get('p1', 'u1'))

    def test_all_types_sums_and_counts_distinct_consumers(self):
        # 5 consumers of p1 hold 15 (class, consumer) rows.
        self.assertEqual({
            ('all', 'VCPU'): (31, 5),
            ('all', 'MEMORY_MB'): (7680, 5),
            ('all', 'DISK_GB'): (10, 5),
        }, self.get('p1', consumer_type='all'))

    def test_all_types_without_counts(self):
        rows = usage_db.get_all_by_project_user(
            self.context, 'p1', consumer_type='all', count_consumers=False)
        self.assertEqual(
            [{'resource_class': 'DISK_GB', 'usage': 10,
              'consumer_type': 'all'},
             {'resource_class': 'MEMORY_MB', 'usage': 7680,
              'consumer_type': 'all'},
             {'resource_class': 'VCPU', 'usage': 31,
              'consumer_type': 'all'}], rows)
        rows = usage_db.get_all_by_project_user(
            self.context, 'p1', 'u2', consumer_type='all',
            count_consumers=False)
        self.assertEqual({'VCPU': 16, 'MEMORY_MB': 4096},
                         {r['resource_class']: r['usage'] for r in rows})

    def test_filter_by_type_name(self):
        self.assertEqual({
            ('MIGRATION', 'VCPU'): (1, 1),
            ('MIGRATION', 'MEMORY_MB'): (512, 1),
        }, self.get('p1', consumer_type='MIGRATION'))

    def test_filter_unknown(self):
        self.assertEqual({('unknown', 'VCPU'): (8, 1)},
                         self.get('p1', 'u1', consumer_type='unknown'))

    def test_no_match_is_empty(self):
        self.assertEqual({}, self.get('nope'))
        self.assertEqual({}, self.get('nope', consumer_type='all'))
        self.assertEqual({}, self.get('p1', 'nobody'))
        self.assertEqual({}, self.get('p1', consumer_type='NO_SUCH_TYPE'))
        self.assertEqual({}, self.get('p2', consumer_type='unknown'))


class TestProjectUsagePlan(db_base.DBTestCase):
    """A project's sums read consumers and allocations from indexes only.

    SQLite only: its planner has no statistics, so its plan does not
    depend on how many rows the test wrote (migration 0004's indexes).
    """

    scenarios = db_base.BACKEND_SCENARIOS[:1]

    def _plan(self, *args):
        compiled = usage_db._project_usage_stmt(*args).compile(self.engine)
        values = compiled.construct_params({
            'project_id': 'p1', 'user_id': 'u1', 'consumer_type': 'X'})
        with self.engine.connect() as conn:
            return [row[-1] for row in conn.exec_driver_sql(
                'EXPLAIN QUERY PLAN ' + str(compiled),
                tuple(values[name] for name in compiled.positiontup))]

    def test_every_read_of_the_two_tables_is_index_only(self):
        for args in ((False, None), (True, None), (False, 'named'),
                     (False, None, True, False)):
            plan = self._plan(*args)
            reads = [line for line in plan if
                     ' consumers ' in line or ' allocations ' in line]
            self.assertEqual(4, len(reads), plan)
            for line in reads:
                self.assertIn('USING COVERING INDEX', line, plan)


class TestCapacityReport(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)

    def report(self):
        return usage_db.capacity_report(self.context)

    def test_empty(self):
        self.assertEqual({'providers': [], 'totals': []}, self.report())

    def _shared_pool_cloud(self):
        """One DISK_GB pool shared by 3 compute nodes, as with Ceph."""
        self.pool = fx.provider(self.context, 'a-pool')
        fx.inventory(self.context, self.pool, DISK_GB, total=10000,
                     reserved=1000, allocation_ratio=1.5)
        fx.add_trait(self.context, self.pool, SHARES)
        fx.add_to_aggregate(self.context, self.pool, 'agg-ceph')
        self.nodes = []
        for i in range(3):
            node = fx.provider(self.context, 'node-%d' % i)
            fx.inventory(self.context, node, VCPU, total=16,
                         allocation_ratio=4.0)
            fx.inventory(self.context, node, MEMORY_MB, total=65536,
                         reserved=512)
            fx.add_to_aggregate(self.context, node, 'agg-ceph')
            self.nodes.append(node)
        c = fx.consumer(self.context)
        fx.allocate(self.context, (self.nodes[0], c, VCPU, 4),
                    (self.nodes[0], c, MEMORY_MB, 2048),
                    (self.pool, c, DISK_GB, 100))

    def test_shared_pool_counts_once(self):
        self._shared_pool_cloud()
        report = self.report()
        totals = {t['resource_class']: t for t in report['totals']}
        pool_capacity = int((10000 - 1000) * 1.5)
        # The cloud has one pool: 13500 GB, not 3 (or 4) times that.
        self.assertEqual({'resource_class': 'DISK_GB', 'total': 10000,
                          'reserved': 1000, 'capacity': pool_capacity,
                          'used': 100, 'free': pool_capacity - 100},
                         totals['DISK_GB'])
        self.assertEqual({'resource_class': 'VCPU', 'total': 48,
                          'reserved': 0, 'capacity': 192, 'used': 4,
                          'free': 188}, totals['VCPU'])
        self.assertEqual(3 * (65536 - 512), totals['MEMORY_MB']['capacity'])

        by_name = {p['name']: p for p in report['providers']}
        self.assertEqual(['a-pool', 'node-0', 'node-1', 'node-2'],
                         [p['name'] for p in report['providers']])
        pool = by_name['a-pool']
        node_uuids = sorted(fx.uuid(self.context, n) for n in self.nodes)
        self.assertTrue(pool['sharing'])
        self.assertEqual(node_uuids, pool['shares_with'])
        self.assertEqual([{'resource_class': 'DISK_GB', 'total': 10000,
                           'reserved': 1000, 'allocation_ratio': 1.5,
                           'capacity': pool_capacity, 'used': 100,
                           'free': pool_capacity - 100}],
                         pool['inventories'])
        pool_uuid = fx.uuid(self.context, self.pool)
        for i in range(3):
            node = by_name['node-%d' % i]
            self.assertFalse(node['sharing'])
            self.assertEqual([], node['shares_with'])
            # The node reaches the pool's disk but does not own it: no
            # node-level DISK_GB line adds the pool again.
            self.assertEqual([pool_uuid], node['shared_from'])
            self.assertEqual(['MEMORY_MB', 'VCPU'], [
                inv['resource_class'] for inv in node['inventories']])
        self.assertEqual(4, by_name['node-0']['inventories'][1]['used'])
        self.assertEqual(0, by_name['node-1']['inventories'][1]['used'])
        # Per class, the totals are the providers' own lines summed once.
        for name, total in totals.items():
            self.assertEqual(total['capacity'], sum(
                inv['capacity'] for p in report['providers']
                for inv in p['inventories']
                if inv['resource_class'] == name))

    def test_sharing_needs_the_trait_and_a_common_aggregate(self):
        self._shared_pool_cloud()
        # In the aggregate but without the trait: shares nothing.
        lone = fx.provider(self.context, 'lone')
        fx.inventory(self.context, lone, DISK_GB, total=50)
        fx.add_to_aggregate(self.context, lone, 'agg-ceph')
        # With the trait but in no aggregate with anyone.
        island = fx.provider(self.context, 'island')
        fx.inventory(self.context, island, DISK_GB, total=70)
        fx.add_trait(self.context, island, SHARES)
        fx.add_to_aggregate(self.context, island, 'agg-island')
        # A node in two aggregates with the pool is listed once.
        fx.add_to_aggregate(self.context, self.pool, 'agg-2')
        fx.add_to_aggregate(self.context, self.nodes[0], 'agg-2')
        report = self.report()
        by_name = {p['name']: p for p in report['providers']}
        pool_uuid = fx.uuid(self.context, self.pool)
        self.assertFalse(by_name['lone']['sharing'])
        self.assertEqual([pool_uuid], by_name['lone']['shared_from'])
        self.assertTrue(by_name['island']['sharing'])
        self.assertEqual([], by_name['island']['shares_with'])
        self.assertEqual(4, len(by_name['a-pool']['shares_with']))
        self.assertEqual([pool_uuid], by_name['node-0']['shared_from'])
        totals = {t['resource_class']: t for t in report['totals']}
        self.assertEqual(13500 + 50 + 70, totals['DISK_GB']['capacity'])

    def test_capacity_truncates_like_the_inventory_property(self):
        rp = fx.provider(self.context)
        # (10 - 1) * 1.55 = 13.95: int() truncates to 13 where a rounding
        # CAST (PostgreSQL, MySQL) would give 14.
        fx.inventory(self.context, rp, VCPU, total=10, reserved=1,
                     allocation_ratio=1.55)
        report = self.report()
        self.assertEqual(13, report['providers'][0]['inventories'][0][
            'capacity'])
        self.assertEqual(13, report['totals'][0]['capacity'])

    def test_over_capacity_shows_negative_free(self):
        rp = fx.provider(self.context)
        fx.inventory(self.context, rp, VCPU, total=4)
        fx.allocate(self.context, (rp, fx.consumer(self.context), VCPU, 6))
        self.assertEqual(-2, self.report()['totals'][0]['free'])

    def _grow(self, providers, consumers_each):
        for i in range(providers):
            node = fx.provider(self.context)
            fx.inventory(self.context, node, VCPU, total=1000)
            fx.add_to_aggregate(self.context, node, 'agg-ceph')
            for _ in range(consumers_each):
                fx.allocate(self.context,
                            (node, fx.consumer(self.context), VCPU, 1))

    def test_statement_count_does_not_grow(self):
        self._shared_pool_cloud()
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            self.report()
        small = _selects(counter.statements)
        self._grow(providers=15, consumers_each=4)
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            report = self.report()
        large = _selects(counter.statements)
        self.assertEqual(19, len(report['providers']))
        self.assertEqual(3, len(small), small)
        self.assertEqual(len(small), len(large))
