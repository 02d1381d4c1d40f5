"""Allocation objects over a real database, on every backend."""

from oslo_utils import uuidutils

from resobj.db.api import resource_class as rc_db
from resobj import exception
from resobj import objects
from resobj.tests.functional import db_base

objects.register_all()


class TestAllocationList(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = self._provider('cn1', VCPU=8, MEMORY_MB=4096)
        self.other = self._provider('cn2', VCPU=2)

    def _provider(self, name, **totals):
        rp = objects.ResourceProvider(
            self.context, uuid=uuidutils.generate_uuid(), name=name)
        rp.create()
        for rc, total in totals.items():
            rp.add_inventory(objects.Inventory(
                self.context, resource_class=rc, total=total, reserved=0,
                min_unit=1, max_unit=total, step_size=1,
                allocation_ratio=1.0))
        return rp

    def _allocs(self, consumer, *amounts, project='p1', user='u1'):
        return objects.AllocationList(self.context, objects=[
            objects.Allocation(
                self.context, resource_provider_uuid=rp.uuid,
                resource_class=rc, consumer_uuid=consumer, used=used,
                project_id=project, user_id=user, consumer_type='INSTANCE')
            for rp, rc, used in amounts])

    def _join(self, *lists):
        # A list built by '+' has no context; remotable calls need one.
        return objects.AllocationList(
            self.context, objects=[a for lst in lists for a in lst])

    def test_replace_read_back_and_generations(self):
        consumer = uuidutils.generate_uuid()
        generations = self._allocs(
            consumer, (self.rp, 'VCPU', 2), (self.rp, 'MEMORY_MB', 512)
        ).replace_all({consumer: None})
        self.assertEqual({consumer: 1}, generations)
        found = objects.AllocationList.get_all_by_consumer_id(
            self.context, consumer)
        self.assertEqual(
            [(self.rp.uuid, 'VCPU', 2, 'p1', 'u1', 'INSTANCE'),
             (self.rp.uuid, 'MEMORY_MB', 512, 'p1', 'u1', 'INSTANCE')],
            [(a.resource_provider_uuid, a.resource_class, a.used,
              a.project_id, a.user_id, a.consumer_type) for a in found])
        by_rp = objects.AllocationList.get_all_by_resource_provider_uuid(
            self.context, self.rp.uuid)
        self.assertEqual(2, len(by_rp))
        # Inventory was added twice (2 bumps), the claim bumped once more.
        self.assertEqual(3, objects.ResourceProvider.get_by_uuid(
            self.context, self.rp.uuid).generation)

    def test_consumer_generation_conflict_changes_nothing(self):
        consumer = uuidutils.generate_uuid()
        self._allocs(consumer, (self.rp, 'VCPU', 2)).replace_all(
            {consumer: None})
        exc = self.assertRaises(
            exception.ConcurrentUpdateDetected,
            self._allocs(consumer, (self.rp, 'VCPU', 4)).replace_all,
            {consumer: 0})
        self.assertIn('is at generation 1, the request was made at 0',
                      str(exc))
        self.assertNotIsInstance(
            exc, exception.ResourceProviderConcurrentUpdateDetected)
        [alloc] = objects.AllocationList.get_all_by_consumer_id(
            self.context, consumer)
        self.assertEqual(2, alloc.used)

    def test_new_consumer_with_a_generation_is_a_conflict(self):
        consumer = uuidutils.generate_uuid()
        self.assertRaises(
            exception.ConcurrentUpdateDetected,
            self._allocs(consumer, (self.rp, 'VCPU', 1)).replace_all,
            {consumer: 3})
        self.assertEqual(0, len(objects.AllocationList.get_all_by_consumer_id(
            self.context, consumer)))

    def test_several_consumers_all_or_nothing(self):
        a, b = uuidutils.generate_uuid(), uuidutils.generate_uuid()
        both = self._join(self._allocs(a, (self.rp, 'VCPU', 1)),
                          self._allocs(b, (self.other, 'VCPU', 3)))
        # The second consumer asks more than one claim may take (max_unit
        # 2): the first consumer's valid claim must not land either.
        self.assertRaises(exception.InvalidAllocationConstraintsViolated,
                          both.replace_all)
        for consumer in (a, b):
            self.assertEqual([], list(
                objects.AllocationList.get_all_by_consumer_id(
                    self.context, consumer)))
            self.assertRaises(exception.ConsumerNotFound,
                              objects.Consumer.get_by_uuid, self.context,
                              consumer)

    def test_move_between_providers_in_one_call(self):
        # A migration: the instance's allocation moves, and the migration
        # consumer takes over the source, atomically.
        instance, migration = (uuidutils.generate_uuid(),
                               uuidutils.generate_uuid())
        self._allocs(instance, (self.rp, 'VCPU', 2)).replace_all()
        moved = self._join(self._allocs(instance, (self.other, 'VCPU', 2)),
                           self._allocs(migration, (self.rp, 'VCPU', 2)))
        generations = moved.replace_all()
        self.assertEqual({instance: 2, migration: 1}, generations)
        self.assertEqual(
            [self.other.uuid], [a.resource_provider_uuid for a in
                                objects.AllocationList.get_all_by_consumer_id(
                                    self.context, instance)])

    def test_emptied_consumer_is_removed(self):
        consumer = uuidutils.generate_uuid()
        self._allocs(consumer, (self.rp, 'VCPU', 2)).replace_all()
        generations = objects.AllocationList(
            self.context, objects=[]).replace_all(
                {consumer: 1}, emptied={consumer: ('p1', 'u1')})
        self.assertEqual({consumer: None}, generations)
        self.assertRaises(exception.ConsumerNotFound,
                          objects.Consumer.get_by_uuid, self.context,
                          consumer)

    def test_delete_all(self):
        consumer = uuidutils.generate_uuid()
        self._allocs(consumer, (self.rp, 'VCPU', 2)).replace_all()
        objects.AllocationList.delete_all(self.context, consumer)
        self.assertEqual([], list(
            objects.AllocationList.get_all_by_resource_provider_uuid(
                self.context, self.rp.uuid)))
        self.assertRaises(exception.ConsumerNotFound,
                          objects.AllocationList.delete_all, self.context,
                          consumer)

    def test_mixed_owners_for_one_consumer_are_refused(self):
        consumer = uuidutils.generate_uuid()
        mixed = self._join(
            self._allocs(consumer, (self.rp, 'VCPU', 1)),
            self._allocs(consumer, (self.rp, 'MEMORY_MB', 1), project='p2'))
        self.assertRaises(exception.Invalid, mixed.replace_all)

    def test_unknown_provider_or_class(self):
        consumer = uuidutils.generate_uuid()
        ghost = objects.ResourceProvider(uuid=uuidutils.generate_uuid())
        self.assertRaises(exception.ResourceProviderNotFound,
                          self._allocs(consumer, (ghost, 'VCPU', 1))
                          .replace_all)
        self.assertRaises(exception.ResourceClassNotFound,
                          self._allocs(consumer, (self.rp, 'CUSTOM_X', 1))
                          .replace_all)
