"""The candidate statements build and compile for every strategy.

Their results are checked on real databases by the functional tests;
here, that every backend's statements compile and name their columns as
RowLayout reads them.
"""

from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from resobj.db import backends
from resobj.db.sql import resource_provider as sql
from resobj.search import request
from resobj.search import rows
from resobj.search.statements import anchors
from resobj.search.statements import clauses
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


class TestStepNames(base.TestCase):
    """Every kind of step the search filters with has a name in explain.

    A filter added to ``clauses.group_steps`` without its name in
    ``clauses.GROUP_STEP_NAMES`` would make every explanation of a
    request using it fail; this says so first.
    """

    def test_every_group_step_is_named_from_the_groups_values(self):
        found = request.group(
            '1', {'VCPU': 1}, required_traits=[{'HW_A', 'HW_B'}],
            forbidden_traits={'HW_C'}, member_of=[{'agg-a'}],
            forbidden_aggs={'agg-f'}, in_tree='tree-uuid')
        (shape,) = request.shape([found._replace(rc_amounts={1: 1})])
        steps = clauses.group_steps(0, shape)
        self.assertEqual(set(clauses.GROUP_STEP_NAMES),
                         {step.kind for step in steps})
        self.assertEqual(
            ['in_tree tree-uuid', 'required HW_A or HW_B',
             'forbidden HW_C', 'member_of agg-a', 'not member_of agg-f'],
            [clauses.GROUP_STEP_NAMES[kind](found, 0)
             for kind in clauses.GROUP_STEP_NAMES])

    def test_every_root_step_is_named(self):
        steps = clauses.root_steps(
            sql.RP.c.root_provider_id, request.RootFilter(True, True))
        self.assertEqual(
            ['root_required HW_A, HW_B', 'root_required !HW_C'],
            [clauses.ROOT_STEP_NAMES[step.kind]({'HW_B', 'HW_A'},
                                                {'HW_C'})
             for step in steps])
