"""UsageList read through its remotable methods, on every backend."""

from resobj.db.api import resource_class as rc_db
from resobj import exception
from resobj import objects
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

objects.register_all()

VCPU, MEMORY_MB = 0, 1


class TestUsageList(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider(self.context)
        self.uuid = fx.uuid(self.context, self.rp)
        fx.inventory(self.context, self.rp, VCPU, total=64)
        fx.inventory(self.context, self.rp, MEMORY_MB, total=65536)
        self.vm = fx.consumer(self.context, 'proj', 'alice', 'INSTANCE')
        self.other = fx.consumer(self.context, 'proj', 'bob')

    def test_by_provider_lists_unused_classes(self):
        usages = objects.UsageList.get_all_by_resource_provider_uuid(
            self.context, self.uuid)
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0}, usages.as_dict())
        fx.allocate(self.context, (self.rp, self.vm, VCPU, 4))
        usages = objects.UsageList.get_all_by_resource_provider_uuid(
            self.context, self.uuid)
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 0}, usages.as_dict())
        self.assertEqual({'all'}, {u.consumer_type for u in usages})
        self.assertFalse(usages[0].obj_attr_is_set('consumer_count'))
        self.assertEqual(set(), usages.obj_what_changed())

    def test_by_provider_missing(self):
        self.assertRaises(
            exception.ResourceProviderNotFound,
            objects.UsageList.get_all_by_resource_provider_uuid,
            self.context, '00000000-0000-0000-0000-00000000beef')

    def test_by_project_user_and_type(self):
        fx.allocate(self.context, (self.rp, self.vm, VCPU, 4),
                    (self.rp, self.vm, MEMORY_MB, 4096),
                    (self.rp, self.other, VCPU, 1))
        usages = objects.UsageList.get_all_by_project_user(
            self.context, 'proj')
        self.assertEqual(
            [('INSTANCE', 'MEMORY_MB', 4096, 1), ('INSTANCE', 'VCPU', 4, 1),
             ('unknown', 'VCPU', 1, 1)],
            [(u.consumer_type, u.resource_class, u.usage, u.consumer_count)
             for u in usages])
        alice = objects.UsageList.get_all_by_project_user(
            self.context, 'proj', user_id='alice', consumer_type='all')
        self.assertEqual([('all', 'MEMORY_MB', 4096, 1),
                          ('all', 'VCPU', 4, 1)],
                         [(u.consumer_type, u.resource_class, u.usage,
                           u.consumer_count) for u in alice])
