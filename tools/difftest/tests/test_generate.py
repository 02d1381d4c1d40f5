"""Unit tests of the request sequences: seeded, and of every kind.

    stestr run tools.difftest
"""

import json
import unittest
import urllib.parse

from tools.difftest import generate

SEEDS = range(50000, 50030)


class FakeAnswer:
    """What the sequence reads of an answer.

    A sequence reads generations and lists from the reference's answers;
    these make it go on as against a cloud without providers, where
    every class is created and a provider's inventories are of VCPU.
    """

    status = 404

    def __init__(self, req):
        self._data = {}
        if req['path'].endswith('/inventories') and req['method'] == 'GET':
            self.status = 200
            self._data = {'inventories': {'VCPU': {'total': 1}}}
        elif (req['path'].startswith('/resource_classes')
              and req['method'] in ('PUT', 'POST')):
            self.status = 201

    def json(self):
        return self._data


def requests(seed, length=80, forest=False):
    """Every request of the sequence of ``seed``, answered by FakeAnswer."""
    seq = generate.Sequence(seed, length, forest=forest)
    steps = seq.steps()
    found = [next(steps)]
    while True:
        try:
            found.append(steps.send(FakeAnswer(found[-1])))
        except StopIteration:
            return found


def query(req):
    """[(name, value)] of a request's query string, decoded."""
    return urllib.parse.parse_qsl(req['path'].partition('?')[2],
                                  keep_blank_values=True)


def every_request():
    for seed in SEEDS:
        yield from requests(seed)
        yield from requests(seed, forest=True)


class TestSequences(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.all = list(every_request())

    def some(self, test):
        return [req for req in self.all if test(req)]

    def test_a_seed_gives_one_sequence(self):
        self.assertEqual(requests(50000), requests(50000))
        self.assertNotEqual(requests(50000), requests(50001))

    def test_same_subtree_suffixes_with_white_space(self):
        def spaced(req):
            return any(name == 'same_subtree' and any(
                part != part.strip() for part in value.split(','))
                for name, value in query(req))
        self.assertTrue(self.some(spaced))

    def test_same_subtree_suffixes_of_no_group_in_several_values(self):
        def unknown(req):
            values = [value for name, value in query(req)
                      if name == 'same_subtree']
            return len(values) > 1 and sum('_NOPE' in v for v in values) > 1
        self.assertTrue(self.some(unknown))

    def test_uuids_amid_white_space(self):
        def spaced(req):
            return any(name in ('member_of', 'in_tree')
                       and value != value.strip()
                       for name, value in query(req))
        found = self.some(spaced)
        self.assertTrue([r for r in found
                         if r['path'].startswith('/allocation_candidates')])
        self.assertTrue([r for r in found
                         if r['path'].startswith('/resource_providers')])

    def test_groups_without_resources_the_unsuffixed_one_too(self):
        def unsuffixed_orphan(req):
            names = {name for name, _ in query(req)}
            return (req['path'].startswith('/allocation_candidates?')
                    and 'resources' not in names
                    and names & {'required', 'member_of', 'in_tree'}
                    and any(n.startswith('resources') for n in names))

        def no_resources_at_all(req):
            names = {name for name, _ in query(req)}
            return (req['path'].startswith('/allocation_candidates?')
                    and not any(n.startswith('resources') for n in names)
                    and any(n.startswith(('required', 'member_of'))
                            for n in names))
        self.assertTrue(self.some(unsuffixed_orphan))
        self.assertTrue(self.some(no_resources_at_all))

    def test_writes_without_a_body_or_a_type(self):
        def careless(req):
            return (req['method'] in ('PUT', 'POST')
                    and (req.get('body') is None
                         or req['headers'].get('Content-Type') is None))
        found = self.some(careless)
        self.assertTrue([req for req in found if req.get('body') is None
                         and req['headers'].get('Content-Type') is None])
        self.assertTrue([req for req in found if req.get('body')
                         and req['headers'].get('Content-Type') is None])

    def test_bodies_that_are_not_json_with_an_odd_accept(self):
        def odd(req):
            accept = req['headers'].get('Accept')
            content_type = req['headers'].get('Content-Type')
            return (accept in generate.ODD_ACCEPTS and req.get('body')
                    and content_type != 'application/json')
        self.assertTrue(self.some(odd))
        self.assertTrue(self.some(
            lambda req: req['method'] == 'GET'
            and req['headers'].get('Accept') in generate.ODD_ACCEPTS))

    def test_a_class_renamed_onto_another_name(self):
        def rename(req):
            if req['method'] != 'PUT' or not req['path'].startswith(
                    '/resource_classes/') or req.get('body') is None:
                return False
            try:
                body = json.loads(req['body'])
            except ValueError:
                return False
            return (isinstance(body, dict) and req['version'] in
                    ['1.%d' % n for n in range(2, 7)]
                    and body.get('name') != req['path'].split('/')[2])
        self.assertTrue(self.some(rename))

    def test_an_inventory_posted_twice(self):
        def duplicate(pair):
            first, second = pair
            return (first['method'] == 'GET'
                    and first['path'].endswith('/inventories')
                    and second['method'] == 'POST'
                    and second['path'] == first['path']
                    and json.loads(second['body']).get(
                        'resource_class') == 'VCPU')
        self.assertTrue([pair for pair in zip(self.all, self.all[1:])
                         if duplicate(pair)])


if __name__ == '__main__':
    unittest.main()
