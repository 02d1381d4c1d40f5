"""The Service objects over a real database, on every backend."""

import datetime

from oslo_utils import timeutils

from resobj import exception
from resobj import objects
from resobj.objects import service as service_obj
from resobj.tests import fixtures as resobj_fixtures
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


def seconds_ago(seconds):
    return timeutils.utcnow(with_timezone=True) - datetime.timedelta(
        seconds=seconds)


class TestLiveServices(db_base.DBTestCase):
    """Which services hold the minimum version down, and how they say so."""

    def setUp(self):
        super().setUp()
        # objects.configure() sets a process-wide value: put it back.
        self.addCleanup(service_obj.set_service_down_time,
                        service_obj._service_down_time)
        self.conf = self.useFixture(resobj_fixtures.ConfFixture())

    def _compute(self, host, version, last_seen_up):
        service = objects.Service(self.context, host=host,
                                  binary='resobj-compute', version=version,
                                  last_seen_up=last_seen_up)
        service.create()
        return service

    def _minimum(self):
        return objects.Service.get_minimum_version(self.context,
                                                   'resobj-compute')

    def test_a_dead_old_compute_stops_pinning_the_cloud(self):
        self._compute('new', 2, seconds_ago(0))
        # Default service_down_time: 60 seconds.
        self._compute('old', 1, seconds_ago(61))
        self.assertEqual(2, self._minimum())

    def test_a_live_old_compute_keeps_pinning_it(self):
        self._compute('new', 2, seconds_ago(0))
        self._compute('old', 1, seconds_ago(50))
        self.assertEqual(1, self._minimum())

    def test_service_down_time_is_configured(self):
        self._compute('new', 2, seconds_ago(0))
        self._compute('old', 1, seconds_ago(61))
        self.conf.config(service_down_time=120)
        objects.configure(self.conf.conf)
        self.assertEqual(1, self._minimum())
        self.conf.config(service_down_time=30)
        objects.configure(self.conf.conf)
        self.assertEqual(2, self._minimum())

    def test_an_old_compute_that_reports_again_pins_again(self):
        self._compute('new', 2, seconds_ago(0))
        old = self._compute('old', 1, seconds_ago(600))
        self.assertEqual(2, self._minimum())
        # Its report, through a conductor that runs it for that code.
        with service_obj.acting_for(1):
            old.heartbeat()
        self.assertEqual(1, self._minimum())

    def test_register_records_this_codes_version_seen_now(self):
        before = timeutils.utcnow(with_timezone=True)
        service = objects.Service.register(self.context, 'host1',
                                           'resobj-compute')
        self.assertEqual(service_obj.SERVICE_VERSION, service.version)
        self.assertGreaterEqual(service.last_seen_up,
                                before - datetime.timedelta(seconds=1))
        self.assertEqual(set(), service.obj_what_changed())
        self.assertEqual(service.obj_to_primitive(),
                         objects.Service.get_by_compute_host(
                             self.context, 'host1').obj_to_primitive())

    def test_register_upgrades_the_existing_row(self):
        old = self._compute('host1', 1, None)
        self.assertEqual(1, self._minimum())
        service = objects.Service.register(self.context, 'host1',
                                           'resobj-compute')
        self.assertEqual(old.id, service.id)
        self.assertEqual(service_obj.SERVICE_VERSION, self._minimum())

    def test_a_conductor_records_its_callers_version(self):
        # Registration, reports and creation run for a caller of service
        # version 2 (a conductor's acting_for): the rows say 2, not this
        # code's version; outside the block, this code's again.
        with service_obj.acting_for(2):
            service = objects.Service.register(self.context, 'host1',
                                               'resobj-compute')
            other = objects.Service(self.context, host='host2',
                                    binary='resobj-compute')
            other.create()
        self.assertEqual((2, 2), (service.version, other.version))
        self.assertEqual(2, self._minimum())
        service.heartbeat()
        self.assertEqual(service_obj.SERVICE_VERSION, service.version)
        # A node rolled back reports its own version at its next report.
        with service_obj.acting_for(2):
            service.heartbeat()
        self.assertEqual(2, objects.Service.get_by_compute_host(
            self.context, 'host1').version)

    def test_heartbeat(self):
        service = objects.Service.register(self.context, 'host1',
                                           'resobj-compute')
        first = service.last_seen_up
        service.heartbeat()
        self.assertEqual(1, service.report_count)
        self.assertGreaterEqual(service.last_seen_up, first)
        self.assertEqual(set(), service.obj_what_changed())
        service.destroy()
        self.assertRaises(exception.ServiceNotFound, service.heartbeat)
