"""The online data migration runner, on every backend."""

from resobj.db import online_migrations
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
