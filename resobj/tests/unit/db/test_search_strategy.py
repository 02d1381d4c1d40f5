"""The strategies and id lists each backend chooses."""

import json
import sqlite3

import fixtures
import sqlalchemy as sa

from resobj.db import backends
from resobj.db.backends import sqlite as sqlite_backend
from resobj.db.sql import search_strategy as strategy
from resobj.tests import base


class TestIdLists(base.TestCase):

    def setUp(self):
        super().setUp()
        sqlite_backend.has_json.cache_clear()
        sqlite_backend.candidate_strategy.cache_clear()
        self.addCleanup(sqlite_backend.has_json.cache_clear)
        self.addCleanup(sqlite_backend.candidate_strategy.cache_clear)

    def summary_ids(self, dialect):
        return repr(backends.for_dialect(dialect).candidate_strategy()
                    .summary_ids)

    def test_each_backend_binds_the_summaries_ids_its_way(self):
        self.assertEqual('<ArrayIds>', self.summary_ids('postgresql'))
        self.assertEqual('<JsonIds>', self.summary_ids('sqlite'))
        self.assertEqual('<BoundIds>', self.summary_ids('mysql'))

    def test_long_lists_are_inlined_where_ids_are_bound_one_by_one(self):
        self.useFixture(fixtures.MockPatchObject(strategy, 'MAX_BOUND_IDS',
                                                 2))
        self.assertIs(strategy.INLINE_IDS,
                      strategy.BOUND_IDS.fitting([1, 2, 3]))
        self.assertIs(strategy.BOUND_IDS, strategy.BOUND_IDS.fitting([1, 2]))
        array = backends.for_dialect('postgresql').candidate_strategy()
        self.assertIs(array.summary_ids,
                      array.summary_ids.fitting([1, 2, 3]))

    def test_a_summary_id_set_is_bound_as_its_size_needs(self):
        self.useFixture(fixtures.MockPatchObject(strategy, 'MAX_BOUND_IDS',
                                                 2))
        mysql = backends.for_dialect('mysql').candidate_strategy()
        self.assertEqual((strategy.BOUND_IDS, [1, 2]),
                         mysql.summary_id_set({2, 1}))
        self.assertEqual((strategy.INLINE_IDS, [1, 2, 3]),
                         mysql.summary_id_set([3, 1, 2]))
        postgresql = backends.for_dialect('postgresql').candidate_strategy()
        self.assertEqual('{1,2,3}', postgresql.summary_id_set([3, 1, 2])[1])

    def test_sqlite_without_json_functions_binds_ids_one_by_one(self):
        def broken(*args):
            raise sqlite3.OperationalError('no such table: json_each')
        self.useFixture(fixtures.MockPatch('sqlite3.connect',
                                           side_effect=broken))
        self.assertEqual('<BoundIds>', self.summary_ids('sqlite'))

    def test_values_are_sorted_once_encoded(self):
        json_ids = sqlite_backend.JSON_IDS
        self.assertEqual('[1, 2, 3]', json_ids.value({3, 1, 2}))
        self.assertEqual([1, 2, 3], json.loads(json_ids.value([2, 3, 1])))
        array = backends.for_dialect('postgresql').ARRAY_IDS
        self.assertEqual('{1,2,3}', array.value({3, 2, 1}))
        self.assertEqual('{}', array.value([]))
        self.assertEqual([1, 2, 3], strategy.BOUND_IDS.value((3, 1, 2)))

    def test_json_ids_are_a_table_on_sqlite(self):
        engine = sa.create_engine('sqlite://')
        with engine.connect() as conn:
            table = sqlite_backend.JSON_IDS.table('ids')
            found = conn.execute(sa.select(table.c.value).order_by(
                table.c.value), {'ids': sqlite_backend.JSON_IDS.value(
                    [3, 1])}).scalars().all()
        self.assertEqual([1, 3], found)


class TestStrategies(base.TestCase):

    def test_a_window_found_by_its_rows_needs_the_inventory_pivot(self):
        for dialect in ('sqlite', 'postgresql', 'mysql'):
            chosen = backends.for_dialect(dialect).candidate_strategy()
            if chosen.anchored_window:
                self.assertIs(strategy.RowPlan.INVENTORY_PIVOT, chosen.rows,
                              dialect)
            # Cached: statements are cached per strategy.
            self.assertIs(chosen,
                          backends.for_dialect(dialect).candidate_strategy())
