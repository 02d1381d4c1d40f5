"""The candidate rows indexed and combined into requests, no database."""

from resobj.search import combine
from resobj.search import index
from resobj.search import request
from resobj.search import rows
from resobj.search import shapes
from resobj.tests import base

VCPU, DISK = 1, 2
NAMES = {VCPU: 'VCPU', DISK: 'DISK_GB'}
# The columns of two-class rows without the childless roots' columns.
LAYOUT = rows.RowLayout.of(
    ['grp', 'id', 'root_provider_id', 'capacity_0', 'used_0', 'max_unit_0',
     'capacity_1', 'used_1', 'max_unit_1'])
LONE_LAYOUT = rows.RowLayout.of([
    'grp', 'id', 'root_provider_id', 'capacity_0', 'used_0', 'max_unit_0',
    'capacity_1', 'used_1', 'max_unit_1', 'uuid', 'lone', 'traits'])


def group(amounts, suffix='', same=False):
    return request.Group(suffix, {NAMES[rc]: n for rc, n in amounts.items()},
                         [], frozenset(), [], frozenset(), None, same,
                         rc_amounts=amounts)


def indexed(groups, found, layout=LAYOUT, served=None, trait_ids=None):
    """The plan of ``groups`` and ``found`` rows indexed."""
    plan = index.plan(request.search_request(
        groups, trait_ids=trait_ids or {}, tree_roots={}, names=NAMES,
        served=served or {}))
    return plan, index.index_rows(plan, found, layout,
                                  index.Sharing(served or {}))


def row(rp, root, vcpu=None, disk=None, grp=0, lone=()):
    return (grp, rp, root, vcpu, 0 if vcpu else None, 16,
            disk, 0 if disk else None, 100) + tuple(lone)


class TestInOneSubtree(base.TestCase):
    """in_one_subtree over a tree given by its parents."""

    # 1 is the root; 2 and 3 its children; 4 under 2; 5 a root.
    PARENTS = {1: None, 2: 1, 3: 1, 4: 2, 5: None}

    def in_one(self, providers):
        return combine.in_one_subtree(self.PARENTS, providers)

    def test_one_provider_is_its_own_subtree(self):
        self.assertTrue(self.in_one({4}))

    def test_an_ancestor_of_all_the_others(self):
        self.assertTrue(self.in_one({2, 4}))
        self.assertTrue(self.in_one({1, 3, 4}))

    def test_siblings_and_cousins_are_not(self):
        self.assertFalse(self.in_one({2, 3}))
        self.assertFalse(self.in_one({3, 4}))
        self.assertFalse(self.in_one({1, 5}))


class TestRequests(base.TestCase):

    def search(self, groups, found, layout=LAYOUT, served=None):
        plan, rows_indexed = indexed(groups, found, layout, served)
        return combine.Search(plan, rows_indexed, {}, {})

    def requests(self, search, limit=None):
        return combine.requests(search, limit, False, True, set()).requests

    def test_one_provider_with_every_class_takes_the_group_whole(self):
        search = self.search([group({VCPU: 1, DISK: 5})],
                             [row(10, 10, vcpu=8, disk=50),
                              row(20, 20, vcpu=8)])
        self.assertEqual([shapes.WholeRequest('', 10)],
                         self.requests(search))
        self.assertEqual({10: {'VCPU': {'capacity': 8, 'used': 0},
                               'DISK_GB': {'capacity': 50, 'used': 0}},
                          20: {'VCPU': {'capacity': 8, 'used': 0}}},
                         search.indexed.figures)

    def test_a_spread_group_combines_the_providers_of_one_tree(self):
        spread = group({VCPU: 1, DISK: 5})
        # Root 1 has VCPU; its children 2 and 3 have disk: two requests.
        search = self.search([spread], [
            row(1, 1, vcpu=8), row(2, 1, disk=50), row(3, 1, disk=50)])
        found = self.requests(search)
        self.assertEqual(
            [shapes.Combination(((1, VCPU, 1), (2, DISK, 5)),
                                (('', (1, 2)),)),
             shapes.Combination(((1, VCPU, 1), (3, DISK, 5)),
                                (('', (1, 3)),))],
            found)
        self.assertEqual(found[:1], self.requests(search, limit=1))

    def test_childless_roots_the_rows_describe_are_not_options(self):
        spread = group({VCPU: 1, DISK: 5})
        search = self.search(
            [spread], [row(1, 1, vcpu=8, disk=50, lone=('u1', 2, 'A,B')),
                       row(2, 2, vcpu=8, lone=('u2', 2, None))],
            layout=LONE_LAYOUT)
        childless = search.indexed.childless_roots
        self.assertEqual({1: ('u1', 2, 'A,B'), 2: ('u2', 2, None)},
                         childless)
        # Root 2 lacks disk: no request, and no per-class option either.
        self.assertEqual(({}, {}), search.indexed.options[0])
        self.assertEqual(frozenset({1}), search.indexed.whole_roots)
        self.assertEqual(frozenset({1, 2}), search.indexed.settled_roots)
        self.assertEqual([shapes.WholeRequest('', 1)],
                         self.requests(search))
        self.assertEqual(['A', 'B'],
                         rows.LoneRoot._make(childless[1]).trait_list())

    def test_a_sharing_provider_serves_the_roots_it_shares_with(self):
        spread = group({VCPU: 1, DISK: 5})
        search = self.search(
            [spread], [row(1, 1, vcpu=8), row(2, 2, vcpu=8),
                       row(9, 9, disk=500)],
            served={9: {1, 2, 9}})
        found = combine.requests(search, None, False, True, set())
        self.assertEqual(
            [((1, VCPU, 1), (9, DISK, 5)), ((2, VCPU, 1), (9, DISK, 5))],
            [request.items for request in found.requests])
        self.assertEqual({1, 2, 9}, found.used_roots)

    def test_a_sharing_provider_under_a_root_waits_for_its_aggregates(self):
        # Sharing provider 2 (VCPU) is a child of root 1 and serves root
        # 3's tree (disk); the group has member_of sets.
        spread = group({VCPU: 1, DISK: 5})._replace(member_of=[{'agg'}])
        found = [row(1, 1, disk=50), row(2, 1, vcpu=8), row(3, 3, disk=50)]
        served = {2: {1, 3}}
        _plan, held = indexed([spread], found, served=served)
        self.assertEqual({0: {2}}, index.sharers_to_check(held))
        # Not in them itself: its own tree only.
        self.assertEqual([1], index.anchors(
            index.serve_other_trees(held, {0: frozenset()})))
        served_too = index.serve_other_trees(held, {0: frozenset({2})})
        self.assertEqual([1, 3], index.anchors(served_too))
        self.assertEqual({}, index.sharers_to_check(served_too))
        # The index it was given is left as it was.
        self.assertEqual([1], index.anchors(held))
        # A root that shares, or a group without member_of: no test.
        self.assertEqual({}, index.sharers_to_check(indexed(
            [spread], [row(2, 2, vcpu=8), row(3, 3, disk=50)],
            served={2: {2, 3}})[1]))
        self.assertEqual({}, index.sharers_to_check(indexed(
            [group({VCPU: 1, DISK: 5})], found, served=served)[1]))

    def test_two_groups_on_one_provider_must_fit_together(self):
        first = group({VCPU: 6}, suffix='1', same=True)
        second = first._replace(suffix='2')
        # Each group fits alone on provider 1 (8 VCPU), not both.
        search = self.search([first, second],
                             [row(1, 1, vcpu=8, grp=0),
                              row(1, 1, vcpu=8, grp=1),
                              row(2, 1, vcpu=8, grp=0),
                              row(2, 1, vcpu=8, grp=1)])
        found = self.requests(search)
        self.assertEqual([(('1', (1,)), ('2', (2,))),
                          (('1', (2,)), ('2', (1,)))],
                         [request.mappings for request in found])

    def test_a_spread_group_has_its_traits_on_some_provider_of_each_way(self):
        spread = group({VCPU: 1, DISK: 5})._replace(
            required_traits=[{'T'}])
        # Roots 1 and 2 have VCPU, root 1 and sharing provider 9 disk.
        found = [row(1, 1, vcpu=8, disk=50), row(2, 2, vcpu=8),
                 row(3, 3, vcpu=8, disk=50), row(9, 9, disk=500)]
        served = {9: {1, 2}}
        ways = {}
        plan, rows_indexed = indexed([spread], found, served=served,
                                     trait_ids={'T': 7})
        for holders in ((1,), (9,), (), (2, 3)):
            search = combine.Search(plan, rows_indexed, {},
                                    {rp: {7} for rp in holders})
            ways[holders] = [request.items if type(request) is
                             shapes.Combination else request.provider
                             for request in self.requests(search)]
        # Root 1 alone takes the group whole (a WholeRequest).
        whole_1 = 1
        shared_1 = ((1, VCPU, 1), (9, DISK, 5))
        shared_2 = ((2, VCPU, 1), (9, DISK, 5))
        # Root 1 holds the trait: each of its ways, none of root 2's.
        self.assertEqual([whole_1, shared_1], ways[(1,)])
        # Only the sharing provider: the ways that use it.
        self.assertEqual([shared_1, shared_2], ways[(9,)])
        self.assertEqual([], ways[()])
        self.assertEqual([shared_2, 3], ways[(2, 3)])
