"""The allocation write path and usage reads, on every backend."""

import functools

import fixtures
import sqlalchemy as sa

from resobj.db.api import allocation as alloc_db
from resobj.db.api import consumer as consumer_db
from resobj.db.api import resource_class as rc_db
from resobj.db import provider_sql
from resobj import exception
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2


class TestReplaceAllocations(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider(self.context)
        fx.inventory(self.context, self.rp, VCPU, total=8,
                     allocation_ratio=2.0, max_unit=16)
        fx.inventory(self.context, self.rp, MEMORY_MB, total=4096,
                     reserved=512, min_unit=256, max_unit=2048,
                     step_size=256)
        self.c1 = fx.consumer(self.context)
        self.c2 = fx.consumer(self.context)

    def _replace(self, consumers, *rows):
        return alloc_db.replace_for_consumers(self.context, consumers, rows)

    def usage(self):
        return fx.usage(self.context, self.rp)

    def test_allocate_and_report_usage(self):
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0}, self.usage())
        generations = self._replace(
            [self.c1], (self.rp, self.c1, VCPU, 4),
            (self.rp, self.c1, MEMORY_MB, 1024))
        self.assertEqual({self.rp: 1}, generations)
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 1024}, self.usage())

    def test_replace_resizes_in_place(self):
        self._replace([self.c1], (self.rp, self.c1, VCPU, 16))
        # Full (16 of 16): the consumer's own old rows do not count
        # against its new ones.
        self._replace([self.c1], (self.rp, self.c1, VCPU, 12))
        self.assertEqual(12, self.usage()['VCPU'])

    def test_capacity_exceeded_changes_nothing(self):
        self._replace([self.c1], (self.rp, self.c1, VCPU, 10))
        exc = self.assertRaises(
            exception.InvalidAllocationCapacityExceeded, self._replace,
            [self.c2], (self.rp, self.c2, VCPU, 7))
        self.assertIn('VCPU', str(exc))
        self.assertEqual(10, self.usage()['VCPU'])
        self.assertEqual(1, fx.generation(self.context, self.rp))

    def test_several_consumers_are_one_transaction(self):
        self.assertRaises(
            exception.InvalidAllocationCapacityExceeded, self._replace,
            [self.c1, self.c2], (self.rp, self.c1, VCPU, 10),
            (self.rp, self.c2, VCPU, 10))
        self.assertEqual(0, self.usage()['VCPU'])
        self._replace([self.c1, self.c2], (self.rp, self.c1, VCPU, 8),
                      (self.rp, self.c2, VCPU, 8))
        self.assertEqual(16, self.usage()['VCPU'])

    def test_unit_constraints(self):
        for amount in (128, 2304, 300):   # below min, above max, off-step
            self.assertRaises(
                exception.InvalidAllocationConstraintsViolated,
                self._replace, [self.c1], (self.rp, self.c1, MEMORY_MB,
                                           amount))
        self.assertEqual(0, self.usage()['MEMORY_MB'])

    def test_missing_inventory_names_provider_and_class(self):
        exc = self.assertRaises(exception.InvalidInventory, self._replace,
                                [self.c1], (self.rp, self.c1, DISK_GB, 1))
        self.assertIn('DISK_GB', str(exc))

    def test_missing_inventory_names_providers_without_any_class(self):
        # As placement: a provider with none of the request's classes is
        # named with all of them, whoever asked it for which.
        other = fx.provider_with(self.context, {DISK_GB: 10})
        bare = fx.provider(self.context)
        exc = self.assertRaises(
            exception.InvalidInventory, self._replace, [self.c1],
            (other, self.c1, DISK_GB, 1), (bare, self.c1, MEMORY_MB, 256))
        self.assertEqual('DISK_GB, MEMORY_MB', exc.kwargs['resource_class'])
        self.assertEqual(1, len(exc.kwargs['resource_provider'].split(', ')))

    def test_missing_inventory_names_first_pair_when_all_have_some(self):
        other = fx.provider_with(self.context, {DISK_GB: 10})
        exc = self.assertRaises(
            exception.InvalidInventory, self._replace, [self.c1],
            (other, self.c1, MEMORY_MB, 256), (self.rp, self.c1, VCPU, 1),
            (self.rp, self.c1, DISK_GB, 1))
        self.assertEqual('DISK_GB', exc.kwargs['resource_class'])
        self.assertEqual(1, len(exc.kwargs['resource_provider'].split(', ')))
        self.assertEqual(0, self.usage()['VCPU'])

    def test_over_capacity_provider_can_shrink_but_not_grow(self):
        self._replace([self.c1], (self.rp, self.c1, VCPU, 8))
        self._replace([self.c2], (self.rp, self.c2, VCPU, 8))
        # The operator halves the ratio: 16 used of a capacity of 8.
        fx.set_inventory(self.context, self.rp, VCPU, allocation_ratio=1.0)
        self._replace([self.c1], (self.rp, self.c1, VCPU, 4))
        self.assertEqual(12, self.usage()['VCPU'])
        self.assertRaises(
            exception.InvalidAllocationCapacityExceeded, self._replace,
            [self.c1], (self.rp, self.c1, VCPU, 5))
        self._replace([self.c1], (self.rp, self.c1, VCPU, 0))
        self.assertEqual(8, self.usage()['VCPU'])

    def test_emptying_a_consumer_bumps_its_old_providers(self):
        self._replace([self.c1], (self.rp, self.c1, VCPU, 2))
        self.assertEqual({self.rp: 2}, self._replace([self.c1]))
        self.assertEqual(0, self.usage()['VCPU'])

    def test_replacement_drops_classes_no_longer_claimed(self):
        self._replace([self.c1], (self.rp, self.c1, VCPU, 2),
                      (self.rp, self.c1, MEMORY_MB, 512))
        # Same provider, another class only: the MEMORY_MB row must go
        # although no new row names that class.
        self.assertEqual({self.rp: 2},
                         self._replace([self.c1], (self.rp, self.c1, VCPU,
                                                   4)))
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 0}, self.usage())

    def test_moving_bumps_old_and_new_providers(self):
        other = fx.provider(self.context)
        fx.inventory(self.context, other, VCPU, total=8)
        self._replace([self.c1], (self.rp, self.c1, VCPU, 2))
        self.assertEqual({self.rp: 2, other: 1},
                         self._replace([self.c1], (other, self.c1, VCPU, 2)))
        self.assertEqual(0, self.usage()['VCPU'])
        self.assertEqual(2, fx.usage(self.context, other)['VCPU'])

    def _stale_read_of(self, rp_id, times):
        """Make the next ``times`` reads see ``rp_id`` one generation back.

        As if a concurrent writer bumped it between this transaction's
        read and its compare-and-swap.
        """
        real = alloc_db._snapshot
        calls = []

        def stale(conn, consumer_ids, rows, fresh=False):
            providers, held = real(conn, consumer_ids, rows, fresh)
            calls.append(rp_id)
            if len(calls) <= times:
                uuid, generation = providers[rp_id]
                providers[rp_id] = (uuid, generation - 1)
            return providers, held
        self.useFixture(fixtures.MockPatchObject(
            alloc_db, '_snapshot', stale))
        return calls

    def test_moved_provider_is_a_conflict_and_changes_nothing(self):
        other = fx.provider(self.context)
        fx.inventory(self.context, other, VCPU, total=8)
        self._replace([self.c1], (other, self.c1, VCPU, 1))
        self._stale_read_of(other, times=1)
        exc = self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            alloc_db.replace_for_consumers, self.context, [self.c2],
            [(self.rp, self.c2, VCPU, 1), (other, self.c2, VCPU, 1)],
            max_retries=0)
        # The provider that moved is named, with the generation read.
        self.assertEqual(fx.uuid(self.context, other),
                         exc.kwargs['provider'])
        self.assertEqual(0, exc.kwargs['generation'])
        # Nothing was written, not even the bump of the unmoved provider.
        self.assertEqual(0, self.usage()['VCPU'])
        self.assertEqual(1, fx.usage(self.context, other)['VCPU'])
        self.assertEqual(0, fx.generation(self.context, self.rp))
        self.assertEqual(1, fx.generation(self.context, other))

    def test_moved_provider_is_retried_with_a_fresh_read(self):
        other = fx.provider(self.context)
        fx.inventory(self.context, other, VCPU, total=8)
        calls = self._stale_read_of(other, times=1)
        self.assertEqual({self.rp: 1, other: 1}, self._replace(
            [self.c1], (self.rp, self.c1, VCPU, 1),
            (other, self.c1, VCPU, 1)))
        self.assertEqual(2, len(calls))

    def _statements(self, consumer, *rows):
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            self._replace([consumer], *rows)
        # Only statements on resobj's tables: not BEGIN, not pings.
        return [s for s in counter.statements
                if 'allocations' in s or 'resource_providers' in s]

    def test_statement_count_does_not_grow_with_allocations(self):
        other = fx.provider(self.context)
        fx.inventory(self.context, other, VCPU, total=100, max_unit=100)
        # PostgreSQL inserts in a WITH of the bump: one statement less.
        merged = int(self.engine.dialect.name == 'postgresql')
        # A first claim: the read-and-check, the insert, the bump.
        first = self._statements(self.c1, (self.rp, self.c1, VCPU, 1))
        self.assertEqual(3 - merged, len(first), first)
        # A replacement across two providers adds only the delete: one
        # compare-and-swap for both providers, except on MySQL, which
        # has no UPDATE ... RETURNING to name the one that moved.
        moved = self._statements(self.c1, (self.rp, self.c1, VCPU, 1),
                                 (other, self.c1, VCPU, 1))
        self.assertEqual(
            (4 if self.engine.dialect.update_returning else 5) - merged,
            len(moved), moved)
        for _ in range(12):
            c = fx.consumer(self.context)
            self._replace([c], (self.rp, c, VCPU, 1), (other, c, VCPU, 1))
        self.assertEqual(len(first), len(self._statements(
            self.c2, (self.rp, self.c2, VCPU, 1))))
        self.assertEqual(len(moved), len(self._statements(
            self.c1, (self.rp, self.c1, VCPU, 1),
            (other, self.c1, VCPU, 1))))


class TestLongLists(db_base.DBTestCase):
    """Writes naming more providers and consumers than MAX_SLOTS.

    Short lists are bound one parameter per item in statements built for
    their length, longer ones as expanding parameters
    (provider_sql.in_list): both must write the same thing.
    """

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rps = [fx.provider(self.context) for _ in range(35)]
        for rp in self.rps:
            fx.inventory(self.context, rp, VCPU, total=4)
        self.consumers = [fx.consumer(self.context) for _ in self.rps]

    def _claim_and_move(self):
        n = len(self.rps)
        first = alloc_db.replace_for_consumers(
            self.context, self.consumers,
            [(rp, c, VCPU, 1) for rp, c in zip(self.rps, self.consumers)])
        # Every consumer moves to the next provider and grows: the
        # consumers' old rows are found and deleted, every provider
        # bumped again.
        moved = alloc_db.replace_for_consumers(
            self.context, self.consumers,
            [(self.rps[(i + 1) % n], c, VCPU, 2)
             for i, c in enumerate(self.consumers)])
        return first, moved

    def _check(self, first, moved):
        self.assertEqual({rp: 1 for rp in self.rps}, first)
        self.assertEqual({rp: 2 for rp in self.rps}, moved)
        for rp in self.rps:
            self.assertEqual({'VCPU': 2}, fx.usage(self.context, rp))
        self.assertEqual(len(self.rps), fx.count_rows(
            self.context, alloc_db._ALLOC))

    def test_expanding_parameters(self):
        self.assertGreater(len(self.rps), provider_sql.MAX_SLOTS)
        self._check(*self._claim_and_move())

    def test_one_parameter_per_item(self):
        self.useFixture(fixtures.MockPatchObject(
            provider_sql, 'MAX_SLOTS', len(self.rps)))
        self._check(*self._claim_and_move())

    def test_moved_provider_among_many_is_a_conflict(self):
        alloc_db.replace_for_consumers(
            self.context, self.consumers[:1],
            [(self.rps[-1], self.consumers[0], VCPU, 1)])
        real = alloc_db._snapshot

        def stale(conn, consumer_ids, rows, fresh=False):
            providers, held = real(conn, consumer_ids, rows, fresh)
            uuid, generation = providers[self.rps[-1]]
            providers[self.rps[-1]] = (uuid, generation - 1)
            return providers, held
        self.useFixture(fixtures.MockPatchObject(
            alloc_db, '_snapshot', stale))
        exc = self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            alloc_db.replace_for_consumers, self.context,
            self.consumers[1:],
            [(rp, c, VCPU, 1) for rp, c in zip(self.rps, self.consumers[1:])]
            + [(self.rps[-1], self.consumers[-1], VCPU, 1)],
            max_retries=0)
        self.assertEqual(fx.uuid(self.context, self.rps[-1]),
                         exc.kwargs['provider'])
        self.assertEqual(1, fx.count_rows(self.context, alloc_db._ALLOC))


class TestReplaceAllStatements(db_base.DBTestCase):
    """The statements of one consumer's claim, whatever it holds."""

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider_with(self.context, {VCPU: 64, MEMORY_MB: 4096})
        self.rp_uuid = fx.uuid(self.context, self.rp)

    def _claim(self, consumer, generation, vcpus=1, project='p', user='u',
               consumer_type='INSTANCE'):
        request = {
            'consumer_uuid': consumer, 'project_id': project,
            'user_id': user, 'consumer_type': consumer_type,
            'generation': generation,
            'allocations': [
                {'resource_provider_uuid': self.rp_uuid,
                 'resource_class': name, 'used': used}
                for name, used in (('VCPU', vcpus), ('MEMORY_MB', 256))]}
        with resobj_fixtures.StatementCounter(self.engine) as counter:
            consumers, _ = alloc_db.replace_all(self.context, [request])
        return consumers[consumer], [
            s for s in counter.statements
            if s.split()[0].upper() not in ('BEGIN', 'COMMIT', 'ROLLBACK',
                                            'SAVEPOINT', 'RELEASE')]

    def _transactions(self, consumer, generation, **kwargs):
        """The transactions of one claim, as the engine's events see them."""
        seen = []
        listeners = [
            (name, functools.partial(lambda name, conn: seen.append(name),
                                     name))
            for name in ('begin', 'commit', 'rollback')]
        for name, listener in listeners:
            sa.event.listen(self.engine, name, listener)
        try:
            self._claim(consumer, generation, **kwargs)
        finally:
            for name, listener in listeners:
                sa.event.remove(self.engine, name, listener)
        return seen

    def test_a_claim_is_one_transaction(self):
        # A new consumer of new owners, one of known owners, a
        # replacement of an existing consumer's allocations, and of one
        # whose generation is not checked.
        for uuid, generation in (
                ('00000000-0000-0000-0000-00000000000a', None),
                ('00000000-0000-0000-0000-00000000000b', None),
                ('00000000-0000-0000-0000-00000000000b', 1),
                ('00000000-0000-0000-0000-00000000000b',
                 alloc_db.ANY_GENERATION)):
            self.assertEqual(['begin', 'commit'],
                             self._transactions(uuid, generation))

    def test_new_and_existing_consumers(self):
        # The project, user and type exist after the first claim.
        self._claim('00000000-0000-0000-0000-00000000000a', None)
        # A new consumer: the provider, class and owner ids with whether
        # the consumer exists, the consumer insert (at generation 1), the
        # read-and-check, the allocation insert, the provider bump. On
        # PostgreSQL the consumer insert is a WITH of the first
        # statement, and the allocation insert one of the last.
        merged = int(self.engine.dialect.name == 'postgresql')
        generation, new = self._claim(
            '00000000-0000-0000-0000-00000000000b', None)
        self.assertEqual(1, generation)
        self.assertEqual(5 - 2 * merged, len(new), new)
        # Replacing its allocations: the consumer's lookup, the delete
        # and its compare-and-swap, and no insert of it.
        generation, again = self._claim(
            '00000000-0000-0000-0000-00000000000b', 1, vcpus=2)
        self.assertEqual(2, generation)
        self.assertEqual(7 - merged, len(again), again)
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 512},
                         fx.usage(self.context, self.rp))

    def test_new_consumer_is_checked_against_what_others_hold(self):
        self._claim('00000000-0000-0000-0000-00000000000a', None, vcpus=60)
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self._claim,
                          '00000000-0000-0000-0000-00000000000b', None,
                          vcpus=5)
        self.assertEqual({'VCPU': 60, 'MEMORY_MB': 256},
                         fx.usage(self.context, self.rp))

    def test_consumer_created_concurrently_is_a_generation_conflict(self):
        consumer = '00000000-0000-0000-0000-00000000000c'
        self._claim(consumer, None)
        real = alloc_db._ids

        def before_it_existed(context, requests, create=None):
            found = real(context, requests, create)
            found['consumer'] = {}
            return found
        self.useFixture(fixtures.MockPatchObject(
            alloc_db, '_ids', before_it_existed))
        exc = self.assertRaises(exception.ConcurrentUpdateDetected,
                                self._claim, consumer, None, vcpus=2)
        self.assertIn('consumer generation conflict', str(exc))
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 256},
                         fx.usage(self.context, self.rp))

    def test_new_consumer_of_new_or_known_owners(self):
        # Each claim makes a new consumer; the owners are new for the
        # first two (the consumer is inserted after them), known for
        # the others, typed or not.
        merged = int(self.engine.dialect.name == 'postgresql')
        cases = [
            ('00000000-0000-0000-0000-000000000001', 'p1', 'u1', 'INSTANCE'),
            ('00000000-0000-0000-0000-000000000002', 'p1', 'u2', 'MIGRATION'),
            ('00000000-0000-0000-0000-000000000003', 'p1', 'u2', 'MIGRATION'),
            ('00000000-0000-0000-0000-000000000004', 'p1', 'u1', None),
        ]
        counts = []
        for uuid, project, user, consumer_type in cases:
            generation, statements = self._claim(
                uuid, None, project=project, user=user,
                consumer_type=consumer_type)
            self.assertEqual(1, generation)
            row = consumer_db.get_by_uuid(self.context, uuid)
            self.assertEqual((project, user, consumer_type, 1),
                             (row['project_external_id'],
                              row['user_external_id'], row['consumer_type'],
                              row['generation']))
            counts.append(len(statements))
        # Known owners: the consumer's insert is a statement of its own
        # except on PostgreSQL.
        self.assertEqual([5 - 2 * merged] * 2, counts[2:])
        self.assertGreater(counts[0], counts[2])
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 1024},
                         fx.usage(self.context, self.rp))

    def test_failed_claim_leaves_no_new_consumer(self):
        self._claim('00000000-0000-0000-0000-00000000000a', None)
        uuid = '00000000-0000-0000-0000-00000000000d'
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self._claim, uuid, None, vcpus=64)
        self.assertRaises(exception.ConsumerNotFound,
                          consumer_db.get_by_uuid, self.context, uuid)
