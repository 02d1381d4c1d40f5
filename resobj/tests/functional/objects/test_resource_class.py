"""ResourceClass objects and the per-request cache, on every backend."""

from unittest import mock

import os_resource_classes as orc

from resobj import context as resobj_context
from resobj.db.api import resource_class as rc_db
from resobj import exception
from resobj import objects
from resobj.objects import resource_class
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

objects.register_all()


class ResourceClassTestCase(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)

    def _create(self, name, context=None):
        rc = objects.ResourceClass(context or self.context, name=name)
        rc.create()
        return rc


class TestResourceClass(ResourceClassTestCase):

    def test_custom_classes_get_ids_from_10000(self):
        first = self._create('CUSTOM_GPU')
        second = self._create('CUSTOM_FPGA_X')
        self.assertEqual((10000, 10001), (first.id, second.id))
        self.assertFalse(first.is_standard)
        self.assertEqual(set(), first.obj_what_changed())
        found = objects.ResourceClass.get_by_name(self.context, 'CUSTOM_GPU')
        self.assertEqual(10000, found.id)

    def test_ids_follow_the_highest_even_after_a_delete(self):
        self._create('CUSTOM_A')
        self._create('CUSTOM_B').destroy()
        # max+1 again: 10001 is free and is reused, as placement does.
        self.assertEqual(10001, self._create('CUSTOM_C').id)

    def test_standard_lookup(self):
        vcpu = objects.ResourceClass.get_by_name(self.context, 'VCPU')
        self.assertEqual(0, vcpu.id)
        self.assertTrue(vcpu.is_standard)
        self.assertEqual('DISK_GB', objects.ResourceClass.get_by_id(
            self.context, 2).name)
        self.assertRaises(exception.ResourceClassNotFound,
                          objects.ResourceClass.get_by_name, self.context,
                          'CUSTOM_NOPE')

    def test_duplicate_name(self):
        self._create('CUSTOM_GPU')
        exc = self.assertRaises(exception.ResourceClassExists, self._create,
                                'CUSTOM_GPU')
        self.assertEqual('CUSTOM_GPU', exc.kwargs['name'])
        # Nothing was left behind by the failed attempt.
        self.assertEqual(len(orc.STANDARDS) + 1,
                         len(objects.ResourceClassList.get_all(self.context)))

    def test_invalid_names(self):
        for name in ('VCPU', 'CUSTOM_', 'custom_gpu', 'CUSTOM_gpu',
                     'CUSTOM_GPU-1', 'CUSTOM_GPU\n',
                     'CUSTOM_' + 'A' * 249):
            exc = self.assertRaises(exception.InvalidResourceClassName,
                                    self._create, name)
            self.assertIsInstance(exc, ValueError)
        # 255 characters is the limit, not beyond it.
        self.assertEqual(255, len(self._create('CUSTOM_' + 'A' * 248).name))

    def test_create_twice_is_refused(self):
        rc = self._create('CUSTOM_GPU')
        self.assertRaises(exception.ObjectActionError, rc.create)

    def test_rename_custom(self):
        rc = self._create('CUSTOM_GPU')
        rc.name = 'CUSTOM_GPU_V2'
        rc.save()
        self.assertEqual(10000, objects.ResourceClass.get_by_name(
            self.context, 'CUSTOM_GPU_V2').id)
        self.assertRaises(exception.ResourceClassNotFound,
                          objects.ResourceClass.get_by_name, self.context,
                          'CUSTOM_GPU')

    def test_rename_refusals(self):
        self._create('CUSTOM_A')
        rc = self._create('CUSTOM_B')
        rc.name = 'CUSTOM_A'
        self.assertRaises(exception.ResourceClassExists, rc.save)
        rc.name = 'VCPU2'
        self.assertRaises(exception.InvalidResourceClassName, rc.save)
        self.assertEqual('CUSTOM_B', objects.ResourceClass.get_by_id(
            resobj_context.get_admin_context(), rc.id).name)

    def test_standard_classes_cannot_change(self):
        vcpu = objects.ResourceClass.get_by_name(self.context, 'VCPU')
        vcpu.name = 'CUSTOM_VCPU'
        exc = self.assertRaises(exception.ResourceClassCannotUpdateStandard,
                                vcpu.save)
        self.assertEqual('VCPU', exc.kwargs['name'])
        vcpu = objects.ResourceClass.get_by_name(self.context, 'VCPU')
        self.assertRaises(exception.ResourceClassCannotDeleteStandard,
                          vcpu.destroy)
        self.assertEqual(0, objects.ResourceClass.get_by_name(
            resobj_context.get_admin_context(), 'VCPU').id)

    def test_destroy_unused_custom(self):
        rc = self._create('CUSTOM_GPU')
        rc.destroy()
        self.assertRaises(exception.ResourceClassNotFound,
                          objects.ResourceClass.get_by_name, self.context,
                          'CUSTOM_GPU')
        self.assertRaises(exception.ResourceClassNotFound, rc.destroy)

    def test_destroy_refused_while_an_inventory_uses_it(self):
        rc = self._create('CUSTOM_GPU')
        fx.inventory(self.context, fx.provider(self.context), rc.id,
                     total=8)
        exc = self.assertRaises(exception.ResourceClassInUse, rc.destroy)
        self.assertEqual('CUSTOM_GPU', exc.kwargs['name'])
        self.assertEqual(rc.id, objects.ResourceClass.get_by_name(
            resobj_context.get_admin_context(), 'CUSTOM_GPU').id)

    def test_destroy_refused_while_an_allocation_uses_it(self):
        # No inventory: only the foreign key of the allocation refuses.
        rc = self._create('CUSTOM_GPU')
        provider = fx.provider(self.context)
        project = objects.Project.get_or_create(self.context, 'p')
        user = objects.User.get_or_create(self.context, 'u')
        consumer = objects.Consumer(
            self.context, uuid='0d3f5f0c-2b1c-4d5e-9f8a-7b6c5d4e3f2a',
            project=project, user=user)
        consumer.create()
        fx.allocate(self.context, (provider, consumer.id, rc.id, 1))
        self.assertRaises(exception.ResourceClassInUse, rc.destroy)

    def test_list_has_standard_and_custom_in_id_order(self):
        self._create('CUSTOM_GPU')
        names = [rc.name for rc in
                 objects.ResourceClassList.get_all(self.context)]
        self.assertEqual(list(orc.STANDARDS) + ['CUSTOM_GPU'], names)


class TestCustomIdRace(ResourceClassTestCase):
    """Two creators read the same highest id; both must succeed."""

    def _stale_max(self, taken):
        # The other creator inserts its class after this one read the
        # highest id: the read returns what it would have seen before.
        real = rc_db._max_custom_id

        def stale(context):
            seen = real(context)
            for rc_id in taken:
                context.session.execute(rc_db._TABLE.insert().values(
                    id=rc_id, name='CUSTOM_OTHER_%d' % rc_id))
            return seen
        return mock.patch.object(rc_db, '_max_custom_id', stale)

    def test_next_id_taken_meanwhile(self):
        self._create('CUSTOM_FIRST')
        with self._stale_max([10001]):
            second = self._create('CUSTOM_SECOND')
        self.assertEqual(10002, second.id)
        self.assertEqual(10001, objects.ResourceClass.get_by_name(
            self.context, 'CUSTOM_OTHER_10001').id)

    def test_attempts_are_bounded(self):
        with self._stale_max([10000, 10001]), \
                mock.patch.object(rc_db, 'MAX_ID_ATTEMPTS', 2):
            exc = self.assertRaises(exception.MaxDBRetriesExceeded,
                                    self._create, 'CUSTOM_LOSER')
        self.assertEqual(2, exc.kwargs['attempts'])

    def test_name_taken_meanwhile_is_not_retried(self):
        real = rc_db._max_custom_id

        def racing(context):
            seen = real(context)
            context.session.execute(rc_db._TABLE.insert().values(
                id=10050, name='CUSTOM_SAME'))
            return seen
        with mock.patch.object(rc_db, '_max_custom_id', racing):
            self.assertRaises(exception.ResourceClassExists,
                              self._create, 'CUSTOM_SAME')


class TestLookupCache(ResourceClassTestCase):

    def setUp(self):
        super().setUp()
        self.counter = self.useFixture(resobj_fixtures.StatementCounter(
            self.engine, 'resource_classes'))

    def test_one_query_then_none(self):
        self.assertEqual(0, resource_class.id_from_name(self.context, 'VCPU'))
        self.assertEqual(1, self.counter.count)
        self.assertEqual(2, resource_class.id_from_name(self.context,
                                                        'DISK_GB'))
        self.assertEqual('MEMORY_MB', resource_class.name_from_id(
            self.context, 1))
        self.assertEqual({'VCPU': 0, 'PCPU': orc.STANDARDS.index('PCPU')},
                         resource_class.ids_from_names(self.context,
                                                       ['VCPU', 'PCPU']))
        objects.ResourceClass.get_by_name(self.context, 'VCPU')
        self.assertEqual(1, self.counter.count)

    def test_each_context_has_its_own(self):
        resource_class.id_from_name(self.context, 'VCPU')
        other = resobj_context.get_admin_context()
        resource_class.id_from_name(other, 'VCPU')
        self.assertEqual(2, self.counter.count)
        # elevated() copies stay in the same request.
        resource_class.id_from_name(self.context.elevated(), 'VCPU')
        self.assertEqual(2, self.counter.count)

    def test_miss_reloads_once_then_raises(self):
        resource_class.id_from_name(self.context, 'VCPU')
        self.assertRaises(exception.ResourceClassNotFound,
                          resource_class.id_from_name, self.context,
                          'CUSTOM_NOPE')
        self.assertEqual(2, self.counter.count)
        self.assertRaises(exception.ResourceClassNotFound,
                          resource_class.name_from_id, self.context, 99999)
        self.assertRaises(exception.ResourceClassNotFound,
                          resource_class.ids_from_names, self.context,
                          ['VCPU', 'CUSTOM_NOPE'])
        self.assertEqual(4, self.counter.count)

    def test_class_created_by_another_request_is_found(self):
        resource_class.id_from_name(self.context, 'VCPU')
        self._create('CUSTOM_GPU', context=resobj_context.get_admin_context())
        self.assertEqual(10000, resource_class.id_from_name(self.context,
                                                            'CUSTOM_GPU'))

    def test_writes_clear_it(self):
        resource_class.id_from_name(self.context, 'VCPU')
        rc = self._create('CUSTOM_GPU')
        before = self.counter.count
        self.assertEqual(10000, resource_class.id_from_name(self.context,
                                                            'CUSTOM_GPU'))
        self.assertEqual(before + 1, self.counter.count)
        rc.name = 'CUSTOM_GPU_V2'
        rc.save()
        # Without the clear the old name would still resolve, no query.
        self.assertRaises(exception.ResourceClassNotFound,
                          resource_class.id_from_name, self.context,
                          'CUSTOM_GPU')
        self.assertEqual('CUSTOM_GPU_V2', resource_class.name_from_id(
            self.context, 10000))
        rc.destroy()
        self.assertRaises(exception.ResourceClassNotFound,
                          resource_class.name_from_id, self.context, 10000)

    def test_list_primes_it(self):
        objects.ResourceClassList.get_all(self.context)
        before = self.counter.count
        resource_class.id_from_name(self.context, 'VGPU')
        self.assertEqual(before, self.counter.count)
