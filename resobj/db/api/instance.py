"""Queries on the instances table."""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import instance as models
from resobj import exception

_TABLE = models.Instance.__table__

# Columns holding JSON; callers see and give plain values.
JSON_COLUMNS = ('numa_topology', 'pci_requests')

# expected_task_state when the caller does not care: a string no task
# state takes, so that it shows the same in every method signature.
ANY_TASK_STATE = '<any>'


def _from_row(row):
    if row is not None:
        for name in JSON_COLUMNS:
            row[name] = utils.json_or_none(row.get(name))
    return row


def _to_db(values):
    values = dict(values)
    for name in JSON_COLUMNS:
        if name in values:
            values[name] = utils.json_text_or_none(values[name])
    return values


def _get_one(context, key, *criteria):
    return _from_row(utils.get_one(
        context, _TABLE, exception.InstanceNotFound, key, *criteria))


@facade.reader
def get(context, instance_id):
    return _get_one(context, 'id=%s' % instance_id,
                    _TABLE.c.id == instance_id)


@facade.reader
def get_by_uuid(context, uuid):
    return _get_one(context, uuid, _TABLE.c.uuid == uuid)


@facade.reader
def get_all_by_host_and_node(context, host, node):
    return [_from_row(row) for row in utils.fetch_all(context, utils.select(
        context, _TABLE, _TABLE.c.host == host, _TABLE.c.node == node
    ).order_by(_TABLE.c.id))]


@facade.reader
def get_all_by_uuids(context, uuids):
    if not uuids:
        return []
    return [_from_row(row) for row in utils.fetch_all(context, utils.select(
        context, _TABLE, _TABLE.c.uuid.in_(list(uuids))
    ).order_by(_TABLE.c.id))]


@facade.writer
def create(context, values):
    try:
        instance_id = utils.insert(context, _TABLE, _to_db(values))
    except db_exc.DBDuplicateEntry:
        raise exception.InstanceExists(uuid=values.get('uuid'))
    return get(context, instance_id)


def _task_state_matches(expected):
    if expected is None:
        return _TABLE.c.task_state.is_(None)
    if isinstance(expected, (list, tuple, set, frozenset)):
        states = [s for s in expected if s is not None]
        clause = _TABLE.c.task_state.in_(states)
        if None in expected:
            clause = sa.or_(clause, _TABLE.c.task_state.is_(None))
        return clause
    return _TABLE.c.task_state == expected


@facade.writer
def update(context, uuid, values, expected_task_state=ANY_TASK_STATE):
    """Update a live instance; with ``expected_task_state``, atomically.

    ``expected_task_state`` (a state, None, or a collection of them) makes
    the update a compare-and-swap: it applies only if the row's task_state
    is one of them, else UnexpectedTaskState names what was found.
    """
    criteria = [_TABLE.c.uuid == uuid]
    if expected_task_state is not ANY_TASK_STATE:
        criteria.append(_task_state_matches(expected_task_state))
    count = utils.update_live(context, _TABLE, _to_db(values), *criteria)
    if not count:
        current = get_by_uuid(context, uuid)
        raise exception.UnexpectedTaskState(
            uuid=uuid, expected=expected_task_state,
            actual=current['task_state'])
    return get_by_uuid(context, uuid)


@facade.writer
def destroy(context, uuid):
    """Soft-delete an instance; return its row as deleted."""
    if not utils.soft_delete(context, _TABLE, _TABLE.c.uuid == uuid):
        raise exception.InstanceNotFound(key=uuid)
    return _from_row(utils.fetch_one(context, sa.select(_TABLE).where(
        _TABLE.c.uuid == uuid).order_by(_TABLE.c.id.desc())))
