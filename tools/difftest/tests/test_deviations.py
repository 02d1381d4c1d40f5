"""Unit tests of the named deviations and the left-over consumer replay.

    stestr run tools.difftest
"""

import json
import unittest

from tools.difftest import compare
from tools.difftest import deviations
from tools.difftest import generate

RP_A = 'aaaaaaaa-2222-4333-8444-555555555555'
RP_B = 'bbbbbbbb-2222-4333-8444-555555555555'
C1 = 'c1c1c1c1-2222-4333-8444-555555555555'
C2 = 'c2c2c2c2-2222-4333-8444-555555555555'


def answer(status, body=None, **headers):
    pairs = [(k.replace('_', '-'), v) for k, v in headers.items()]
    raw = b''
    if body is not None:
        raw = json.dumps(body).encode()
        pairs.append(('Content-Type', 'application/json'))
    return compare.normalise(compare.Answer(status, pairs, raw),
                             compare.UuidNames({RP_A, RP_B, C1, C2}))


def page(status, content_type):
    """Placement's error page of ``content_type`` (for an odd Accept)."""
    return compare.normalise(
        compare.Answer(status, [('Content-Type', content_type)],
                       b'<html>%d</html>' % status),
        compare.UuidNames(set()))


def error(status, detail, code='placement.undefined_code'):
    return {'errors': [{'status': status, 'detail': detail, 'code': code,
                        'request_id': 'req-x'}]}


def classify(req, ref, res):
    return deviations.classify(req, ref, res, compare.differences(ref, res))


def sharing_summaries():
    """Provider summaries where RP_A shares its inventory, RP_B does not."""
    return {RP_A: {'traits': ['MISC_SHARES_VIA_AGGREGATE']},
            RP_B: {'traits': []}}


GET = generate.request('GET', '/resource_providers', '1.14')


class TestClassify(unittest.TestCase):

    def test_no_difference_no_deviation(self):
        ref = answer(200, {'a': 1})
        self.assertEqual(({}, []), classify(GET, ref, answer(200, {'a': 1})))

    def test_vary_missing_on_a_reference_error(self):
        ref = answer(404, error(404, 'x'))
        res = answer(404, error(404, 'x'), vary='openstack-api-version')
        known, rest = classify(GET, ref, res)
        self.assertEqual([], rest)
        self.assertEqual([deviations.VARY_ON_ERRORS], list(known))

    def test_vary_missing_on_a_success_is_unexplained(self):
        ref = answer(200, {})
        res = answer(200, {}, vary='openstack-api-version')
        known, rest = classify(GET, ref, res)
        self.assertEqual({}, known)
        self.assertEqual(1, len(rest))

    def test_other_differences_remain_beside_a_documented_one(self):
        ref = answer(404, error(404, 'x'))
        res = answer(404, error(404, 'y'), vary='openstack-api-version')
        known, rest = classify(GET, ref, res)
        self.assertEqual([deviations.VARY_ON_ERRORS], list(known))
        self.assertEqual(['/body/errors/0/detail'], [d[0] for d in rest])

    def test_invalid_inventory_in_another_order(self):
        text = ("Unable to allocate inventory: Inventory for '%s' on "
                "resource provider '%s' invalid.")
        ref = answer(409, error(409, text % ('B, A', RP_A + ', ' + RP_B)))
        res = answer(409, error(409, text % ('A, B', RP_B + ', ' + RP_A)))
        known, rest = classify(GET, ref, res)
        self.assertEqual(([deviations.ALLOCATION_CHECK_ORDER], []),
                         (list(known), rest))

    def test_invalid_inventory_of_other_names_is_unexplained(self):
        text = ("Unable to allocate inventory: Inventory for '%s' on "
                "resource provider '%s' invalid.")
        ref = answer(409, error(409, text % ('A, B', RP_A)))
        res = answer(409, error(409, text % ('A, C', RP_A)))
        self.assertEqual(1, len(classify(GET, ref, res)[1]))

    def test_another_first_pair(self):
        ref = answer(409, error(
            409, "Unable to allocate inventory: Inventory for 'VF' on "
                 "resource provider '%s' invalid." % RP_A))
        res = answer(409, error(
            409, "Unable to allocate inventory: Unable to create "
                 "allocation for 'MEMORY_MB' on resource provider '%s'. "
                 "The requested amount would violate inventory "
                 "constraints." % RP_A))
        known, rest = classify(GET, ref, res)
        self.assertEqual(([deviations.ALLOCATION_CHECK_ORDER], []),
                         (list(known), rest))

    def test_another_status_is_not_an_order(self):
        ref = answer(409, error(
            409, "Unable to allocate inventory: Inventory for 'VF' on "
                 "resource provider '%s' invalid." % RP_A))
        res = answer(400, error(400, 'something else'))
        self.assertEqual({}, classify(GET, ref, res)[0])

    def test_new_aggregates_in_uuid_order(self):
        req = generate.request('GET', '/resource_providers/%s/aggregates'
                               % RP_A, '1.19')
        ref = answer(200, {'aggregates': [RP_B, RP_A]})
        res = answer(200, {'aggregates': [RP_A, RP_B]})
        known, rest = classify(req, ref, res)
        self.assertEqual(([deviations.NEW_AGGREGATES_ORDER], []),
                         (list(known), rest))
        res = answer(200, {'aggregates': [RP_A]})
        self.assertEqual(1, len(classify(req, ref, res)[1]))

    def test_a_write_refused_for_its_accept_is_unexplained(self):
        # Both serve a write whatever its Accept says: a 406 for one is
        # no deviation.
        req = generate.request('PUT', '/traits/CUSTOM_X', '1.6',
                               headers={'Accept': 'text/plain'})
        ref = answer(201)
        res = answer(406, error(406, 'Only application/json is provided'))
        known, rest = classify(req, ref, res)
        self.assertEqual({}, known)
        self.assertIn('/status', [d[0] for d in rest])

    def test_an_error_page_for_an_odd_accept(self):
        req = generate.request('PUT', '/resource_providers/%s' % RP_A,
                               '1.39', raw=b'x', headers={
                                   'Accept': 'text/html',
                                   'Content-Type': 'text/plain'})
        ref = page(415, 'text/html')
        res = answer(415, error(415, 'The request media type text/plain '
                                     'is not supported by this server.'),
                     vary='openstack-api-version')
        known, rest = classify(req, ref, res)
        self.assertEqual([], rest)
        self.assertIn(deviations.ERROR_PAGE, known)
        # Another status is not the page's doing.
        res = answer(406, error(406, 'Only application/json is provided'))
        self.assertIn('/status', [d[0] for d in classify(req, ref, res)[1]])

    def test_two_bangs(self):
        req = generate.request(
            'GET', '/resource_providers?required=!!HW_CPU_X86_AVX', '1.22')
        res = answer(400, error(400, "Invalid trait name '!HW_CPU_X86_AVX' "
                                     "in required=!!HW_CPU_X86_AVX."))
        self.assertEqual(
            [deviations.FORBIDDEN_TWICE],
            list(classify(req, answer(200, {'resource_providers': []}),
                          res)[0]))

    def test_a_newer_route_before_the_content_type(self):
        req = generate.request('PUT', '/resource_providers/%s/aggregates'
                               % RP_A, '1.0', [])
        ref = answer(415, error(415, 'The media type None is not '
                                     'supported'))
        res = answer(404, error(404, 'The resource could not be found.'))
        self.assertEqual([deviations.VERSION_BEFORE_CONTENT_TYPE],
                         list(classify(req, ref, res)[0]))
        res = answer(404, error(404, 'No such provider'))
        self.assertEqual({}, classify(req, ref, res)[0])

    def test_a_newer_route_before_the_accept(self):
        # Placement looks at the Accept of GET .../aggregates before its
        # version; its 406 is a page.
        req = generate.request('GET', '/resource_providers/%s/aggregates'
                               % RP_A, '1.0', headers={'Accept': 'text/html'})
        res = answer(404, error(404, 'The resource could not be found.'))
        self.assertEqual([deviations.VERSION_BEFORE_CONTENT_TYPE],
                         list(classify(req, page(406, 'text/html'), res)[0]))
        # A page of another status is not.
        self.assertNotIn(
            deviations.VERSION_BEFORE_CONTENT_TYPE,
            classify(req, page(400, 'text/html'), res)[0])

    def test_the_pattern_of_a_uuid_member_name(self):
        text = ("JSON does not validate: 'x' does not match any of the "
                "regexes: %s  Failed validating")
        ref = answer(400, error(400, text % "'^[0-9a-fA-F-]{36}$'"))
        res = answer(400, error(400, text % (
            "'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
            "[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'")))
        self.assertEqual([deviations.UUID_KEY_PATTERN],
                         list(classify(GET, ref, res)[0]))
        other = answer(400, error(400, text % "'^[A-Z]+$'"))
        self.assertEqual({}, classify(GET, ref, other)[0])

    def test_an_empty_provider_name(self):
        req = generate.request('PUT', '/resource_providers/%s' % RP_A,
                               '1.22', {'name': ''})
        res = answer(400, error(400, "JSON does not validate: '' should "
                                     "be non-empty  Failed validating"))
        self.assertEqual([deviations.EMPTY_PROVIDER_NAME],
                         list(classify(req, answer(200, {'name': ''}),
                                       res)[0]))
        req = generate.request('PUT', '/resource_providers/%s' % RP_A,
                               '1.22', {'name': 'x'})
        self.assertEqual({}, classify(req, answer(200, {'name': ''}),
                                      res)[0])

    def test_limited_candidates_of_another_order(self):
        req = generate.request('GET', '/allocation_candidates?resources='
                               'VCPU:1&limit=1', '1.39')
        ref = answer(200, {'allocation_requests': [{'allocations': {
            RP_A: {}}}], 'provider_summaries': {RP_A: {}}})
        res = answer(200, {'allocation_requests': [{'allocations': {
            RP_B: {}}}], 'provider_summaries': {RP_B: {}}})
        self.assertEqual([deviations.LIMITED_CANDIDATES],
                         list(classify(req, ref, res)[0]))
        # Without a limit, or with fewer candidates, it is unexplained.
        req = generate.request('GET', '/allocation_candidates?resources='
                               'VCPU:1', '1.39')
        self.assertEqual({}, classify(req, ref, res)[0])
        req = generate.request('GET', '/allocation_candidates?resources='
                               'VCPU:1&limit=2', '1.39')
        res = answer(200, {'allocation_requests': [],
                           'provider_summaries': {}})
        self.assertEqual({}, classify(req, ref, res)[0])

    def test_reference_amounts_above_the_request(self):
        req = generate.request(
            'GET', '/allocation_candidates?resources=MEMORY_MB:1,VCPU:2'
            '&resources1=MEMORY_MB:1&group_policy=isolate', '1.38')
        mappings = {'': [RP_A, RP_B], '1': [RP_A]}

        def candidates(a_memory, b_memory):
            allocations = {
                RP_A: {'resources': {'VCPU': 2, 'MEMORY_MB': a_memory}},
                RP_B: {'resources': {'MEMORY_MB': b_memory}}}
            return {'allocation_requests': [{'mappings': mappings,
                                             'allocations': allocations}],
                    'provider_summaries': {}}

        # Placement 16.0.0 answered 3 where the groups ask 1 + 1.
        ref = answer(200, candidates(1, 3))
        res = answer(200, candidates(1, 1))
        self.assertEqual([deviations.REFERENCE_AMOUNTS],
                         list(classify(req, ref, res)[0]))
        # Not when resobj's amounts are not the request's either, nor
        # when the mappings differ, nor when placement's are right.
        self.assertEqual({}, classify(req, ref, answer(
            200, candidates(2, 1)))[0])
        other = candidates(1, 1)
        other['allocation_requests'][0]['mappings'] = {'': [RP_A],
                                                       '1': [RP_B]}
        self.assertEqual({}, classify(req, ref, answer(200, other))[0])
        self.assertEqual({}, classify(req, answer(200, candidates(2, 0)),
                                      res)[0])

    def test_candidates_before_1_12_are_lists(self):
        # Before 1.12 a candidate's allocations are a list; the answers
        # differ (other candidates) and must be compared, not crash.
        req = generate.request('GET', '/allocation_candidates?resources='
                               'VCPU:1', '1.10')

        def listed(rp):
            return {'allocation_requests': [{'allocations': [
                {'resource_provider': {'uuid': rp},
                 'resources': {'VCPU': 1}}]}], 'provider_summaries': {}}
        self.assertEqual({}, classify(req, answer(200, listed(RP_A)),
                                      answer(200, listed(RP_B)))[0])
        self.assertEqual({RP_A: {'VCPU': 1}}, deviations._allocation_parts(
            listed(RP_A)['allocation_requests'][0]))

    def test_allocations_listed_in_another_order_before_1_12(self):
        req = generate.request('GET', '/allocation_candidates?resources='
                               'VCPU:1,DISK_GB:1', '1.11')

        def listed(*parts):
            return {'allocation_requests': [{'allocations': [
                {'resource_provider': {'uuid': rp}, 'resources': {rc: 1}}
                for rp, rc in parts]}], 'provider_summaries': {}}
        # Placement: the provider of VCPU first; resobj: by uuid.
        ref = answer(200, listed((RP_B, 'VCPU'), (RP_A, 'DISK_GB')))
        res = answer(200, listed((RP_A, 'DISK_GB'), (RP_B, 'VCPU')))
        self.assertEqual([deviations.LISTED_ALLOCATIONS_ORDER],
                         list(classify(req, ref, res)[0]))
        # Other amounts or providers are differences.
        self.assertEqual({}, classify(req, ref, answer(200, listed(
            (RP_A, 'VCPU'), (RP_B, 'DISK_GB'))))[0])

    def test_a_reshape_meets_another_inventory_in_use_first(self):
        req = generate.request('POST', '/reshaper', '1.34', body={})
        detail = ("There was a conflict when trying to complete your "
                  "request.\n\n update conflict: Inventory for '%s' on "
                  "resource provider '%s' in use.")
        ref = answer(409, {'errors': [{
            'status': 409, 'code': 'placement.undefined_code',
            'detail': detail % ('VCPU, IPV4_ADDRESS', RP_A)}]})
        res = answer(409, {'errors': [{
            'status': 409, 'code': 'placement.undefined_code',
            'detail': detail % ('MEMORY_MB', RP_B)}]})
        self.assertEqual([deviations.ALLOCATION_CHECK_ORDER],
                         list(classify(req, ref, res)[0]))

    def test_reference_amounts_above_and_fewer_candidates(self):
        req = generate.request(
            'GET', '/allocation_candidates?resources=DISK_GB:4'
            '&resources1=DISK_GB:1&group_policy=none', '1.39')
        summaries = sharing_summaries()

        def candidate(spread, granular, spread_amount=4):
            allocations = {spread: {'resources': {'DISK_GB': spread_amount}},
                           granular: {'resources': {'DISK_GB': 1}}}
            return {'allocations': allocations,
                    'mappings': {'': [spread], '1': [granular]}}

        # Placement's one candidate allocates 6 where 4 + 1 are asked.
        ref = answer(200, {'allocation_requests': [candidate(RP_B, RP_A, 5)],
                           'provider_summaries': summaries})
        # resobj's: the same providers, and the unsuffixed group on the
        # sharing provider.
        res = answer(200, {'allocation_requests': [
            candidate(RP_B, RP_A), candidate(RP_A, RP_B)],
            'provider_summaries': summaries})
        self.assertEqual([deviations.REFERENCE_AMOUNTS],
                         list(classify(req, ref, res)[0]))
        # Placement's candidate on providers none of resobj's uses:
        # unexplained.
        res = answer(200, {'allocation_requests': [
            candidate(RP_A, C1), candidate(C1, RP_A)],
            'provider_summaries': summaries})
        self.assertEqual({}, classify(req, ref, res)[0])

    def test_reference_drops_what_its_sums_overfill(self):
        req = generate.request(
            'GET', '/allocation_candidates?resources=MEMORY_MB:4'
            '&resources1=MEMORY_MB:1&group_policy=isolate', '1.39')
        summaries = {RP_A: {'resources': {'MEMORY_MB': {
            'capacity': 4, 'used': 0}}, 'traits': []},
            RP_B: {'resources': {'MEMORY_MB': {'capacity': 8, 'used': 0}},
                   'traits': []}}
        found = {'allocation_requests': [{
            'allocations': {RP_A: {'resources': {'MEMORY_MB': 4}},
                            RP_B: {'resources': {'MEMORY_MB': 1}}},
            'mappings': {'': [RP_A], '1': [RP_B]}}],
            'provider_summaries': summaries}
        # Placement would put 4 + 1 on RP_A, which has room for 4: it
        # lists nothing.
        nothing = answer(200, {'allocation_requests': [],
                               'provider_summaries': {}})
        self.assertEqual([deviations.REFERENCE_AMOUNTS],
                         list(classify(req, nothing, answer(200, found))[0]))
        # With room for 5 on RP_A it would have listed it: unexplained.
        summaries[RP_A]['resources']['MEMORY_MB']['capacity'] = 5
        self.assertEqual({}, classify(req, nothing, answer(200, found))[0])

    def test_repeated_resources_are_their_last_value(self):
        req = generate.request(
            'GET', '/allocation_candidates?resources=VCPU:4'
            '&resources1=VCPU:1&group_policy=isolate&resources1=VCPU:1',
            '1.31')

        def candidates(a_vcpu, b_vcpu):
            return {'allocation_requests': [{'allocations': {
                RP_A: {'resources': {'VCPU': a_vcpu}},
                RP_B: {'resources': {'VCPU': b_vcpu}}}}],
                'provider_summaries': {}}

        # 4 + 1 asked; placement added the second group's 1 twice.
        self.assertEqual([deviations.REFERENCE_AMOUNTS], list(classify(
            req, answer(200, candidates(4, 2)),
            answer(200, candidates(4, 1)))[0]))

    def test_a_shared_spread_group_combined_in_one_tree(self):
        req = generate.request(
            'GET', '/allocation_candidates?resources=VCPU:2'
            '&resources1=VCPU:1&group_policy=none', '1.39')
        summaries = sharing_summaries()

        def candidate(spread, granular):
            allocations = {spread: {'resources': {'VCPU': 2}}}
            allocations.setdefault(granular, {'resources': {}})
            allocations[granular]['resources']['VCPU'] = \
                allocations[granular]['resources'].get('VCPU', 0) + 1
            return {'allocations': allocations,
                    'mappings': {'': [spread], '1': [granular]}}

        both = [candidate(RP_B, RP_A), candidate(RP_A, RP_A)]
        extra = candidate(RP_A, RP_B)
        ref = answer(200, {'allocation_requests': both,
                           'provider_summaries': summaries})
        res = answer(200, {'allocation_requests': both + [extra],
                           'provider_summaries': summaries})
        self.assertEqual([deviations.SHARED_SPREAD_ONE_TREE],
                         list(classify(req, ref, res)[0]))
        # The unsuffixed group on a provider that does not share: no.
        res = answer(200, {'allocation_requests': both + [
            candidate(RP_B, RP_B)], 'provider_summaries': summaries})
        self.assertEqual({}, classify(req, ref, res)[0])
        # Placement with one resobj lacks: no.
        self.assertEqual({}, classify(req, answer(200, {
            'allocation_requests': both + [extra, candidate(RP_B, RP_B)],
            'provider_summaries': summaries}), answer(200, {
                'allocation_requests': both + [extra],
                'provider_summaries': summaries}))[0])
        # A resourceless group combines with it as well.
        resourceless = generate.request(
            'GET', '/allocation_candidates?resources=VCPU:2'
            '&required_T=HW_CPU_X86_SSE&same_subtree=_T&group_policy=none',
            '1.39')

        def mapped(spread, other):
            return {'allocations': {spread: {'resources': {'VCPU': 2}}},
                    'mappings': {'': [spread], '_T': [other]}}
        self.assertEqual([deviations.SHARED_SPREAD_ONE_TREE], list(classify(
            resourceless, answer(200, {
                'allocation_requests': [mapped(RP_A, RP_A)],
                'provider_summaries': summaries}),
            answer(200, {'allocation_requests': [mapped(RP_A, RP_A),
                                                 mapped(RP_A, RP_B)],
                         'provider_summaries': summaries}))[0]))
        # Without a granular group there is nothing to combine.
        single = generate.request(
            'GET', '/allocation_candidates?resources=VCPU:2', '1.39')
        self.assertEqual({}, classify(single, ref, answer(200, {
            'allocation_requests': both + [extra],
            'provider_summaries': summaries}))[0])

    def test_negative_allocation_ratio_in_other_words(self):
        path = '/resource_providers/%s/inventories/MEMORY_MB' % RP_A
        req = generate.request('PUT', path, '1.10', {
            'total': 1, 'allocation_ratio': -1,
            'resource_provider_generation': 0})
        ref = answer(400, error(400, "Invalid inventory for 'MEMORY_MB'. "
                                     'The reserved value is greater than '
                                     'or equal to total.'))
        res = answer(400, error(400, 'JSON does not validate: -1 is less '
                                     'than the minimum of 0 On instance['
                                     "'allocation_ratio']"))
        self.assertEqual([deviations.NEGATIVE_RATIO],
                         list(classify(req, ref, res)[0]))
        # A ratio of 0 or above is no such case.
        req = generate.request('PUT', path, '1.10', {
            'total': 1, 'allocation_ratio': 0,
            'resource_provider_generation': 0})
        self.assertEqual({}, classify(req, ref, res)[0])

    def test_duplicate_inventory_on_postgresql(self):
        ref = answer(409, error(409, 'Update conflict: (psycopg2.errors.'
                                     'UniqueViolation) duplicate key'))
        res = answer(409, error(409, 'Resource provider %s already has '
                                     'inventory of DISK_GB.' % RP_A))
        self.assertEqual([deviations.DUPLICATE_INVENTORY],
                         list(classify(GET, ref, res)[0]))

    def test_last_modified_only_on_resobj(self):
        req = generate.request('PUT', '/resource_providers/%s' % RP_A,
                               '1.20', {'name': 'x'})
        ref = answer(200, {'name': 'x'})
        res = answer(200, {'name': 'x'}, last_modified='Fri')
        self.assertEqual(([deviations.LAST_MODIFIED], []),
                         tuple(map(list, classify(req, ref, res))))
        # Only resobj's may be the one with it.
        self.assertEqual(1, len(classify(req, res, ref)[1]))

    def test_a_reference_500(self):
        ref = answer(500, error(500, 'boom'))
        res = answer(400, error(400, 'bad'))
        known, rest = classify(GET, ref, res)
        self.assertEqual(([deviations.REFERENCE_500], []),
                         (list(known), rest))


EXPECTED_0 = 'consumer generation conflict - expected 0 but got None'


class TestLeftoverConsumer(unittest.TestCase):

    def post(self, generations):
        body = {uuid: {'allocations': {RP_A: {'resources': {'VCPU': 1}}},
                       'project_id': 'p', 'user_id': 'u',
                       'consumer_generation': gen}
                for uuid, gen in generations}
        return generate.request('POST', '/allocations', '1.28', body)

    def test_a_null_generation_placement_refuses(self):
        req = self.post([(C1, None), (C2, None)])
        ref = answer(409, error(409, EXPECTED_0,
                                'placement.concurrent_update'))
        self.assertTrue(deviations.is_expected_0(ref))
        self.assertEqual('reference', deviations.leftover_consumer_replay(
            req, ref, answer(204)))
        self.assertEqual([C1, C2], deviations.generations(req, None))
        again = deviations.with_generations(req, {C2: 0})
        body = json.loads(again['body'])
        self.assertEqual((None, 0), (body[C1]['consumer_generation'],
                                     body[C2]['consumer_generation']))
        # The request itself is left as it was.
        self.assertIsNone(json.loads(req['body'])[C2]['consumer_generation'])

    def test_a_zero_generation_resobj_refuses(self):
        req = self.post([(C1, 0), (C2, 3)])
        res = answer(409, error(409, 'consumer generation conflict - '
                                     'expected null but got 0'))
        self.assertEqual('resobj', deviations.leftover_consumer_replay(
            req, answer(204), res))
        self.assertEqual([C1], deviations.generations(req, 0))

    def test_a_wrong_generation_for_a_leftover_consumer(self):
        req = self.post([(C1, 5)])
        ref = answer(409, error(409, 'consumer generation conflict - '
                                     'expected 0 but got 5',
                                'placement.concurrent_update'))
        res = answer(409, error(409, 'consumer generation conflict - '
                                     'expected null but got 5',
                                'placement.concurrent_update'))
        self.assertEqual(([deviations.LEFTOVER_CONSUMER], []),
                         tuple(map(list, classify(req, ref, res))))
        other = answer(409, error(409, 'consumer generation conflict - '
                                       'expected 2 but got 5',
                                  'placement.concurrent_update'))
        self.assertEqual(1, len(classify(req, other, res)[1]))

    def test_a_zero_generation_placement_takes_then_fails_on(self):
        req = self.post([(C1, 0)])
        ref = answer(409, error(409, 'Unable to allocate inventory: x'))
        res = answer(409, error(409, 'consumer generation conflict - '
                                     'expected null but got 0'))
        self.assertEqual('resobj', deviations.leftover_consumer_replay(
            req, ref, res))
        # Not when placement refused the generation too.
        ref = answer(409, error(409, 'consumer generation conflict - '
                                     'expected null but got 0'))
        self.assertIsNone(deviations.leftover_consumer_replay(req, ref, res))

    def test_the_same_conflict_on_both_is_no_case(self):
        req = self.post([(C1, None)])
        ref = answer(409, error(409, EXPECTED_0))
        self.assertIsNone(deviations.leftover_consumer_replay(
            req, ref, answer(409, error(409, EXPECTED_0))))

    def test_other_requests_are_no_case(self):
        ref = answer(409, error(409, EXPECTED_0))
        self.assertIsNone(deviations.leftover_consumer_replay(
            GET, ref, answer(200, {})))
        put = generate.request('PUT', '/allocations/%s' % C1, '1.28', {
            'allocations': {}, 'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None})
        self.assertEqual('reference', deviations.leftover_consumer_replay(
            put, ref, answer(204)))
        self.assertEqual([C1], deviations.generations(put, None))
        reshape = generate.request('POST', '/reshaper', '1.30', {
            'inventories': {}, 'allocations': {C2: {
                'allocations': {}, 'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None}}})
        self.assertEqual([C2], deviations.generations(reshape, None))


if __name__ == '__main__':
    unittest.main()
