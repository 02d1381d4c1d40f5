"""Project, User and Consumer over a real database, on every backend."""

from unittest import mock

from resobj.db.api import consumer as consumer_db
from resobj.db.api import resource_class as rc_db
from resobj.db.models import consumer as models
from resobj import exception
from resobj import objects
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

objects.register_all()

UUID1 = '8f1a6c3e-9d2b-4e7f-a5c1-3b8d0e6f2a94'
UUID2 = 'c2e7b915-4a3d-4f60-8e1b-9d5c7a2f0b36'
UUID3 = '5d9e0a47-b1c8-4e2f-9a63-0f7b4c1d8e25'


class TestProjectUser(db_base.DBTestCase):

    def test_get_or_create_is_idempotent(self):
        for cls, table in ((objects.Project, models.Project.__table__),
                           (objects.User, models.User.__table__)):
            first = cls.get_or_create(self.context, 'ext-1')
            again = cls.get_or_create(self.context, 'ext-1')
            other = cls.get_or_create(self.context, 'ext-2')
            self.assertEqual(first.id, again.id)
            self.assertNotEqual(first.id, other.id)
            self.assertEqual('ext-1', again.external_id)
            self.assertEqual(2, fx.count_rows(self.context, table))
            self.assertEqual(first.id, cls.get_by_external_id(
                self.context, 'ext-1').id)

    def test_not_found(self):
        self.assertRaises(exception.ProjectNotFound,
                          objects.Project.get_by_external_id, self.context,
                          'nope')
        self.assertRaises(exception.UserNotFound,
                          objects.User.get_by_external_id, self.context,
                          'nope')

    def test_invalid_external_ids(self):
        for bad in ('', 'x' * 256, None):
            self.assertRaises(exception.InvalidExternalId,
                              objects.Project.get_or_create, self.context,
                              bad)
            self.assertRaises(exception.InvalidExternalId,
                              objects.User.get_or_create, self.context, bad)
        self.assertEqual(255, len(objects.Project.get_or_create(
            self.context, 'x' * 255).external_id))

    def test_concurrent_creator_wins_the_insert(self):
        # Another request inserts the row after our first read: the
        # insert fails as a duplicate and the row is read back.
        winner = objects.User.get_or_create(self.context, 'racer')
        real = consumer_db._find

        def unlocked_read_misses(context, table, column, value, lock=False):
            return real(context, table, column, value, lock) if lock \
                else None

        with mock.patch.object(consumer_db, '_find', unlocked_read_misses):
            loser = objects.User.get_or_create(self.context, 'racer')
        self.assertEqual(winner.id, loser.id)
        self.assertEqual(1, fx.count_rows(self.context, models.User))


class TestConsumer(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.project = objects.Project.get_or_create(self.context, 'proj')
        self.user = objects.User.get_or_create(self.context, 'user')

    def _create(self, uuid=UUID1, **kw):
        consumer = objects.Consumer(self.context, uuid=uuid,
                                    project=self.project, user=self.user,
                                    **kw)
        consumer.create()
        return consumer

    def _get(self, uuid=UUID1):
        return objects.Consumer.get_by_uuid(self.context, uuid)

    def test_create_and_get(self):
        consumer = self._create(consumer_type='INSTANCE')
        self.assertEqual(0, consumer.generation)
        self.assertEqual(set(), consumer.obj_what_changed())
        found = self._get()
        self.assertEqual(consumer.obj_to_primitive(),
                         found.obj_to_primitive())
        self.assertEqual(('proj', 'user', 'INSTANCE'),
                         (found.project.external_id,
                          found.user.external_id, found.consumer_type))

    def test_type_defaults_to_none(self):
        self._create()
        self.assertIsNone(self._get().consumer_type)

    def test_types_are_created_once(self):
        self._create(UUID1, consumer_type='INSTANCE')
        self._create(UUID2, consumer_type='INSTANCE')
        self._create(UUID3, consumer_type='MIGRATION')
        self.assertEqual(2, fx.count_rows(self.context, models.ConsumerType))

    def test_invalid_type(self):
        for bad in ('instance', '', 'A' * 256, 'A-B'):
            self.assertRaises(exception.InvalidConsumerType, self._create,
                              consumer_type=bad)

    def test_duplicate_uuid(self):
        self._create()
        exc = self.assertRaises(exception.ConsumerExists, self._create)
        self.assertEqual(UUID1, exc.kwargs['uuid'])

    def test_owner_without_id_is_refused(self):
        consumer = objects.Consumer(
            self.context, uuid=UUID1, project=objects.Project(
                external_id='new'), user=self.user)
        self.assertRaises(exception.ObjectActionError, consumer.create)

    def test_not_found(self):
        self.assertRaises(exception.ConsumerNotFound, self._get)

    def test_update_owner_and_type_keeps_generation(self):
        consumer = self._create(consumer_type='INSTANCE')
        consumer.project = objects.Project.get_or_create(self.context, 'p2')
        consumer.user = objects.User.get_or_create(self.context, 'u2')
        consumer.consumer_type = 'MIGRATION'
        consumer.update()
        self.assertEqual(set(), consumer.obj_what_changed())
        found = self._get()
        self.assertEqual(('p2', 'u2', 'MIGRATION', 0),
                         (found.project.external_id, found.user.external_id,
                          found.consumer_type, found.generation))
        consumer.consumer_type = None
        consumer.update()
        self.assertIsNone(self._get().consumer_type)

    def test_update_without_type_keeps_the_stored_one(self):
        # As a consumer received from a 1.0 peer: it has no type.
        self._create(consumer_type='INSTANCE')
        old = objects.Consumer.obj_from_primitive(
            self._get().obj_to_primitive('1.0'), self.context)
        self.assertFalse(old.obj_attr_is_set('consumer_type'))
        old.user = objects.User.get_or_create(self.context, 'u2')
        old.update()
        found = self._get()
        self.assertEqual(('u2', 'INSTANCE'),
                         (found.user.external_id, found.consumer_type))

    def test_update_with_stale_generation(self):
        consumer = self._create()
        self._get().increment_generation()
        consumer.user = objects.User.get_or_create(self.context, 'u2')
        exc = self.assertRaises(exception.ConcurrentUpdateDetected,
                                consumer.update)
        self.assertEqual(0, exc.kwargs['generation'])
        self.assertEqual('user', self._get().user.external_id)

    def test_increment_generation_is_compare_and_swap(self):
        self._create()
        first, second = self._get(), self._get()
        first.increment_generation()
        self.assertEqual(1, first.generation)
        self.assertRaises(exception.ConcurrentUpdateDetected,
                          second.increment_generation)
        self.assertEqual(0, second.generation)
        self.assertEqual(1, self._get().generation)
        first.increment_generation()
        self.assertEqual(2, self._get().generation)

    def test_increment_generation_of_a_deleted_consumer(self):
        consumer = self._create()
        self._get().delete()
        self.assertRaises(exception.ConcurrentUpdateDetected,
                          consumer.increment_generation)

    def test_delete(self):
        consumer = self._create()
        consumer.delete()
        self.assertRaises(exception.ConsumerNotFound, self._get)
        self.assertRaises(exception.ConsumerNotFound, consumer.delete)

    def _allocate(self, consumer):
        rc_db.ensure_sync(self.context)
        provider = fx.provider(self.context, name=consumer.uuid)
        fx.allocate(self.context, (provider, consumer.id, 0, 1))

    def test_delete_refused_while_it_has_allocations(self):
        consumer = self._create()
        self._allocate(consumer)
        exc = self.assertRaises(exception.ConsumerInUse, consumer.delete)
        self.assertEqual(UUID1, exc.kwargs['uuid'])
        self._get()

    def test_delete_if_no_allocations(self):
        held = self._create(UUID1)
        empty = self._create(UUID2)
        untouched = self._create(UUID3)
        self._allocate(held)
        counter = self.useFixture(resobj_fixtures.StatementCounter(
            self.engine, 'consumers'))
        self.assertEqual(1, consumer_db.delete_if_no_allocations(
            self.context, [held.id, empty.id, empty.id]))
        # Set-based: one statement whatever the number of ids.
        self.assertEqual(1, counter.count)
        self._get(UUID1)
        self._get(UUID3)
        self.assertRaises(exception.ConsumerNotFound, self._get, UUID2)
        self.assertEqual(0, consumer_db.delete_if_no_allocations(
            self.context, []))
        self.assertEqual(1, consumer_db.delete_if_no_allocations(
            self.context, [untouched.id]))
