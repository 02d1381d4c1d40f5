"""Queries on the migrations table.

Rows written by old code lack ``uuid`` and ``migration_type``. Reads here
return ``migration_type`` inferred when the column is NULL (never written
back by a read); a missing uuid is generated and stored by
:func:`ensure_uuids`, which the Migration object calls for such rows; and
:func:`complete_legacy_rows` is the online data migration that fills both
in batches.
"""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import migration as models
from resobj import exception

_TABLE = models.Migration.__table__

# Statuses after which a migration holds no resources on either host.
# 'finished' is not one of them: a finished resize waits on the
# destination for the user to confirm or revert it, still holding both
# the old and the new flavor's resources.
TERMINAL_STATUSES = frozenset({
    'confirmed', 'reverted', 'error', 'failed', 'completed', 'done',
    'cancelled',
})


def _infer_migration_type(old_instance_type_id, new_instance_type_id):
    """The type of a migration whose row predates ``migration_type``.

    Old code recorded only the flavors: a change of flavor was a resize,
    anything else a cold migration (it cannot tell live migrations and
    evacuations apart, so it never claims them). This is the one copy of
    the rule; the Migration object uses it too.
    """
    if old_instance_type_id != new_instance_type_id:
        return 'resize'
    return 'migration'


def _complete_type(row):
    if row is not None and row['migration_type'] is None:
        row['migration_type'] = _infer_migration_type(
            row['old_instance_type_id'], row['new_instance_type_id'])
    return row


def _get_one(context, key, *criteria):
    return _complete_type(utils.get_one(
        context, _TABLE, exception.MigrationNotFound, key, *criteria))


def _get_all(context, stmt):
    return [_complete_type(row) for row in utils.fetch_all(
        context, stmt.order_by(_TABLE.c.id))]


@facade.reader
def get(context, migration_id):
    return _get_one(context, 'id=%s' % migration_id,
                    _TABLE.c.id == migration_id)


@facade.reader
def get_by_uuid(context, uuid):
    return _get_one(context, 'uuid=%s' % uuid, _TABLE.c.uuid == uuid)


@facade.reader
def get_by_instance_uuid(context, instance_uuid):
    """Every migration of one instance, oldest first."""
    return _get_all(context, utils.select(
        context, _TABLE, _TABLE.c.instance_uuid == instance_uuid))


@facade.reader
def get_in_progress_by_host_and_node(context, host, node):
    """Live migrations into or out of ``node`` on ``host``, not finished.

    Soft-deleted migrations are never in progress, whatever the context's
    ``read_deleted``.
    """
    c = _TABLE.c
    stmt = sa.select(_TABLE).where(
        c.deleted == 0,
        c.status.not_in(sorted(TERMINAL_STATUSES)),
        sa.or_(sa.and_(c.source_compute == host, c.source_node == node),
               sa.and_(c.dest_compute == host, c.dest_node == node)))
    return _get_all(context, stmt)


@facade.writer
def ensure_uuids(context, migration_ids):
    """{id: uuid} for rows of ``migration_ids``, storing any missing uuid.

    Each missing uuid is written with a compare-and-swap (``WHERE uuid IS
    NULL``), so when two readers complete the same row at once, one wins
    and both return the winner's uuid. Deleted rows are completed too:
    their uuid must not change between reads either.
    """
    ids = list(migration_ids)
    for migration_id in ids:
        utils.execute(
            context,
            sa.update(_TABLE)
            .where(_TABLE.c.id == migration_id, _TABLE.c.uuid.is_(None))
            # Filling in an identity is not a change of the migration.
            .values(uuid=uuidutils.generate_uuid(),
                    updated_at=_TABLE.c.updated_at))
    # A locking read sees the newest committed uuid even where the
    # transaction's snapshot predates the winner's commit (MySQL's
    # REPEATABLE READ); SQLite has no row locks and ignores it.
    rows = utils.execute(
        context,
        sa.select(_TABLE.c.id, _TABLE.c.uuid)
        .where(_TABLE.c.id.in_(ids)).with_for_update())
    found = dict(rows.all())
    missing = sorted(set(ids) - set(found))
    if missing:
        raise exception.MigrationNotFound(key='id=%s' % missing[0])
    return found


@facade.writer
def create(context, values):
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    try:
        migration_id = utils.insert(context, _TABLE, values)
    except db_exc.DBDuplicateEntry:
        raise exception.MigrationExists(uuid=values['uuid'])
    return get(context, migration_id)


@facade.writer
def update(context, migration_id, values):
    try:
        count = utils.update_live(context, _TABLE, values,
                                  _TABLE.c.id == migration_id)
    except db_exc.DBDuplicateEntry:
        raise exception.MigrationExists(uuid=values.get('uuid'))
    if not count:
        raise exception.MigrationNotFound(key='id=%s' % migration_id)
    return get(context, migration_id)


@facade.writer
def destroy(context, migration_id):
    """Soft-delete a migration; return its row as deleted."""
    row = utils.soft_delete_row(context, _TABLE, migration_id)
    if row is None:
        raise exception.MigrationNotFound(key='id=%s' % migration_id)
    return _complete_type(row)


# The live rows complete_legacy_rows completes.
_LEGACY = (_TABLE.c.deleted == 0,
           sa.or_(_TABLE.c.uuid.is_(None), _TABLE.c.migration_type.is_(None)))


@facade.reader
def count_legacy_rows(context):
    """How many rows :func:`complete_legacy_rows` has left to complete."""
    return utils.count(context, _TABLE, *_LEGACY)


@facade.writer
def complete_legacy_rows(context, max_count):
    """Online data migration: fill ``uuid`` and ``migration_type``.

    Completes up to ``max_count`` live rows that lack either, oldest
    first, and returns ``(found, done)``: how many such rows it found
    (at most ``max_count``) and how many it completed. A row completed
    meanwhile by a reader is found but not done. Run it again until it
    finds nothing; each run starts where the last one stopped, since
    completed rows no longer match.
    """
    if max_count < 1:
        raise ValueError('max_count must be positive, not %r' % max_count)
    c = _TABLE.c
    rows = utils.execute(
        context,
        sa.select(c.id, c.old_instance_type_id, c.new_instance_type_id)
        .where(*_LEGACY).order_by(c.id).limit(max_count)).all()
    done = 0
    for row in rows:
        # COALESCE keeps whatever a concurrent reader or run stored since
        # the select; the WHERE makes the count honest about who did it.
        done += utils.execute(
            context,
            sa.update(_TABLE)
            .where(c.id == row.id,
                   sa.or_(c.uuid.is_(None), c.migration_type.is_(None)))
            .values(uuid=sa.func.coalesce(c.uuid,
                                          uuidutils.generate_uuid()),
                    migration_type=sa.func.coalesce(
                        c.migration_type,
                        _infer_migration_type(row.old_instance_type_id,
                                              row.new_instance_type_id)),
                    # Like a read's completion, not a change of the data.
                    updated_at=c.updated_at)).rowcount
    return len(rows), done
