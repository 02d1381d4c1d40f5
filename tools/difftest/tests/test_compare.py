"""Unit tests of the harness's pure normalisation and comparison.

    stestr run tools.difftest
"""

import json
import unittest

from tools.difftest import compare

KNOWN = '11111111-2222-4333-8444-555555555555'
MADE_A = 'aaaaaaaa-2222-4333-8444-555555555555'
MADE_B = 'bbbbbbbb-2222-4333-8444-555555555555'


def answer(status, body=None, **headers):
    raw = json.dumps(body).encode() if body is not None else b''
    pairs = list(headers.items())
    if body is not None:
        pairs.append(('Content-Type', 'application/json'))
    return compare.Answer(status, pairs, raw)


def error(status, detail, request_id='req-%s' % MADE_A):
    return {'errors': [{'status': status, 'detail': detail,
                        'request_id': request_id}]}


class TestNormalise(unittest.TestCase):

    def test_server_made_uuids_are_named_by_appearance(self):
        ref = compare.normalise(answer(200, {'uuid': MADE_A}),
                                compare.UuidNames({KNOWN}))
        res = compare.normalise(answer(200, {'uuid': MADE_B}),
                                compare.UuidNames({KNOWN}))
        self.assertEqual([], compare.differences(ref, res))
        self.assertEqual('<uuid-1>', ref['body']['uuid'])

    def test_chosen_uuids_are_kept(self):
        ref = compare.normalise(answer(200, {'uuid': KNOWN}),
                                compare.UuidNames({KNOWN}))
        self.assertEqual(KNOWN, ref['body']['uuid'])

    def test_bound_uuids_get_the_same_name(self):
        a, b = compare.UuidNames(set()), compare.UuidNames(set())
        a.bind(MADE_A)
        b.bind(MADE_B)
        a(KNOWN)
        self.assertEqual(a(MADE_A), b(MADE_B))

    def test_request_ids_hosts_and_trailing_spaces_go(self):
        ref = compare.normalise(
            answer(404, error(404, 'Not here.  '),
                   Location='http://127.0.0.1:8800/traits/CUSTOM_A'),
            compare.UuidNames(set()))
        res = compare.normalise(
            answer(404, error(404, 'Not here.', 'req-%s' % MADE_B),
                   Location='http://127.0.0.1:9/traits/CUSTOM_A'),
            compare.UuidNames(set()))
        self.assertEqual([], compare.differences(ref, res))
        self.assertEqual('/traits/CUSTOM_A', ref['headers']['location'])

    def test_a_schema_dump_is_not_compared_but_the_rest_is(self):
        text = ("JSON does not validate: 'x' is too long  Failed validating "
                "'maxLength' in schema['properties']['name']:     %s  On "
                "instance['name']:     'x'")
        ref = compare.normalise_detail(text % "{'maxLength': 1}")
        res = compare.normalise_detail(text % "{'type': 'string'}")
        self.assertEqual(ref, res)
        other = compare.normalise_detail(
            (text % '{}').replace('maxLength', 'pattern'))
        self.assertNotEqual(ref, other)

    def test_suffixes_placement_lists_from_a_set_compare_as_sets(self):
        bad = ('Resourceless suffixed group request should be specified in '
               '`same_subtree` query param: bad group(s) - %s.')
        self.assertEqual(compare.normalise_detail(bad % "['_Z', '', '_A']"),
                         compare.normalise_detail(bad % "['', '_A', '_Z']"))
        self.assertNotEqual(compare.normalise_detail(bad % "['_Z', '_A']"),
                            compare.normalise_detail(bad % "['_A']"))
        unknown = ('Real suffixes should be specified in `same_subtree`: %s '
                   'not found in %s.')
        self.assertEqual(
            compare.normalise_detail(unknown % ("['_Q', '_A']", "['_B']")),
            compare.normalise_detail(unknown % ("['_A', '_Q']", "['_B']")))
        # The groups of the request are listed in its order.
        self.assertNotEqual(
            compare.normalise_detail(unknown % ("['_Q']", "['_A', '_B']")),
            compare.normalise_detail(unknown % ("['_Q']", "['_B', '_A']")))

    def test_unordered_lists_compare_as_sets_others_in_order(self):
        names = compare.UuidNames(set())
        ref = compare.normalise(answer(200, {
            'allocation_requests': [1, 2], 'aggregates': [1, 2]}), names)
        res = compare.normalise(answer(200, {
            'allocation_requests': [2, 1], 'aggregates': [2, 1]}), names)
        self.assertEqual(['/body/aggregates/0', '/body/aggregates/1'],
                         [d[0] for d in compare.differences(ref, res)])

    def test_resource_classes_compare_as_sets(self):
        # On PostgreSQL placement lists a renamed class last.
        one = {'resource_classes': [{'name': 'CUSTOM_B'},
                                    {'name': 'CUSTOM_A'}]}
        two = {'resource_classes': [{'name': 'CUSTOM_A'},
                                    {'name': 'CUSTOM_B'}]}
        names = compare.UuidNames(set())
        self.assertEqual([], compare.differences(
            compare.normalise(answer(200, one), names),
            compare.normalise(answer(200, two), names)))
        three = {'resource_classes': [{'name': 'CUSTOM_A'}]}
        self.assertTrue(compare.differences(
            compare.normalise(answer(200, one), names),
            compare.normalise(answer(200, three), names)))

    def test_unordered_lists_name_made_uuids_whatever_the_order(self):
        one = {'resource_providers': [
            {'name': 'a', 'root_provider_uuid': MADE_A},
            {'name': 'b', 'root_provider_uuid': MADE_B}]}
        two = {'resource_providers': list(reversed(
            one['resource_providers']))}
        ref = compare.normalise(answer(200, one), compare.UuidNames(set()))
        res = compare.normalise(answer(200, two), compare.UuidNames(set()))
        self.assertEqual([], compare.differences(ref, res))

    def test_mappings_compare_as_sets(self):
        names = compare.UuidNames({KNOWN, MADE_A})
        ref = compare.normalise(answer(200, {'mappings': {
            '': [KNOWN, MADE_A]}}), names)
        res = compare.normalise(answer(200, {'mappings': {
            '': [MADE_A, KNOWN]}}), names)
        self.assertEqual([], compare.differences(ref, res))

    def test_last_modified_counts_by_presence(self):
        names = compare.UuidNames(set())
        ref = compare.normalise(answer(
            200, {}, **{'Last-Modified': 'Fri, 27 Nov 2026 00:00:00 GMT'}),
            names)
        res = compare.normalise(answer(
            200, {}, **{'Last-Modified': 'Sat, 28 Nov 2026 00:00:00 GMT'}),
            names)
        self.assertEqual([], compare.differences(ref, res))
        res = compare.normalise(answer(200, {}), names)
        self.assertEqual([('/headers/last-modified?', True, False)],
                         compare.differences(ref, res))


class TestDifferences(unittest.TestCase):

    def test_missing_members_are_named(self):
        self.assertEqual([('/a', 1, '<absent>'), ('/b', '<absent>', 2)],
                         compare.differences({'a': 1}, {'b': 2}))

    def test_lists_of_other_lengths_differ_whole(self):
        self.assertEqual([('/l', [1], [1, 2])],
                         compare.differences({'l': [1]}, {'l': [1, 2]}))


if __name__ == '__main__':
    unittest.main()
