"""The allocation write path and usage reads, on every backend."""

import functools
import threading
import time

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import allocation as alloc_db
from resobj.db.api import consumer as consumer_db
from resobj.db.api import resource_class as rc_db
from resobj.db import facade
from resobj.db.sql import resource_provider as provider_sql
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
    (sql.resource_provider.in_list): both must write the same thing.
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
        # A new consumer of known owners, a replacement of an existing
        # consumer's allocations, and of one whose generation is not
        # checked.
        self._claim('00000000-0000-0000-0000-00000000000a', None)
        for uuid, generation in (
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
        # PostgreSQL one statement does all of it (claim_query).
        merged = int(self.engine.dialect.name == 'postgresql')
        generation, new = self._claim(
            '00000000-0000-0000-0000-00000000000b', None)
        self.assertEqual(1, generation)
        self.assertEqual(1 if merged else 5, len(new), new)
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

    def test_new_owners_are_committed_first(self):
        # The claim's transaction finds them missing and rolls back; a
        # transaction of their own creates them, and the claim runs
        # again.
        self.assertEqual(
            ['begin', 'rollback', 'begin', 'commit', 'begin', 'commit'],
            self._transactions('00000000-0000-0000-0000-00000000000a', None))
        # Committed whatever becomes of the claim (as placement does).
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self._claim, '00000000-0000-0000-0000-00000000000b',
                          None, vcpus=64, project='p2', user='u2',
                          consumer_type='MIGRATION')
        self.assertEqual('p2', consumer_db.get_project(self.context,
                                                       'p2')['external_id'])
        self.assertEqual('u2', consumer_db.get_user(self.context,
                                                    'u2')['external_id'])

    def test_new_owners_inside_another_writer(self):
        # The writer that owns the transaction (here a reshape's, or
        # this one) creates them first, then runs again.
        runs = []

        @facade.writer
        def outer(context):
            runs.append(1)
            return self._claim('00000000-0000-0000-0000-00000000000a',
                               None, project='p3', user='u3')

        generation, _ = outer(self.context)
        self.assertEqual((1, 2), (generation, len(runs)))

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
        # Known owners: five statements, one on PostgreSQL (see
        # test_new_and_existing_consumers).
        self.assertEqual([1 if merged else 5] * 2, counts[2:])
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


class TestNewConsumerClaim(db_base.DBTestCase):
    """A new consumer's claim through replace_all: every outcome.

    On PostgreSQL one statement makes it (sql.allocation.claim_query)
    and leaves every refusal to the general path, which words it; the
    outcomes are those of every backend.
    """

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider(self.context)
        # (10 - 1) * 1.5: 13.5 VCPU may be allocated.
        fx.inventory(self.context, self.rp, VCPU, total=10, reserved=1,
                     allocation_ratio=1.5, max_unit=14)
        fx.inventory(self.context, self.rp, MEMORY_MB, total=4096,
                     min_unit=256, max_unit=2048, step_size=256)
        self.rp_uuid = fx.uuid(self.context, self.rp)
        self.disk = fx.provider(self.context)
        fx.inventory(self.context, self.disk, DISK_GB, total=100)
        self.disk_uuid = fx.uuid(self.context, self.disk)
        # The owners exist: a claim by new owners creates them first.
        fx.consumer(self.context, project='p', user='u',
                    consumer_type='INSTANCE')
        # The statements of the last claim.
        self.statements = []

    def _claim(self, consumer, *allocations, project='p', **kwargs):
        request = {
            'consumer_uuid': consumer, 'project_id': project,
            'user_id': 'u', 'consumer_type': 'INSTANCE', 'generation': None,
            'allocations': [
                {'resource_provider_uuid': rp, 'resource_class': name,
                 'used': used} for rp, name, used in allocations]}
        with resobj_fixtures.StatementCounter(
                self.engine, table='allocations') as counter:
            self.statements = counter.statements
            return alloc_db.replace_all(self.context, [request], **kwargs)

    def _assert_claimed_in_one_statement(self):
        """On PostgreSQL, the claim's statement ran first; elsewhere not."""
        claimed = any('WITH fitting' in s for s in self.statements[:1])
        self.assertEqual(self.backend == 'postgresql', claimed,
                         self.statements)

    def _assert_nothing_written(self, consumer):
        self.assertRaises(exception.ConsumerNotFound,
                          consumer_db.get_by_uuid, self.context, consumer)
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0},
                         fx.usage(self.context, self.rp))
        self.assertEqual({'DISK_GB': 0}, fx.usage(self.context, self.disk))
        self.assertEqual([0, 0], [fx.generation(self.context, rp)
                                  for rp in (self.rp, self.disk)])

    def test_claim_on_two_providers_up_to_capacity(self):
        consumer = uuidutils.generate_uuid()
        self.assertEqual(
            ({consumer: 1}, {self.rp_uuid: 1, self.disk_uuid: 1}),
            self._claim(consumer, (self.rp_uuid, 'VCPU', 13),
                        (self.rp_uuid, 'MEMORY_MB', 512),
                        (self.disk_uuid, 'DISK_GB', 10)))
        # One statement on PostgreSQL, the general path elsewhere.
        self._assert_claimed_in_one_statement()
        if self.backend == 'postgresql':
            self.assertEqual(1, len(self.statements), self.statements)
        self.assertEqual({'VCPU': 13, 'MEMORY_MB': 512},
                         fx.usage(self.context, self.rp))
        self.assertEqual({'DISK_GB': 10}, fx.usage(self.context, self.disk))
        row = consumer_db.get_by_uuid(self.context, consumer)
        self.assertEqual(('p', 'u', 'INSTANCE', 1),
                         (row['project_external_id'],
                          row['user_external_id'], row['consumer_type'],
                          row['generation']))
        # 13 + 1 is over 13.5.
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self._claim, uuidutils.generate_uuid(),
                          (self.rp_uuid, 'VCPU', 1))

    def test_each_refusal_is_worded_and_writes_nothing(self):
        unknown = uuidutils.generate_uuid()
        cases = [
            # Over 13.5, within max_unit.
            ((self.rp_uuid, 'VCPU', 14),
             exception.InvalidAllocationCapacityExceeded, 'capacity'),
            ((self.rp_uuid, 'VCPU', 15),
             exception.InvalidAllocationConstraintsViolated,
             'between 1 and 14'),
            ((self.rp_uuid, 'MEMORY_MB', 128),
             exception.InvalidAllocationConstraintsViolated,
             'between 256 and 2048'),
            ((self.rp_uuid, 'MEMORY_MB', 384),
             exception.InvalidAllocationConstraintsViolated,
             'a multiple of 256'),
            ((self.rp_uuid, 'DISK_GB', 1), exception.InvalidInventory,
             self.rp_uuid),
            ((unknown, 'VCPU', 1), exception.ResourceProviderNotFound,
             unknown),
            ((self.rp_uuid, 'CUSTOM_NONE', 1),
             exception.ResourceClassNotFound, 'CUSTOM_NONE'),
        ]
        for allocation, error, words in cases:
            consumer = uuidutils.generate_uuid()
            # With a row that fits: the refused one spoils the claim.
            exc = self.assertRaises(error, self._claim, consumer, allocation,
                                    (self.disk_uuid, 'DISK_GB', 1))
            self.assertIn(words, str(exc))
            self._assert_claimed_in_one_statement()
            self._assert_nothing_written(consumer)

    def test_existing_consumer_is_a_generation_conflict(self):
        consumer = uuidutils.generate_uuid()
        self._claim(consumer, (self.rp_uuid, 'VCPU', 1))
        exc = self.assertRaises(exception.ConsumerGenerationConflict,
                                self._claim, consumer,
                                (self.rp_uuid, 'VCPU', 2))
        self.assertIn('consumer generation conflict', str(exc))
        self.assertEqual(1, fx.usage(self.context, self.rp)['VCPU'])
        self.assertEqual(1, fx.generation(self.context, self.rp))

    def test_new_owners_are_created_with_the_consumer(self):
        consumer = uuidutils.generate_uuid()
        self._claim(consumer, (self.rp_uuid, 'VCPU', 1), project='p-new')
        self.assertEqual('p-new', consumer_db.get_by_uuid(
            self.context, consumer)['project_external_id'])
        self.assertEqual(1, fx.usage(self.context, self.rp)['VCPU'])


class TestNewConsumerClaimRace(db_base.DBTestCase):
    """A provider moves while the claim's statement waits for its row.

    PostgreSQL only: there the claim is one statement
    (resobj.db.sql.allocation.claim_query), which reads the provider's
    generation, then compare-and-swaps it; another writer can move it
    in between. The general path's race is
    TestReplaceAllocations.test_moved_provider_*, on every backend.
    """

    scenarios = [s for s in db_base.BACKEND_SCENARIOS
                 if s[0] == 'postgresql']

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider(self.context)
        fx.inventory(self.context, self.rp, VCPU, total=8)
        fx.consumer(self.context, project='p', user='u')

    def _claim_while_moved(self, consumer, **kwargs):
        """Claim while another transaction bumps the provider.

        The other transaction holds the provider's row until the claim's
        statement waits for it, then commits. Returns what the claim
        returned or raised.
        """
        request = {
            'consumer_uuid': consumer, 'project_id': 'p', 'user_id': 'u',
            'generation': None,
            'allocations': [{'resource_provider_uuid': fx.uuid(
                self.context, self.rp), 'resource_class': 'VCPU',
                'used': 2}]}
        outcome = []

        def claim():
            try:
                outcome.append(alloc_db.replace_all(
                    self.context.elevated(), [request], **kwargs))
            except Exception as exc:
                outcome.append(exc)

        table = sa.table('resource_providers', sa.column('id'),
                         sa.column('generation'))
        waiting = sa.text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = "
            "current_database() AND wait_event_type = 'Lock'")
        with self.engine.connect() as other, \
                self.engine.connect() as watcher:
            other.execute(sa.update(table).where(table.c.id == self.rp)
                          .values(generation=table.c.generation + 1))
            thread = threading.Thread(target=claim)
            thread.start()
            deadline = time.monotonic() + 30
            while not watcher.execute(waiting).scalar():
                self.assertLess(time.monotonic(), deadline,
                                'the claim never waited for the row')
                watcher.rollback()
                time.sleep(0.01)
            other.commit()
        thread.join(60)
        self.assertEqual(1, len(outcome))
        return outcome[0]

    def test_moved_provider_is_a_conflict_and_writes_nothing(self):
        consumer = uuidutils.generate_uuid()
        exc = self._claim_while_moved(consumer, max_retries=0)
        self.assertIsInstance(
            exc, exception.ResourceProviderConcurrentUpdateDetected)
        self.assertEqual(0, exc.kwargs['generation'])
        self.assertRaises(exception.ConsumerNotFound,
                          consumer_db.get_by_uuid, self.context, consumer)
        self.assertEqual(0, fx.usage(self.context, self.rp)['VCPU'])
        # The other writer's bump only.
        self.assertEqual(1, fx.generation(self.context, self.rp))

    def test_moved_provider_is_retried(self):
        consumer = uuidutils.generate_uuid()
        self.assertEqual(({consumer: 1}, {fx.uuid(self.context, self.rp): 2}),
                         self._claim_while_moved(consumer))
        self.assertEqual(2, fx.usage(self.context, self.rp)['VCPU'])
