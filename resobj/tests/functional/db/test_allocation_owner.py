"""allocations.project_id and user_id follow the consumer's, whoever writes.

The triggers of resobj/db/models/allocation_owner.py keep the copy on
every backend. The writes here are plain SQL, as a service of the
previous release or an operator would make them, except where a test
names resobj's own write path. Every DBTestCase also checks the copy
after each test (db_base.DBTestCase.assert_copies_kept).
"""

import sqlalchemy as sa

from resobj.db.api import allocation as alloc_db
from resobj.db.api import consumer as consumer_db
from resobj.db.api import resource_class as rc_db
from resobj.db.api import usage as usage_db
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import allocation_owner
from resobj.db.models import consumer as consumer_models
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

VCPU, MEMORY_MB = 0, 1
_ALLOC = alloc_models.Allocation.__table__
_CONSUMERS = consumer_models.Consumer.__table__
_TRIGGERS = {
    'postgresql': ['trg_allocations_owner ON allocations',
                   'trg_consumers_owner ON consumers'],
    'mysql': ['trg_allocations_owner_insert', 'trg_allocations_owner_update',
              'trg_consumers_owner'],
}
_TRIGGERS['sqlite'] = _TRIGGERS['mysql']


@facade.reader
def _owners(context):
    """{allocation id: (consumer id, project id, user id)}, read raw."""
    return {row[0]: tuple(row[1:]) for row in context.session.execute(
        sa.select(_ALLOC.c.id, _ALLOC.c.consumer_id, _ALLOC.c.project_id,
                  _ALLOC.c.user_id))}


@facade.reader
def _owner_of(context, consumer_id):
    return tuple(context.session.execute(
        sa.select(_CONSUMERS.c.project_id, _CONSUMERS.c.user_id).where(
            _CONSUMERS.c.id == consumer_id)).one())


class OwnerTestCase(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        self.rp = fx.provider_with(self.context, {VCPU: 64, MEMORY_MB: 4096})
        self.first = fx.consumer(self.context, 'p1', 'u1')
        self.second = fx.consumer(self.context, 'p2', 'u2')

    def assert_owned_by_consumers(self):
        for consumer_id, project_id, user_id in _owners(
                self.context).values():
            self.assertEqual(_owner_of(self.context, consumer_id),
                             (project_id, user_id))


class TestTriggers(OwnerTestCase):

    def test_inserted_rows_take_their_consumers_owner(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2),
                    (self.rp, self.second, VCPU, 3))
        owners = sorted(_owners(self.context).values())
        self.assertEqual([(self.first,) + _owner_of(self.context,
                                                    self.first),
                          (self.second,) + _owner_of(self.context,
                                                     self.second)],
                         owners)
        self.assertNotEqual(owners[0][1:], owners[1][1:])

    def test_a_consumers_new_owner_passes_to_its_allocations(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2),
                    (self.rp, self.first, MEMORY_MB, 256),
                    (self.rp, self.second, VCPU, 3))
        project, user = _owner_of(self.context, self.second)
        fx.execute(self.context, sa.update(_CONSUMERS).where(
            _CONSUMERS.c.id == self.first).values(project_id=project))
        self.assert_owned_by_consumers()
        fx.execute(self.context, sa.update(_CONSUMERS).where(
            _CONSUMERS.c.id == self.first).values(user_id=user))
        self.assert_owned_by_consumers()
        self.assertEqual({(project, user)}, {
            owner[1:] for owner in _owners(self.context).values()})

    def test_a_generation_bump_changes_no_allocation(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2))
        before = _owners(self.context)
        fx.execute(self.context, sa.update(_CONSUMERS).values(
            generation=_CONSUMERS.c.generation + 1))
        self.assertEqual(before, _owners(self.context))

    def test_a_row_moved_to_another_consumer_takes_its_owner(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2))
        fx.execute(self.context, sa.update(_ALLOC).values(
            consumer_id=self.second))
        self.assertEqual([(self.second,) + _owner_of(self.context,
                                                     self.second)],
                         list(_owners(self.context).values()))

    def test_the_copy_cannot_be_written_over(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2))
        project, user = _owner_of(self.context, self.second)
        fx.execute(self.context, sa.update(_ALLOC).values(
            project_id=project, user_id=user))
        self.assert_owned_by_consumers()

    def test_resobj_write_paths_keep_it(self):
        requests = [{'consumer_uuid': fx.consumer_uuid(self.context,
                                                       self.first),
                     'project_id': 'p9', 'user_id': 'u9',
                     'allocations': [{'resource_provider_uuid': fx.uuid(
                         self.context, self.rp), 'resource_class': 'VCPU',
                         'used': 1}]}]
        alloc_db.replace_all(self.context, requests)
        self.assert_owned_by_consumers()
        self.assertEqual([{'resource_class': 'VCPU', 'usage': 1,
                           'consumer_type': 'all'}],
                         usage_db.get_all_by_project_user(
                             self.context, 'p9', 'u9',
                             consumer_type=usage_db.ALL_TYPES,
                             count_consumers=False))


class TestProjectUsage(OwnerTestCase):
    """Usage summed over the allocations' owners, or through consumers."""

    def test_both_forms_give_the_same_sums(self):
        third = fx.consumer(self.context, 'p1', 'u2', 'INSTANCE')
        fx.allocate(self.context, (self.rp, self.first, VCPU, 2),
                    (self.rp, self.first, MEMORY_MB, 256),
                    (self.rp, self.second, VCPU, 3),
                    (self.rp, third, VCPU, 5),
                    (self.rp, third, MEMORY_MB, 1024))
        for project, user in (('p1', None), ('p1', 'u1'), ('p1', 'u2'),
                              ('p2', None), ('p2', 'u1'), ('nobody', None)):
            owned = usage_db.get_all_by_project_user(
                self.context, project, user,
                consumer_type=usage_db.ALL_TYPES, count_consumers=False)
            joined = usage_db.get_all_by_project_user(
                self.context, project, user,
                consumer_type=usage_db.ALL_TYPES)
            for row in joined:
                del row['consumer_count']
            self.assertEqual(joined, owned, (project, user))
        self.assertEqual(
            [{'resource_class': 'MEMORY_MB', 'usage': 1280,
              'consumer_type': 'all'},
             {'resource_class': 'VCPU', 'usage': 7,
              'consumer_type': 'all'}],
            usage_db.get_all_by_project_user(
                self.context, 'p1', consumer_type=usage_db.ALL_TYPES,
                count_consumers=False))


class TestFixOwners(OwnerTestCase):
    """The online data migration for allocations written without owner."""

    def _without_triggers(self, *rows):
        """Allocate ``rows`` as if no trigger existed, then restore them."""
        with self.engine.begin() as conn:
            for name in _TRIGGERS[self.backend]:
                conn.exec_driver_sql('DROP TRIGGER %s' % name)
        fx.allocate(self.context, *rows)
        with self.engine.begin() as conn:
            for statement in allocation_owner.statements(self.backend):
                conn.exec_driver_sql(statement)

    def test_allocations_left_without_owner_get_it(self):
        fx.allocate(self.context, (self.rp, self.first, VCPU, 1))
        self._without_triggers((self.rp, self.second, VCPU, 2),
                               (self.rp, self.second, MEMORY_MB, 64))
        self.assertEqual(2, len(consumer_db.find_wrong_owners(self.context)))
        self.assertEqual(2, consumer_db.count_wrong_owners(self.context))
        self.assertEqual((1, 1), consumer_db.fix_owners(self.context, 1))
        self.assertEqual(1, consumer_db.count_wrong_owners(self.context))
        self.assertEqual((1, 1), consumer_db.fix_owners(self.context, 10))
        self.assertEqual(0, consumer_db.count_wrong_owners(self.context))
        self.assertEqual((0, 0), consumer_db.fix_owners(self.context, 10))
        self.assert_owned_by_consumers()
