"""Parsing GET /allocation_candidates: same_subtree, resourceless groups
and repeated parameters, as placement 16.0.0 answers them (observed
black-box; see tools/compare_candidates.py)."""

import webob

from resobj.api import errors
from resobj.api.handlers import allocation_candidate as handler
from resobj.api import microversion
from resobj.tests import base

LATEST = microversion.MAX
AGG = '6a3c1c0e-2b8f-4f4e-9a51-3d8b7f0c2e11'
AGG2 = '7a3c1c0e-2b8f-4f4e-9a51-3d8b7f0c2e11'


def _message(error):
    """A schema error's message, before the schema it quotes (ours)."""
    return error.detail.split('Failed validating')[0]


def parse(query, version=LATEST):
    return handler.parse(
        webob.Request.blank('/allocation_candidates?' + query), version)


class TestParse(base.TestCase):

    def bad(self, query, *fragments, code=errors.QUERY_BAD_VALUE,
            version=LATEST):
        error = self.assertRaises(errors.HTTPError, parse, query, version)
        self.assertEqual(400, error.status)
        self.assertEqual(code, error.code)
        for fragment in fragments:
            self.assertIn(fragment, error.detail)
        return error

    def test_same_subtree_sets_repeat_and_overlap(self):
        asked = parse('resources_A=VCPU:1&required_B=CUSTOM_X'
                      '&resources_C=VCPU:1&same_subtree=_A,_B'
                      '&same_subtree=_B,_C&group_policy=none')
        self.assertEqual([['_A', '_B'], ['_B', '_C']], asked.same_subtree)
        bare = [g for g in asked.groups if g.suffix == '_B'][0]
        self.assertEqual({}, bare.resources)
        self.assertEqual([{'CUSTOM_X'}], bare.required_traits)

    def test_groups_keep_the_query_order(self):
        # The order placement looks their names up in.
        asked = parse('required_B=CUSTOM_X&resources=VCPU:1'
                      '&resources_A=VCPU:1&resources_B=VCPU:1'
                      '&group_policy=none')
        self.assertEqual(['_B', '', '_A'],
                         [g.suffix for g in asked.groups])

    def test_resourceless_group_needs_same_subtree(self):
        self.bad('resources=VCPU:1&required_X=CUSTOM_X',
                 "bad group(s) - ['_X']")
        self.bad('resources=VCPU:1&member_of_X=%s' % AGG,
                 "bad group(s) - ['_X']")
        # One set names _X, none names _Y.
        self.bad('resources=VCPU:1&required_X=CUSTOM_X&required_Y=CUSTOM_Y'
                 '&same_subtree=_X&group_policy=none',
                 "bad group(s) - ['_Y']")

    def test_resourceless_group_before_1_36(self):
        # Placement's words: the orphans' required traits (keys in query
        # order, forbidden ones not counted), else their member_of sets,
        # else any resourceless group; once every value is parsed.
        v1_35 = microversion.Version(1, 35)

        def bad(query, *fragments):
            return self.bad(query, *fragments, code=errors.UNDEFINED,
                            version=v1_35)

        bad('resources=VCPU:1&required_Y=CUSTOM_X&member_of_X=%s'
            '&required_X=CUSTOM_X' % AGG,
            'All traits parameters must be associated with resources.  '
            'Found the following orphaned traits keys: required_Y, '
            'required_X')
        bad('resources=VCPU:1&member_of_Y=%s&member_of_X=%s'
            '&required_X=!CUSTOM_X' % (AGG, AGG),
            'All member_of parameters must be associated with resources. '
            'Found the following orphaned member_of keys: member_of_Y, '
            'member_of_X')
        bad('resources=VCPU:1&required_X=!CUSTOM_X',
            'All request groups must specify resources.')
        bad('resources=VCPU:1&in_tree_X=%s' % AGG,
            'All request groups must specify resources.')
        # A value's error comes first, whichever group it is in.
        bad('resources=VCPU:1&required_X=CUSTOM_X&resources_Y=VCPU:0',
            'requires amount >= 1')
        # Placement's digits before 1.33.
        self.bad('resources=VCPU:1&required1=CUSTOM_X',
                 'orphaned traits keys: required1', code=errors.UNDEFINED,
                 version=microversion.Version(1, 25))

    def test_an_unknown_parameter_before_any_value(self):
        # Placement validates the whole query string against one schema
        # first: an unknown name is refused before a bad value.
        v1_35 = microversion.Version(1, 35)
        for values in ('limit=0', 'group_policy=all',
                       'root_required=CUSTOM_A,!CUSTOM_A',
                       'root_required=in:CUSTOM_A', 'required_X=CUSTOM_X'):
            error = self.bad('resources=VCPU:1&%s&same_subtree=_X' % values,
                             "'same_subtree' does not match any of the "
                             "regexes", code=errors.UNDEFINED,
                             version=v1_35)
            self.assertNotIn('\\Z', _message(error))
        # Several names: the patterns read as placement's, ending in $.
        error = self.bad('resources=VCPU:1&foo=1&same_subtree=_X',
                         "'foo', 'same_subtree' do not match any of the "
                         "regexes: '^in_tree([a-zA-Z0-9_-]{1,64})?$'",
                         code=errors.UNDEFINED, version=v1_35)
        self.assertNotIn('\\Z', _message(error))

    def test_same_subtree_names_real_suffixed_groups(self):
        self.bad('resources=VCPU:1&required_X=CUSTOM_X&same_subtree=_X,_Z',
                 "['_Z'] not found in ['', '_X']")
        self.bad('resources=VCPU:1&same_subtree=_X,',
                 'Empty string (unsuffixed group)')
        self.bad('resources=VCPU:1&same_subtree=',
                 'Empty string (unsuffixed group)')

    def test_some_group_needs_resources(self):
        self.bad('required_X=CUSTOM_X&same_subtree=_X',
                 'at least one resources', code=errors.QUERY_MISSING_VALUE)

    def test_group_policy_counts_resourceless_groups(self):
        self.bad('resources=VCPU:1&required_X=CUSTOM_X&required_Y=CUSTOM_Y'
                 '&same_subtree=_X,_Y', 'group_policy',
                 code=errors.UNDEFINED)

    def test_repeated_group_parameters_take_the_last(self):
        asked = parse('resources=VCPU:1&resources=DISK_GB:2'
                      '&in_tree=%s&in_tree=%s' % (AGG, AGG2))
        group, = asked.groups
        self.assertEqual({'DISK_GB': 2}, group.resources)
        self.assertEqual(AGG2, group.in_tree)
        # required: the last before 1.39, every one from 1.39.
        asked = parse('resources=VCPU:1&required=CUSTOM_A&required=CUSTOM_B',
                      microversion.Version(1, 38))
        self.assertEqual([{'CUSTOM_B'}], asked.groups[0].required_traits)
        asked = parse('resources=VCPU:1&required=CUSTOM_A&required=CUSTOM_B')
        self.assertEqual([{'CUSTOM_A'}, {'CUSTOM_B'}],
                         asked.groups[0].required_traits)

    def test_repeated_limit_and_group_policy_take_the_first(self):
        asked = parse('resources=VCPU:1&limit=2&limit=7'
                      '&group_policy=isolate&group_policy=none')
        self.assertEqual(2, asked.limit)
        self.assertEqual('isolate', asked.group_policy)
        # Every value must be valid, the first or not (placement answers
        # 500 for a bad first limit).
        self.bad('resources=VCPU:1&limit=2&limit=x', code=errors.UNDEFINED)
        self.bad('resources=VCPU:1&limit=x&limit=2', code=errors.UNDEFINED)
        self.bad('resources=VCPU:1&group_policy=none&group_policy=all',
                 code=errors.UNDEFINED)

    def test_root_required_once(self):
        self.bad('resources=VCPU:1&root_required=CUSTOM_A'
                 '&root_required=CUSTOM_B', code=errors.QUERY_DUPLICATE_KEY)

    def test_an_aggregate_both_required_and_forbidden(self):
        group, = parse('resources=VCPU:1&member_of=%s&member_of=!in:%s,%s'
                       % (AGG, AGG, AGG2)).groups
        self.assertEqual([{AGG}], group.member_of)
        self.assertEqual({AGG, AGG2}, group.forbidden_aggs)
