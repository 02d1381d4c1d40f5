"""The services DB API on every backend."""

import datetime

import sqlalchemy as sa

from resobj.db.api import service as service_db
from resobj.db import facade
from resobj.db.models import base as models_base
from resobj import exception
from resobj.tests.functional import db_base


class TestServiceDB(db_base.DBTestCase):

    def _create(self, **values):
        base = {'host': 'host1', 'binary': 'resobj-compute',
                'topic': 'compute'}
        base.update(values)
        return service_db.create(self.context, base)

    def test_create_fills_defaults(self):
        row = self._create()
        self.assertIsInstance(row['id'], int)
        self.assertEqual(36, len(row['uuid']))
        self.assertIsNotNone(row['created_at'])
        self.assertIsNone(row['updated_at'])
        self.assertEqual(0, row['deleted'])
        self.assertEqual(0, row['report_count'])
        self.assertFalse(row['disabled'])
        self.assertFalse(row['forced_down'])

    def test_duplicate_host_and_binary_is_refused(self):
        self._create(topic='a')
        exc = self.assertRaises(exception.ServiceExists, self._create,
                                topic='b')
        self.assertEqual('host1', exc.kwargs['host'])

    def test_soft_delete_sets_deleted_to_id_and_frees_the_key(self):
        first = self._create()
        service_db.destroy(self.context, first['id'])
        second = self._create()
        service_db.destroy(self.context, second['id'])
        third = self._create()

        every = self.context.elevated(read_deleted='yes')
        rows = service_db.get_all(every)
        self.assertEqual([first['id'], second['id'], third['id']],
                         [r['id'] for r in rows])
        self.assertEqual([first['id'], second['id'], 0],
                         [r['deleted'] for r in rows])
        self.assertIsNotNone(rows[0]['deleted_at'])
        self.assertIsNone(rows[2]['deleted_at'])

    def test_read_deleted_modes(self):
        gone = self._create(host='gone')
        kept = self._create(host='kept')
        service_db.destroy(self.context, gone['id'])

        def ids(read_deleted):
            ctx = self.context.elevated(read_deleted=read_deleted)
            return [r['id'] for r in service_db.get_all(ctx)]

        self.assertEqual([kept['id']], ids('no'))
        self.assertEqual([gone['id']], ids('only'))
        self.assertEqual([gone['id'], kept['id']], ids('yes'))
        self.assertRaises(exception.ServiceNotFound, service_db.get,
                          self.context, gone['id'])

    def test_lookups(self):
        row = self._create()
        self.assertEqual(row, service_db.get(self.context, row['id']))
        self.assertEqual(row, service_db.get_by_uuid(self.context,
                                                     row['uuid']))
        self.assertEqual(row, service_db.get_by_host_and_binary(
            self.context, 'host1', 'resobj-compute'))

    def test_not_found_names_the_key(self):
        exc = self.assertRaises(
            exception.ServiceNotFound, service_db.get_by_host_and_binary,
            self.context, 'nohost', 'nobin')
        self.assertIn('nohost/nobin', str(exc))
        exc = self.assertRaises(exception.ServiceNotFound, service_db.get,
                                self.context, 4242)
        self.assertIn('id=4242', str(exc))

    def test_update(self):
        row = self._create()
        updated = service_db.update(self.context, row['id'],
                                    {'disabled': True,
                                     'disabled_reason': 'maintenance',
                                     'report_count': 7})
        self.assertTrue(updated['disabled'])
        self.assertEqual('maintenance', updated['disabled_reason'])
        self.assertEqual(7, updated['report_count'])
        self.assertIsNotNone(updated['updated_at'])

    def test_update_of_deleted_or_missing_row_is_not_found(self):
        row = self._create()
        service_db.destroy(self.context, row['id'])
        self.assertRaises(exception.ServiceNotFound, service_db.update,
                          self.context, row['id'], {'report_count': 1})
        self.assertRaises(exception.ServiceNotFound, service_db.destroy,
                          self.context, row['id'])

    def test_update_into_a_duplicate_is_refused(self):
        self._create(host='a', topic='a')
        b = self._create(host='b', topic='b')
        self.assertRaises(exception.ServiceExists, service_db.update,
                          self.context, b['id'], {'host': 'a'})
        self.assertEqual('b', service_db.get(self.context, b['id'])['host'])

    def test_get_all_filters(self):
        self._create(host='a', binary='resobj-compute')
        self._create(host='b', binary='resobj-compute', disabled=True)
        self._create(host='a', binary='resobj-api', topic='api')
        self.assertEqual(3, len(service_db.get_all(self.context)))
        self.assertEqual(['a', 'b'], [r['host'] for r in service_db.get_all(
            self.context, binary='resobj-compute')])
        self.assertEqual(['a'], [r['host'] for r in service_db.get_all(
            self.context, binary='resobj-compute', include_disabled=False)])

    def test_minimum_version_ignores_forced_down_and_deleted(self):
        self._create(host='a', version=5)
        self._create(host='b', version=3, forced_down=True)
        gone = self._create(host='c', version=1)
        service_db.destroy(self.context, gone['id'])
        self._create(host='a', binary='resobj-api', topic='api', version=4)
        self.assertEqual(
            {'resobj-compute': 5, 'resobj-api': 4, 'resobj-other': 0},
            service_db.get_minimum_version(
                self.context,
                ['resobj-compute', 'resobj-api', 'resobj-other']))

    def test_minimum_version_leaves_out_services_not_seen_for_down_time(
            self):
        now = models_base.utcnow()
        self._create(host='new', version=2, last_seen_up=now)
        self._create(host='dead', version=1,
                     last_seen_up=now - datetime.timedelta(seconds=61))

        def minimum(**kw):
            return service_db.get_minimum_version(
                self.context, ['resobj-compute'], **kw)['resobj-compute']

        self.assertEqual(2, minimum(down_time=60))
        # Without a cutoff, and with a longer one, it still counts.
        self.assertEqual(1, minimum())
        self.assertEqual(1, minimum(down_time=120))

    def test_minimum_version_counts_live_and_never_reported_services(self):
        now = models_base.utcnow()
        self._create(host='new', version=2, last_seen_up=now)
        live = self._create(host='live', version=1,
                            last_seen_up=now - datetime.timedelta(
                                seconds=30))
        self.assertEqual({'resobj-compute': 1}, service_db.get_minimum_version(
            self.context, ['resobj-compute'], down_time=60))
        service_db.destroy(self.context, live['id'])
        # Never reported (code from before services reported): nothing
        # tells it is dead, so it keeps holding the minimum down.
        self._create(host='silent', version=1, last_seen_up=None)
        self.assertEqual({'resobj-compute': 1}, service_db.get_minimum_version(
            self.context, ['resobj-compute'], down_time=60))

    def test_register_creates_then_updates_one_row(self):
        first = service_db.register(self.context, 'h', 'resobj-compute', 1)
        self.assertEqual(1, first['version'])
        self.assertIsNotNone(first['last_seen_up'])
        service_db.update(self.context, first['id'],
                          {'disabled': True, 'forced_down': True,
                           'last_seen_up': datetime.datetime(2020, 1, 1)})
        # Restarted with other code: same row, its version, seen now; the
        # operator's flags stay.
        again = service_db.register(self.context, 'h', 'resobj-compute', 2,
                                    topic='compute')
        self.assertEqual((first['id'], first['uuid']),
                         (again['id'], again['uuid']))
        self.assertEqual((2, 'compute', True, True),
                         (again['version'], again['topic'],
                          again['disabled'], again['forced_down']))
        self.assertGreater(again['last_seen_up'],
                           datetime.datetime(2020, 1, 1))
        self.assertEqual(1, len(service_db.get_all(self.context)))

    def test_register_after_delete_creates_a_new_row(self):
        gone = service_db.register(self.context, 'h', 'resobj-compute', 2)
        service_db.destroy(self.context, gone['id'])
        back = service_db.register(self.context, 'h', 'resobj-compute', 2)
        self.assertNotEqual(gone['id'], back['id'])
        self.assertEqual(0, back['deleted'])

    def test_register_into_another_services_topic_is_refused(self):
        self._create(host='h', binary='resobj-other', topic='compute')
        self.assertRaises(exception.ServiceExists, service_db.register,
                          self.context, 'h', 'resobj-compute', 2,
                          topic='compute')
        self.assertEqual(['resobj-other'], [
            r['binary'] for r in service_db.get_all(self.context)])

    def test_heartbeat_counts_and_stamps(self):
        row = self._create(last_seen_up=datetime.datetime(2020, 1, 1),
                           version=3)
        beat = service_db.heartbeat(self.context, row['id'], 3)
        beat = service_db.heartbeat(self.context, row['id'], 2)
        self.assertEqual(2, beat['report_count'])
        # The reporting code's version, lower after a rollback.
        self.assertEqual(2, beat['version'])
        self.assertGreater(beat['last_seen_up'],
                           datetime.datetime(2020, 1, 1))
        self.assertLessEqual(beat['last_seen_up'], models_base.utcnow())

    def test_heartbeat_of_a_deleted_service_is_not_found(self):
        row = self._create()
        service_db.destroy(self.context, row['id'])
        self.assertRaises(exception.ServiceNotFound, service_db.heartbeat,
                          self.context, row['id'], 3)

    def test_writer_failure_leaves_nothing_behind(self):
        @facade.writer
        def create_two_then_fail(context):
            service_db.create(context, {'host': 'x', 'binary': 'b1'})
            service_db.create(context, {'host': 'x', 'binary': 'b2'})
            raise RuntimeError('fail after two inserts')

        self.assertRaises(RuntimeError, create_two_then_fail, self.context)
        self.assertEqual([], service_db.get_all(self.context))

    def test_duplicate_inside_a_writer_rolls_back_the_whole_change(self):
        @facade.writer
        def create_then_duplicate(context):
            service_db.create(context, {'host': 'x', 'binary': 'b1'})
            service_db.create(context, {'host': 'x', 'binary': 'b1'})

        self.assertRaises(exception.ServiceExists, create_then_duplicate,
                          self.context)
        self.assertEqual([], service_db.get_all(self.context))

    def test_unique_constraint_includes_deleted(self):
        # Direct proof on the schema: the same key may exist once live and
        # any number of times deleted.
        table = sa.Table('services', sa.MetaData(), autoload_with=self.engine)
        names = {tuple(c['column_names']) for c in
                 sa.inspect(self.engine).get_unique_constraints('services')}
        self.assertIn(('host', 'binary', 'deleted'), names)
        self.assertIn(('host', 'topic', 'deleted'), names)
        self.assertIn('deleted', table.c)

    def test_timestamps_keep_microseconds(self):
        seen = datetime.datetime(2026, 11, 21, 5, 6, 7, 123456)
        row = self._create(last_seen_up=seen)
        self.assertEqual(seen, service_db.get(self.context,
                                              row['id'])['last_seen_up'])
