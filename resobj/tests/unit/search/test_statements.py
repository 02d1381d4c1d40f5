"""The candidate statements build and compile for every strategy.

Their results are checked on real databases by the functional tests;
here, that every backend's statements compile and name their columns as
RowLayout reads them.
"""

from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from resobj.db import backends
from resobj.search import request
from resobj.search import rows
from resobj.search.statements import anchors
from resobj.search.statements import lookups
from resobj.search.statements import rows as row_statements
from resobj.search.statements import summaries
from resobj.tests import base

DIALECTS = {'sqlite': sqlite.dialect(), 'postgresql': postgresql.dialect(),
            'mysql': mysql.dialect()}
TWO_GROUPS = (
    request.GroupShape(classes=3, member_of=1, forbidden_aggs=True,
                       forbidden_traits=True, required=0, in_tree=False,
                       single=False),
    request.GroupShape(classes=1, member_of=0, forbidden_aggs=False,
                       forbidden_traits=False, required=1, in_tree=True,
                       single=True))


class TestStatements(base.TestCase):

    def each(self):
        for name, dialect in DIALECTS.items():
            yield name, dialect, backends.for_dialect(
                name).candidate_strategy()

    def test_rows_name_their_columns_for_the_layout(self):
        root_filter = request.RootFilter(True, True)
        for name, dialect, chosen in self.each():
            built = [row_statements.whole_cloud(TWO_GROUPS, chosen, True,
                                                root_filter),
                     row_statements.of_roots(TWO_GROUPS, chosen, True)]
            if chosen.anchored_window:
                built.append(row_statements.anchored(TWO_GROUPS, chosen,
                                                     root_filter))
            for statement in built:
                layout = rows.RowLayout.of_statement(statement)
                # Padded to the group with the most classes.
                self.assertEqual(3, len(layout.slots), name)
                self.assertEqual(chosen.describes_lone_roots,
                                 layout.lone is not None, name)
                sql = str(statement.compile(dialect=dialect))
                self.assertIn('capacity_2', sql)

    def test_windows_bind_their_roots(self):
        for name, dialect, chosen in self.each():
            statement = row_statements.of_roots(TWO_GROUPS, chosen, False)
            self.assertIn('roots', statement.compile(dialect=dialect).params)
            anchor = anchors.anchor_roots(TWO_GROUPS, True, chosen.root_walk,
                                          request.RootFilter())
            params = anchor.compile(dialect=dialect).params
            self.assertIn('sharing_ids', params, name)
            self.assertNotIn('served_roots', params, name)
            self.assertIn('count', params, name)

    def test_lookups_and_summaries_compile(self):
        for name, dialect, chosen in self.each():
            ids = chosen.summary_ids
            for statement in (
                    lookups.names_and_sharing(),
                    lookups.names_and_sharing(pairs=False),
                    lookups.served_in_window(chosen.window_ids),
                    lookups.provider_roots(),
                    lookups.trait_links(ids),
                    lookups.resourceless_providers(TWO_GROUPS[1:]),
                    summaries.providers(ids, chosen.summary_traits_inline),
                    summaries.inventories(ids), summaries.traits(ids)):
                self.assertTrue(str(statement.compile(dialect=dialect)),
                                name)
            columns = summaries.providers(
                ids, chosen.summary_traits_inline).selected_columns.keys()
            # With the traits or without them (names NULL), the rows
            # are ProviderRows, in the fields' order.
            self.assertEqual(list(summaries.ProviderRow._fields),
                             list(columns), name)
