"""Queries on consumers and the projects, users and types they have.

One module for the four tables, as in ``resobj/db/models/consumer.py``:
projects, users and consumer types exist only for consumers to name.
Rows are hard-deleted, so the soft-delete helpers of ``utils`` (select,
get_one, update_live) do not apply here; the fetch and insert ones do.

A consumer row reads as a dict with ``id, uuid, generation, project_id,
project_external_id, user_id, user_external_id, consumer_type`` (the
type's name, or None).
"""

import functools

from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import backends
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import consumer as models
from resobj import exception

_CONSUMERS = models.Consumer.__table__
_PROJECTS = models.Project.__table__
_USERS = models.User.__table__
_TYPES = models.ConsumerType.__table__
_ALLOCATIONS = alloc_models.Allocation.__table__


@functools.cache
def _find_stmt(table, column, lock):
    # Built once per (table, column, lock): these lookups run on every
    # allocation write, where building the SELECT cost more than running
    # it.
    stmt = sa.select(table).where(table.c[column] == sa.bindparam('value'))
    if lock:
        # A locking read sees the latest committed row; on MySQL a plain
        # one would repeat this transaction's snapshot, which predates
        # the concurrent insert that made ours a duplicate.
        stmt = stmt.with_for_update(read=True)
    return stmt


def _find(context, table, column, value, lock=False):
    return utils.fetch_one(context, _find_stmt(table, column, lock),
                           {'value': value})


def _insert_if_absent(context, table, column, values):
    """Insert a row for each of ``values`` that ``table`` lacks.

    One statement; a row a concurrent transaction inserted first is
    skipped, not an error, and without a savepoint (see
    resobj.db.backends.mysql.insert_if_absent for why that matters).
    """
    connection = context.session.connection()
    now = base.utcnow()
    connection.execute(
        backends.for_dialect(connection.dialect.name).insert_if_absent(
            table, column),
        [{column: value, 'created_at': now} for value in sorted(values)])


def _get_or_create(context, table, column, value):
    """The row whose ``column`` is ``value``, inserted if there is none."""
    row = _find(context, table, column, value)
    if row is not None:
        return row
    _insert_if_absent(context, table, column, [value])
    return _find(context, table, column, value, lock=True)


@facade.writer
def create_owners(context, projects=(), users=(), types=()):
    """Make sure these projects, users and consumer types exist.

    External ids and type names; each table takes one statement, and
    rows that exist already (or that a concurrent writer inserts first)
    are skipped. For a write that found its consumer's owners missing:
    run on its own, this transaction commits at once, so its rows
    outlive the write's transaction whatever becomes of it (a claim
    refused for capacity), as placement creates them; concurrent
    writes naming the same new tenant then wait on a row that is
    committed at once, never on one that is rolled back under them.
    """
    for table, column, values in ((_PROJECTS, 'external_id', projects),
                                  (_USERS, 'external_id', users),
                                  (_TYPES, 'name', types)):
        if values:
            _insert_if_absent(context, table, column, set(values))


@facade.writer
def get_or_create_project(context, external_id):
    return _get_or_create(context, _PROJECTS, 'external_id', external_id)


@facade.writer
def get_or_create_user(context, external_id):
    return _get_or_create(context, _USERS, 'external_id', external_id)


@facade.reader
def get_project(context, external_id):
    row = _find(context, _PROJECTS, 'external_id', external_id)
    if row is None:
        raise exception.ProjectNotFound(external_id=external_id)
    return row


@facade.reader
def get_user(context, external_id):
    row = _find(context, _USERS, 'external_id', external_id)
    if row is None:
        raise exception.UserNotFound(external_id=external_id)
    return row


def _type_id(context, name):
    if name is None:
        return None
    return _get_or_create(context, _TYPES, 'name', name)['id']


@facade.writer
def owner_ids(context, project_external_id, user_external_id,
              consumer_type=None, known=None):
    """(project id, user id, type id or None) for a new consumer.

    ``known``: {'project': {external id: id}, 'user': {...}, 'type':
    {name: id}} read already by the caller; the others are looked up
    and created if new.
    """
    known = known or {}

    def known_id(kind, key):
        return known.get(kind, {}).get(key)

    project_id = known_id('project', project_external_id)
    if project_id is None:
        project_id = get_or_create_project(context,
                                           project_external_id)['id']
    user_id = known_id('user', user_external_id)
    if user_id is None:
        user_id = get_or_create_user(context, user_external_id)['id']
    type_id = known_id('type', consumer_type)
    if type_id is None:
        type_id = _type_id(context, consumer_type)
    return project_id, user_id, type_id


@facade.writer
def insert(context, uuid, project_id, user_id, type_id, generation=0):
    """Insert a consumer row of known owner ids; return its id.

    For a writer that has the ids already (:func:`owner_ids`) and needs
    no row back; ConsumerExists if the uuid is taken.
    """
    try:
        return utils.insert(context, _CONSUMERS, {
            'uuid': uuid, 'project_id': project_id, 'user_id': user_id,
            'consumer_type_id': type_id, 'generation': generation})
    except db_exc.DBDuplicateEntry:
        raise exception.ConsumerExists(uuid=uuid)


@functools.cache
def _select_consumers():
    # Built once; callers add their WHERE (which copies the statement).
    return sa.select(
        _CONSUMERS.c.id, _CONSUMERS.c.uuid, _CONSUMERS.c.generation,
        _CONSUMERS.c.project_id,
        _PROJECTS.c.external_id.label('project_external_id'),
        _CONSUMERS.c.user_id,
        _USERS.c.external_id.label('user_external_id'),
        _TYPES.c.name.label('consumer_type'),
    ).select_from(
        _CONSUMERS
        .join(_PROJECTS, _PROJECTS.c.id == _CONSUMERS.c.project_id)
        .join(_USERS, _USERS.c.id == _CONSUMERS.c.user_id)
        .outerjoin(_TYPES, _TYPES.c.id == _CONSUMERS.c.consumer_type_id))


@functools.cache
def _by_uuid_stmt():
    return _select_consumers().where(_CONSUMERS.c.uuid == sa.bindparam('uuid'))


def _get_by_uuid(context, uuid):
    row = utils.fetch_one(context, _by_uuid_stmt(), {'uuid': uuid})
    if row is None:
        raise exception.ConsumerNotFound(key='uuid=%s' % uuid)
    return row


@facade.reader
def get_by_uuid(context, uuid):
    return _get_by_uuid(context, uuid)


@facade.writer
def create(context, uuid, project_id, user_id, consumer_type=None):
    """Insert a consumer at generation 0; the type is created if new."""
    insert(context, uuid, project_id, user_id,
           _type_id(context, consumer_type))
    return _get_by_uuid(context, uuid)


def _compare_and_swap(context, consumer_id, generation, values):
    values = dict(values, updated_at=base.utcnow())
    count = utils.execute(
        context,
        sa.update(_CONSUMERS)
        .where(_CONSUMERS.c.id == consumer_id,
               _CONSUMERS.c.generation == generation)
        .values(values)).rowcount
    if not count:
        # Changed or deleted since it was read: either way the caller's
        # view is stale, and a retry starts by reading it again.
        raise exception.ConcurrentUpdateDetected(
            what='Consumer %s' % consumer_id, generation=generation)


@facade.writer
def update(context, consumer_id, generation, values):
    """Write ``values`` if the consumer is still at ``generation``.

    ``values`` holds any of ``project_id``, ``user_id`` and
    ``consumer_type`` (a name, created if new, or None). The generation
    does not change: it counts changes of the consumer's allocations.
    ConcurrentUpdateDetected if the stored generation differs or the
    consumer is gone.
    """
    values = dict(values)
    if 'consumer_type' in values:
        values['consumer_type_id'] = _type_id(context,
                                              values.pop('consumer_type'))
    _compare_and_swap(context, consumer_id, generation, values)


@facade.writer
def increment_generation(context, consumer_id, generation):
    """Bump the generation from ``generation``; return the new one."""
    _compare_and_swap(context, consumer_id, generation,
                      {'generation': generation + 1})
    return generation + 1


@facade.writer
def destroy(context, consumer_id):
    uuid = utils.execute(context, sa.select(_CONSUMERS.c.uuid).where(
        _CONSUMERS.c.id == consumer_id)).scalar()
    if uuid is None:
        raise exception.ConsumerNotFound(key='id=%s' % consumer_id)
    try:
        deleted = utils.execute(context, sa.delete(_CONSUMERS).where(
            _CONSUMERS.c.id == consumer_id)).rowcount
    except db_exc.DBReferenceError:
        raise exception.ConsumerInUse(uuid=uuid)
    if not deleted:
        # Deleted by a concurrent transaction since the read above: on
        # MySQL's REPEATABLE READ that read repeats this transaction's
        # snapshot, which predates the other's commit; the DELETE reads
        # the latest committed row. Only one of the deleters deleted it.
        raise exception.ConsumerNotFound(key='id=%s' % consumer_id)


@facade.writer
def delete_if_no_allocations(context, consumer_ids):
    """Delete those of ``consumer_ids`` that hold no allocation.

    One statement, whatever the number of ids; returns how many went.
    """
    consumer_ids = sorted(set(consumer_ids))
    if not consumer_ids:
        return 0
    held = sa.exists().where(_ALLOCATIONS.c.consumer_id == _CONSUMERS.c.id)
    return utils.execute(context, sa.delete(_CONSUMERS).where(
        _CONSUMERS.c.id.in_(consumer_ids), ~held)).rowcount


def _wrong_owners(limit=None):
    """Allocations whose owner copy differs from their consumer's.

    The first ``limit`` by id; all of them, unordered, without one.
    """
    query = (
        sa.select(_ALLOCATIONS.c.id)
        .select_from(_ALLOCATIONS.join(
            _CONSUMERS, _CONSUMERS.c.id == _ALLOCATIONS.c.consumer_id))
        .where(sa.or_(
            _ALLOCATIONS.c.project_id.is_(None),
            _ALLOCATIONS.c.user_id.is_(None),
            _ALLOCATIONS.c.project_id != _CONSUMERS.c.project_id,
            _ALLOCATIONS.c.user_id != _CONSUMERS.c.user_id)))
    if limit is None:
        return query
    return query.order_by(_ALLOCATIONS.c.id).limit(limit)


@facade.reader
def count_wrong_owners(context):
    """How many allocations :func:`fix_owners` has left to fix."""
    return utils.count(context, _wrong_owners().subquery())


@facade.reader
def find_wrong_owners(context, limit=100):
    """Ids of allocations whose project or user is not their consumer's.

    The database's triggers copy them (see
    resobj/db/models/allocation_owner.py); this is the check that they
    did, for tests and for :func:`fix_owners`.
    """
    return utils.execute(context, _wrong_owners(limit)).scalars().all()


@facade.writer
def fix_owners(context, max_count):
    """Online migration: copy up to ``max_count`` consumers' owners again.

    Nothing should need it but an upgrade on MySQL, whose DDL commits at
    once: an allocation written while migration 0006 filled the columns
    may have been left without them. Returns (found, done).
    """
    ids = utils.execute(context, _wrong_owners(max_count)).scalars().all()
    if not ids:
        return 0, 0

    def owner(column):
        return sa.select(_CONSUMERS.c[column]).where(
            _CONSUMERS.c.id == _ALLOCATIONS.c.consumer_id).scalar_subquery()

    # updated_at kept: the allocation itself did not change.
    done = utils.execute(context, sa.update(_ALLOCATIONS).where(
        _ALLOCATIONS.c.id.in_(ids)).values(
        project_id=owner('project_id'), user_id=owner('user_id'),
        updated_at=_ALLOCATIONS.c.updated_at)).rowcount
    return len(ids), done
