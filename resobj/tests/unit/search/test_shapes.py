"""The requests written with uuids and class names."""

from resobj.search import shapes
from resobj.tests import base


class TestAsReturned(base.TestCase):

    def test_whole_and_combined_requests(self):
        uuids = {1: 'u-b', 2: 'u-a'}
        whole = {'DISK_GB': 5, 'VCPU': 1}
        found = shapes.as_returned(
            [shapes.WholeRequest('', 1),
             shapes.Combination(((1, 10, 1), (2, 20, 5)),
                                (('', (1, 2)),))],
            uuids, {10: 'VCPU', 20: 'DISK_GB'}, whole)
        self.assertEqual([({'u-b': whole}, {'': ['u-b']}),
                          ({'u-a': {'DISK_GB': 5}, 'u-b': {'VCPU': 1}},
                           {'': ['u-b', 'u-a']})], found)
        # Providers in uuid order.
        self.assertEqual(['u-a', 'u-b'], list(found[1][0]))

    def test_used_only_keeps_the_providers_the_requests_use(self):
        found = [({'u-a': {'VCPU': 1}}, {'': ['u-a']})]
        self.assertEqual({'u-a': 1}, shapes.used_only(
            found, {'u-a': 1, 'u-b': 2}))
