"""Queries on the compute_nodes table, and its online data migrations."""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import compute_node as models
from resobj import exception

_TABLE = models.ComputeNode.__table__
RATIO_COLUMNS = ('cpu_allocation_ratio', 'ram_allocation_ratio',
                 'disk_allocation_ratio')


def _from_row(row):
    if row is not None:
        row['stats'] = jsonutils.loads(row['stats']) if row['stats'] else {}
    return row


def _to_db(values):
    values = dict(values)
    if 'stats' in values:
        values['stats'] = jsonutils.dumps(values['stats'] or {})
    return values


def _get_one(context, key, *criteria):
    return _from_row(utils.get_one(
        context, _TABLE, exception.ComputeNodeNotFound, key, *criteria))


@facade.reader
def get(context, compute_node_id):
    return _get_one(context, 'id=%s' % compute_node_id,
                    _TABLE.c.id == compute_node_id)


@facade.reader
def get_by_uuid(context, uuid):
    return _get_one(context, 'uuid=%s' % uuid, _TABLE.c.uuid == uuid)


@facade.reader
def get_by_host_and_nodename(context, host, nodename):
    return _get_one(context, '%s/%s' % (host, nodename),
                    _TABLE.c.host == host,
                    _TABLE.c.hypervisor_hostname == nodename)


@facade.reader
def get_all(context, host=None):
    criteria = [] if host is None else [_TABLE.c.host == host]
    return [_from_row(row) for row in utils.fetch_all(
        context, utils.select(context, _TABLE, *criteria)
        .order_by(_TABLE.c.id))]


@facade.writer
def create(context, values):
    values = _to_db(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    try:
        compute_node_id = utils.insert(context, _TABLE, values)
    except db_exc.DBDuplicateEntry:
        raise exception.ComputeNodeExists(
            host=values.get('host'),
            nodename=values.get('hypervisor_hostname'))
    return get(context, compute_node_id)


@facade.writer
def update(context, compute_node_id, values):
    try:
        count = utils.update_live(context, _TABLE, _to_db(values),
                                  _TABLE.c.id == compute_node_id)
    except db_exc.DBDuplicateEntry:
        raise exception.ComputeNodeExists(
            host=values.get('host'),
            nodename=values.get('hypervisor_hostname'))
    if not count:
        raise exception.ComputeNodeNotFound(key='id=%s' % compute_node_id)
    return get(context, compute_node_id)


@facade.writer
def destroy(context, compute_node_id):
    """Soft-delete a compute node; return its row as deleted."""
    row = utils.soft_delete_row(context, _TABLE, compute_node_id)
    if row is None:
        raise exception.ComputeNodeNotFound(key='id=%s' % compute_node_id)
    return _from_row(row)


@facade.writer
def set_uuid_if_missing(context, compute_node_id, uuid):
    """Give a legacy row ``uuid`` unless it got one meanwhile; return it.

    A compare-and-swap (``WHERE uuid IS NULL``), so two readers filling
    the same row concurrently agree on the winner's uuid.
    """
    context.session.execute(
        sa.update(_TABLE)
        .where(_TABLE.c.id == compute_node_id, _TABLE.c.uuid.is_(None))
        .values(uuid=uuid))
    return context.session.execute(
        sa.select(_TABLE.c.uuid).where(_TABLE.c.id == compute_node_id)
    ).scalar_one()


@facade.writer
def backfill_uuids(context, max_count):
    """Online migration: give up to ``max_count`` legacy rows a uuid.

    Returns (found, done). Re-runnable: only rows still lacking one match.
    """
    ids = context.session.execute(
        sa.select(_TABLE.c.id)
        .where(_TABLE.c.uuid.is_(None), _TABLE.c.deleted == 0)
        .order_by(_TABLE.c.id).limit(max_count)).scalars().all()
    done = 0
    for compute_node_id in ids:
        done += context.session.execute(
            sa.update(_TABLE)
            .where(_TABLE.c.id == compute_node_id, _TABLE.c.uuid.is_(None))
            .values(uuid=uuidutils.generate_uuid())).rowcount
    return len(ids), done


def _empty(column):
    return sa.or_(column.is_(None), column == 0.0)


@facade.writer
def fill_empty_ratios(context, max_count, defaults):
    """Online migration: set NULL or 0.0 allocation ratios to ``defaults``.

    ``defaults`` maps 'cpu', 'ram' and 'disk' to ratios. Old code stored
    0.0 to mean "use the configured value"; this writes that value.
    Returns (found, done) counted in rows.
    """
    ids = context.session.execute(
        sa.select(_TABLE.c.id)
        .where(_TABLE.c.deleted == 0,
               sa.or_(*(_empty(_TABLE.c[c]) for c in RATIO_COLUMNS)))
        .order_by(_TABLE.c.id).limit(max_count)).scalars().all()
    if not ids:
        return 0, 0
    for column in RATIO_COLUMNS:
        resource = column.split('_', 1)[0]
        context.session.execute(
            sa.update(_TABLE)
            .where(_TABLE.c.id.in_(ids), _empty(_TABLE.c[column]))
            .values({column: defaults[resource]}))
    return len(ids), len(ids)
