"""RowLayout: the candidate rows' positions from their column names."""

from resobj.search import rows
from resobj.tests import base


class TestRowLayout(base.TestCase):

    def test_positions_come_from_the_names(self):
        layout = rows.RowLayout.of(
            ['grp', 'id', 'root_provider_id', 'capacity_0', 'used_0',
             'max_unit_0', 'capacity_1', 'used_1', 'max_unit_1', 'uuid',
             'lone', 'traits'])
        self.assertEqual((0, 1, 2), (layout.group, layout.provider,
                                     layout.root))
        self.assertEqual([rows.Slot(3, 4, 5), rows.Slot(6, 7, 8)],
                         list(layout.slots))
        self.assertEqual(9, layout.lone)

    def test_rows_without_lone_roots(self):
        layout = rows.RowLayout.of(
            ['id', 'grp', 'root_provider_id', 'capacity_0', 'used_0',
             'max_unit_0'])
        self.assertEqual((1, 0), (layout.group, layout.provider))
        self.assertIsNone(layout.lone)

    def test_lone_columns_out_of_order_are_refused(self):
        self.assertRaises(ValueError, rows.RowLayout.of, [
            'grp', 'id', 'root_provider_id', 'capacity_0', 'used_0',
            'max_unit_0', 'uuid', 'traits', 'lone'])

    def test_lone_root_traits(self):
        self.assertEqual(['A', 'B'],
                         rows.LoneRoot('u', 1, 'B,A').trait_list())
        self.assertEqual([], rows.LoneRoot('u', 1, None).trait_list())
