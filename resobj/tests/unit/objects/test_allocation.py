"""Allocation backports and request grouping (no database)."""

from resobj import exception
from resobj import objects
from resobj.objects import allocation as alloc_obj
from resobj.objects import base
from resobj.tests import base as test_base
from resobj.tests.samples import allocation as samples

DATA = 'resobj_object.data'


class TestAllocation(test_base.TestCase):

    def test_backport_drops_consumer_type(self):
        data = samples.allocation().obj_to_primitive(
            target_version='1.0')[DATA]
        self.assertNotIn('consumer_type', data)
        self.assertEqual(4, data['used'])

    def test_list_carries_items_at_its_version(self):
        manifest = base.obj_tree_get_versions('AllocationList')
        manifest['AllocationList'] = '1.0'
        items = samples.allocation_list().obj_to_primitive(
            target_version='1.0', version_manifest=manifest)[DATA]['objects']
        self.assertEqual(['1.0', '1.0'],
                         [i['resobj_object.version'] for i in items])

    def test_requests_group_by_consumer(self):
        allocations = samples.allocation_list()
        requests = alloc_obj._requests(
            allocations.objects, {allocations[0].consumer_uuid: 3}, {})
        self.assertEqual(1, len(requests))
        self.assertEqual(3, requests[0]['generation'])
        self.assertEqual(['VCPU', 'MEMORY_MB'], [
            a['resource_class'] for a in requests[0]['allocations']])

    def test_one_consumer_one_owner(self):
        allocations = samples.allocation_list()
        allocations[1].user_id = 'someone-else'
        self.assertRaises(exception.Invalid, alloc_obj._requests,
                          allocations.objects, None, {})

    def test_emptied_consumers_become_empty_requests(self):
        requests = alloc_obj._requests(
            [], None, {'c1': ('p', 'u')})
        self.assertEqual([{'consumer_uuid': 'c1', 'project_id': 'p',
                           'user_id': 'u', 'allocations': []}], requests)

    def test_registered(self):
        self.assertIs(objects.AllocationList, type(samples.allocation_list()))
