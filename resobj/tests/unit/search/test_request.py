"""The request's shape and bound values."""

from resobj import exception
from resobj.search import request
from resobj.tests import base


def spec(suffix='', resources=None, **kwargs):
    return request.group(suffix, resources,
                         use_same_provider=bool(suffix), **kwargs)


class TestRequest(base.TestCase):

    def test_groups_with_resources_come_first(self):
        groups = request.groups_with_ids(
            [spec('1', required_traits=[{'A'}]),
             spec('', {'VCPU': 2, 'DISK_GB': 5})], {'VCPU': 0, 'DISK_GB': 2})
        self.assertEqual(['', '1'], [g.suffix for g in groups])
        self.assertEqual({0: 2, 2: 5}, groups[0].rc_amounts)

    def test_shape_names_what_the_statements_depend_on(self):
        groups = request.groups_with_ids(
            [spec('1', {'VCPU': 1}, required_traits=[{'A'}, {'B', 'C'}],
                  member_of=[{'agg'}], in_tree='tree-uuid')], {'VCPU': 0})
        shape, = request.shape(groups)
        self.assertEqual(request.GroupShape(
            classes=1, member_of=1, forbidden_aggs=False,
            forbidden_traits=False, required=2, in_tree=True, single=True),
            shape)
        # A spread group's required traits are checked per combination.
        spread, = request.shape([groups[0]._replace(use_same_provider=False)])
        self.assertEqual(0, spread.required)
        # But a root that takes it alone must have them: the whole
        # cloud's rows test those.
        self.assertEqual(2, spread.spread_required)
        self.assertEqual(0, shape.spread_required)

    def test_values_are_named_by_group_and_class_order(self):
        groups = request.groups_with_ids(
            [spec('', {'VCPU': 2, 'DISK_GB': 5},
                  forbidden_traits={'X'}, in_tree='t')],
            {'VCPU': 7, 'DISK_GB': 3})
        self.assertEqual(
            {'rc_0_0': 3, 'amount_0_0': 5, 'rc_0_1': 7, 'amount_0_1': 2,
             'ftrait_0': [11], 'tree_0': 40},
            request.params(groups, {'X': 11}, {'t': 40}))

    def test_root_filter(self):
        found = request.search_request(
            request.groups_with_ids([spec('', {'VCPU': 1})], {'VCPU': 0}),
            trait_ids={'A': 1, 'B': 2}, tree_roots={}, names={0: 'VCPU'},
            served={}, root_required={'A'}, root_forbidden={'B'})
        self.assertEqual(request.RootFilter(True, True), found.root_filter)
        self.assertEqual(([1], 1, [2]), (
            found.params['root_traits'], found.params['root_trait_count'],
            found.params['root_forbidden']))

    def test_a_limit_past_what_binds_is_no_limit(self):
        self.assertIsNone(request.bounded_limit(request.MAX_LIMIT + 1))
        self.assertEqual(50, request.bounded_limit(50))
        self.assertIsNone(request.bounded_limit(None))


class TestChecks(base.TestCase):

    def test_a_group_asking_for_nothing_is_invalid(self):
        self.assertRaises(exception.Invalid, request.group, '1')

    def test_amounts_are_positive_integers(self):
        for amount in (0, -1, True, 1.5):
            self.assertRaises(exception.Invalid, request.group, '',
                              {'VCPU': amount})

    def test_resourceless_groups_need_a_same_subtree(self):
        groups = [spec('', {'VCPU': 1}), spec('1', required_traits=[{'A'}])]
        self.assertRaises(exception.Invalid, request.checked_subtrees,
                          groups, [])
        self.assertEqual([['1']], request.checked_subtrees(groups, [('1',)]))
        self.assertRaises(exception.Invalid, request.checked_subtrees,
                          groups, [('1', '2')])

    def test_request_arguments(self):
        self.assertRaises(exception.Invalid, request.checked_arguments,
                          ['', '1', '1'], None, (), ())
        self.assertRaises(exception.Invalid, request.checked_arguments,
                          [''], 'spread', (), ())
        self.assertRaises(exception.Invalid, request.checked_arguments,
                          [''], None, {'A'}, {'A'})
        self.assertEqual((frozenset({'A'}), frozenset()),
                         request.checked_arguments([''], 'isolate', ['A'],
                                                   None))

    def test_lookup_order_is_placements(self):
        groups = [spec('_b', {'VCPU': 1}, required_traits=[{'Z'}, {'Q', 'P'}],
                       forbidden_traits={'Y', 'X'}, member_of=[{'agg1'}]),
                  spec('', {'VCPU': 1}, required_traits=[{'A'}],
                       member_of=[{'agg2', 'agg3'}, {'agg4'}])]
        groups[0].resources['MEMORY_MB'] = 1

        def trait(name):
            return request.Lookup(request.TRAIT, name)

        def rc(name):
            return request.Lookup(request.CLASS, name)

        def agg(*uuids):
            return request.Lookup(request.MEMBER_OF, frozenset(uuids))

        self.assertEqual(
            # root_required: required ones, then forbidden, by name, and
            # whether a root passes them;
            # then per group as given: classes as given, member_of sets,
            # required traits (an in: set's by name), forbidden ones by
            # name, and the group searched alone.
            [trait('R1'), trait('R2'), trait('F1'), trait('F2'),
             request.Lookup(request.ROOTS, None),
             rc('VCPU'), rc('MEMORY_MB'), agg('agg1'), trait('Z'),
             trait('P'), trait('Q'), trait('X'), trait('Y'),
             request.Lookup(request.ALONE, groups[0]),
             rc('VCPU'), agg('agg2', 'agg3'), agg('agg4'), trait('A'),
             request.Lookup(request.ALONE, groups[1])],
            request.lookup_order(groups, ('R2', 'R1'), {'F2', 'F1'}))
        # Without root_required, no root test.
        self.assertEqual([rc('VCPU'), agg('agg2', 'agg3'), agg('agg4'),
                          trait('A'),
                          request.Lookup(request.ALONE, groups[1])],
                         request.lookup_order(groups[1:2]))

    def test_a_resourceless_group_needs_a_positive_filter(self):
        self.assertTrue(request.matches_nothing(spec(
            '_A', {}, forbidden_traits={'X'}, forbidden_aggs={'agg1'},
            in_tree='rp')))
        self.assertFalse(request.matches_nothing(spec(
            '_A', {}, required_traits=[{'X', 'Y'}])))
        self.assertFalse(request.matches_nothing(spec(
            '_A', {}, member_of=[{'agg1'}])))
        self.assertFalse(request.matches_nothing(spec('', {'VCPU': 1})))
