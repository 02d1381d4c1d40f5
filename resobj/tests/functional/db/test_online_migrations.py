"""The online data migration runner, on every backend."""

from resobj.db.api import resource_class as rc_db
from resobj.db import online_migrations
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import test_compute_node
from resobj.tests.functional import db_base


class TestRunner(db_base.DBTestCase):

    def _legacy_nodes(self, count):
        for n in range(count):
            test_compute_node.insert_legacy_row(
                self.context, hypervisor_hostname='n%d' % n)

    def _migrations(self):
        defaults = {'cpu': 4.0, 'ram': 1.0, 'disk': 1.0}
        return [
            ('uuids', online_migrations.compute_node.backfill_uuids),
            ('ratios', lambda ctx, n: online_migrations.compute_node
             .fill_empty_ratios(ctx, n, defaults)),
        ]

    def test_runs_to_completion_in_batches(self):
        self._legacy_nodes(7)
        results, remaining = online_migrations.run(
            self.context, self._migrations(), batch_size=3)
        self.assertFalse(remaining)
        self.assertEqual([('uuids', 7, 7, None), ('ratios', 7, 7, None)],
                         [tuple(r) for r in results])

    def test_max_count_stops_and_reports_remaining(self):
        self._legacy_nodes(7)
        results, remaining = online_migrations.run(
            self.context, self._migrations(), max_count=4, batch_size=3)
        self.assertTrue(remaining)
        self.assertEqual(4, sum(r.done for r in results))
        # Resuming finishes the rest and nothing is done twice.
        results, remaining = online_migrations.run(
            self.context, self._migrations(), batch_size=3)
        self.assertFalse(remaining)
        self.assertEqual(14 - 4, sum(r.done for r in results))

    def test_a_failing_migration_is_reported_and_others_run(self):
        self._legacy_nodes(2)

        def broken(context, max_count):
            raise RuntimeError('boom')

        migrations = [('broken', broken)] + self._migrations()
        results, remaining = online_migrations.run(self.context, migrations)
        self.assertEqual('RuntimeError: boom', results[0].error)
        self.assertEqual([2, 2], [r.done for r in results[1:]])
        self.assertFalse(remaining)

    def test_rows_that_cannot_be_fixed_count_as_remaining(self):
        def stuck(context, max_count):
            return 1, 0

        results, remaining = online_migrations.run(
            self.context, [('stuck', stuck)])
        self.assertTrue(remaining)

    def test_progress_after_each_round_of_a_longer_run(self):
        self._legacy_nodes(7)
        rounds = []
        online_migrations.run(
            self.context, self._migrations(), batch_size=3,
            progress=lambda n, results: rounds.append(
                (n, [(r.found, r.done) for r in results])))
        # 3 + 3 + 1 rows: the third round's short batches end the run.
        self.assertEqual([(1, [(3, 3), (3, 3)]), (2, [(6, 6), (6, 6)]),
                          (3, [(7, 7), (7, 7)])], rounds)

    def test_no_progress_for_a_run_of_one_round(self):
        self._legacy_nodes(2)
        rounds = []
        results, remaining = online_migrations.run(
            self.context, self._migrations(), batch_size=3,
            progress=lambda n, results: rounds.append(n))
        self.assertEqual([2, 2], [r.done for r in results])
        self.assertFalse(remaining)
        self.assertEqual([], rounds)


class TestCountLeft(db_base.DBTestCase):

    def test_every_registered_migration_is_counted_without_change(self):
        conf = self.useFixture(resobj_fixtures.ConfFixture()).conf
        rc_db.ensure_sync(self.context)
        for n in range(3):
            test_compute_node.insert_legacy_row(
                self.context, hypervisor_hostname='n%d' % n)
        names = [name for name, _ in online_migrations.registered(conf)]
        left = online_migrations.count_left(self.context, conf)
        self.assertEqual(names, [name for name, _ in left])
        counts = dict(left)
        self.assertEqual(3, counts['compute_node_uuids'])
        self.assertEqual(3, counts['compute_node_allocation_ratios'])
        # Counting changed nothing: the same again, and a run finds
        # what was counted.
        self.assertEqual(left, online_migrations.count_left(self.context,
                                                            conf))
        results, remaining = online_migrations.run(
            self.context, online_migrations.registered(conf))
        self.assertEqual(3, {r.name: r for r in results}[
            'compute_node_uuids'].found)
        self.assertEqual([(name, 0) for name in names],
                         online_migrations.count_left(self.context, conf))
