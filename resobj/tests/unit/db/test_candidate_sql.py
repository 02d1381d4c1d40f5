"""How candidate_sql binds id sets (the statements run in functional tests)."""

import json
import sqlite3

import fixtures
import testtools

from resobj.db import candidate_sql as csql


class TestIdSets(testtools.TestCase):

    def setUp(self):
        super().setUp()
        csql._sqlite_has_json.cache_clear()
        self.addCleanup(csql._sqlite_has_json.cache_clear)

    def test_style_per_dialect(self):
        self.assertEqual('array', csql.id_style('postgresql', [1, 2]))
        self.assertEqual('json', csql.id_style('sqlite', [1, 2]))
        self.assertEqual('bound', csql.id_style('mysql', [1, 2]))

    def test_long_lists_are_inlined_where_ids_are_bound_one_by_one(self):
        self.useFixture(fixtures.MockPatch(
            'resobj.db.candidate_sql.MAX_BOUND_IDS', 2))
        self.assertEqual('inline', csql.id_style('mysql', [1, 2, 3]))
        self.assertEqual('bound', csql.id_style('mysql', [1, 2]))
        self.assertEqual('array', csql.id_style('postgresql', [1, 2, 3]))

    def test_sqlite_without_json_functions_binds_ids_one_by_one(self):
        def no_json(path):
            raise sqlite3.OperationalError('no such table: json_each')
        connection = self.useFixture(fixtures.MockPatch(
            'resobj.db.candidate_sql.sqlite3.connect')).mock.return_value
        connection.execute.side_effect = no_json
        self.assertEqual('bound', csql.id_style('sqlite', [1, 2]))

    def test_values_are_sorted_once_encoded(self):
        self.assertEqual('[1, 2, 3]', csql.id_value('json', {3, 1, 2}))
        self.assertEqual([1, 2, 3], json.loads(csql.id_value('json',
                                                             [2, 3, 1])))
        # PostgreSQL's array literal, which the statements cast.
        self.assertEqual('{1,2,3}', csql.id_value('array', {3, 2, 1}))
        self.assertEqual('{}', csql.id_value('array', []))
        self.assertEqual([1, 2, 3], csql.id_value('bound', (3, 1, 2)))
