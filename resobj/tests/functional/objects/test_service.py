"""The Service objects over a real database, on every backend."""

from resobj import exception
from resobj import objects
from resobj.objects import service as service_obj
from resobj.tests.functional import db_base

objects.register_all()


class TestServiceObject(db_base.DBTestCase):

    def _make(self, **kw):
        values = {'host': 'host1', 'binary': 'resobj-compute',
                  'topic': 'compute'}
        values.update(kw)
        service = objects.Service(self.context, **values)
        service.create()
        return service

    def test_create_sets_db_values_and_resets_changes(self):
        service = self._make()
        self.assertIsInstance(service.id, int)
        self.assertEqual(service_obj.SERVICE_VERSION, service.version)
        self.assertFalse(service.deleted)
        self.assertEqual(set(), service.obj_what_changed())
        self.assertIsNotNone(service.created_at.tzinfo)

    def test_create_twice_is_refused(self):
        service = self._make()
        self.assertRaises(exception.ObjectActionError, service.create)

    def test_duplicate_raises_service_exists(self):
        self._make()
        self.assertRaises(exception.ServiceExists, self._make, topic='x')

    def test_get_by_each_key(self):
        service = self._make()
        for found in (
                objects.Service.get_by_id(self.context, service.id),
                objects.Service.get_by_uuid(self.context, service.uuid),
                objects.Service.get_by_host_and_binary(
                    self.context, 'host1', 'resobj-compute')):
            self.assertEqual(service.obj_to_primitive(),
                             found.obj_to_primitive())

    def test_save_writes_only_changes(self):
        service = self._make()
        other = objects.Service.get_by_id(self.context, service.id)
        other.report_count = 3
        other.save()
        service.disabled = True
        service.disabled_reason = 'drain'
        service.save()
        fresh = objects.Service.get_by_id(self.context, service.id)
        # Both saves landed: the second did not overwrite the first's
        # report_count with its stale copy.
        self.assertEqual(3, fresh.report_count)
        self.assertTrue(fresh.disabled)
        self.assertEqual('drain', fresh.disabled_reason)
        self.assertEqual(set(), service.obj_what_changed())

    def test_destroy(self):
        service = self._make()
        service.destroy()
        self.assertTrue(service.deleted)
        self.assertIsNotNone(service.deleted_at)
        self.assertEqual(set(), service.obj_what_changed())
        self.assertRaises(exception.ServiceNotFound,
                          objects.Service.get_by_id, self.context, service.id)
        # The key is free again.
        self._make()

    def test_list_queries(self):
        self._make(host='a')
        self._make(host='b', disabled=True)
        self._make(host='a', binary='resobj-api', topic='api')
        self.assertEqual(3, len(objects.ServiceList.get_all(self.context)))
        computes = objects.ServiceList.get_by_binary(
            self.context, 'resobj-compute', include_disabled=False)
        self.assertEqual(['a'], [s.host for s in computes])
        self.assertIsInstance(computes[0], objects.Service)

    def test_minimum_version(self):
        self._make(host='a', version=1)
        self._make(host='b', version=1, binary='resobj-api', topic='api')
        self.assertEqual(1, objects.Service.get_minimum_version(
            self.context, ['resobj-compute', 'resobj-api']))
        self.assertEqual(1, objects.Service.get_minimum_version(
            self.context, 'resobj-compute'))
        # A binary with no live service keeps any gate closed.
        self.assertEqual(0, objects.Service.get_minimum_version(
            self.context, ['resobj-compute', 'resobj-scheduler']))
