"""Queries on the pci_devices table.

Rows come back as dicts with ``extra_info`` decoded to a dict (``{}`` for
a NULL column); ``values`` passed in may hold ``extra_info`` as a dict,
which is stored as JSON text.
"""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import pci_device as models
from resobj import exception

_TABLE = models.PciDevice.__table__

# Written by destroy(): a soft-deleted row says what happened to it when
# read with read_deleted='yes'.
DELETED_STATUS = 'deleted'


def _decode(row):
    if row is not None:
        text = row.get('extra_info')
        row['extra_info'] = jsonutils.loads(text) if text else {}
    return row


def _encode(values):
    values = dict(values)
    if 'extra_info' in values:
        extra_info = values['extra_info']
        values['extra_info'] = (None if extra_info is None
                                else jsonutils.dumps(extra_info))
    return values


def _fetch_all(context, *criteria):
    return [_decode(row) for row in utils.fetch_all(
        context, utils.select(context, _TABLE, *criteria)
        .order_by(_TABLE.c.id))]


@facade.reader
def get(context, device_id):
    return _decode(utils.get_one(
        context, _TABLE, exception.PciDeviceNotFound, 'id=%s' % device_id,
        _TABLE.c.id == device_id))


@facade.reader
def get_all_by_compute_node(context, compute_node_id):
    return _fetch_all(context, _TABLE.c.compute_node_id == compute_node_id)


@facade.reader
def get_all_by_instance_uuid(context, instance_uuid):
    return _fetch_all(context, _TABLE.c.instance_uuid == instance_uuid)


@facade.writer
def create(context, values):
    try:
        device_id = utils.insert(context, _TABLE, _encode(values))
    except db_exc.DBDuplicateEntry:
        raise exception.PciDeviceExists(
            compute_node_id=values.get('compute_node_id'),
            address=values.get('address'))
    except db_exc.DBReferenceError:
        raise exception.PciDeviceComputeNodeNotFound(
            compute_node_id=values.get('compute_node_id'),
            address=values.get('address'))
    return get(context, device_id)


@facade.writer
def update(context, device_id, values, expected_status=None):
    """Update a live device; soft-deleted or missing raises NotFound.

    With ``expected_status`` the update is a compare-and-swap on the
    stored status: it applies only if the row still has that status,
    else PciDeviceStatusChanged is raised and nothing is written. Two
    trackers claiming one device cannot then both succeed.
    """
    # Read first: after a failed statement PostgreSQL refuses every query
    # in the transaction, so the error message's key must be known before.
    current = utils.fetch_one(context, sa.select(
        _TABLE.c.compute_node_id, _TABLE.c.address).where(
            _TABLE.c.id == device_id, _TABLE.c.deleted == 0))
    if current is None:
        raise exception.PciDeviceNotFound(key='id=%s' % device_id)
    key = {'compute_node_id': values.get('compute_node_id',
                                         current['compute_node_id']),
           'address': values.get('address', current['address'])}
    criteria = [_TABLE.c.id == device_id]
    if expected_status is not None:
        criteria.append(_TABLE.c.status == expected_status)
    try:
        count = utils.update_live(context, _TABLE, _encode(values),
                                  *criteria)
    except db_exc.DBDuplicateEntry:
        raise exception.PciDeviceExists(**key)
    except db_exc.DBReferenceError:
        raise exception.PciDeviceComputeNodeNotFound(**key)
    if not count:
        now = utils.fetch_one(context, sa.select(_TABLE.c.status).where(
            _TABLE.c.id == device_id, _TABLE.c.deleted == 0))
        if now is None:
            # Deleted by someone else between the read and the update.
            raise exception.PciDeviceNotFound(key='id=%s' % device_id)
        raise exception.PciDeviceStatusChanged(
            address=current['address'], expected=expected_status,
            actual=now['status'])
    return get(context, device_id)


@facade.writer
def destroy(context, device_id):
    """Soft-delete a device, marking it deleted; return its deleted row."""
    live = (_TABLE.c.id == device_id, _TABLE.c.deleted == 0)
    utils.execute(
        context,
        sa.update(_TABLE).where(*live)
        .values(status=DELETED_STATUS, updated_at=_TABLE.c.updated_at))
    row = utils.soft_delete_row(context, _TABLE, device_id)
    if row is None:
        raise exception.PciDeviceNotFound(key='id=%s' % device_id)
    return _decode(row)


@facade.retrying_writer()
def transition_all(context, device_ids, from_statuses, values,
                   instance_uuid=None):
    """Apply ``values`` to every device or to none, in one transaction.

    The devices are locked (SELECT ... FOR UPDATE, in id order so two
    writers cannot deadlock) and checked: each must be live, in one of
    ``from_statuses`` and, with ``instance_uuid``, held by that
    instance. The first that is not raises PciDeviceNotFound,
    PciDeviceInvalidStatus or PciDeviceInvalidOwner before anything is
    written. A writer that lost a race waits on the lock and then sees
    the winner's statuses. The UPDATE still compares and swaps every
    status (SQLite has no row locks; its writers are serialised instead)
    and rolls everything back if any row did not match. Readers never
    see part of the change; a deadlock (MariaDB's gap locks) is retried
    in a fresh transaction. Returns the rows afterwards, ordered by id.
    """
    ids = sorted(set(device_ids))
    if not ids:
        return []
    rows = {row['id']: row for row in utils.fetch_all(context, sa.select(
        _TABLE.c.id, _TABLE.c.address, _TABLE.c.status,
        _TABLE.c.instance_uuid).where(
            _TABLE.c.id.in_(ids), _TABLE.c.deleted == 0)
        .order_by(_TABLE.c.id).with_for_update())}
    _check(ids, rows, from_statuses, instance_uuid, values.get('status'))
    criteria = [_TABLE.c.id.in_(ids), _TABLE.c.status.in_(from_statuses)]
    if instance_uuid is not None:
        criteria.append(_TABLE.c.instance_uuid == instance_uuid)
    count = utils.update_live(context, _TABLE, _encode(values), *criteria)
    if count != len(ids):
        # Raising rolls back the rows that did change.
        raise exception.PciDeviceStatusChanged(
            address=', '.join(sorted(r['address'] for r in rows.values())),
            expected=', '.join(from_statuses), actual='changed concurrently')
    return _fetch_all(context, _TABLE.c.id.in_(ids))


def _check(ids, rows, from_statuses, instance_uuid, to_status):
    """Raise for the first device of ``ids`` that cannot move."""
    transition = to_status or 'update'
    for device_id in ids:
        row = rows.get(device_id)
        if row is None:
            raise exception.PciDeviceNotFound(key='id=%s' % device_id)
        if row['status'] not in from_statuses:
            raise exception.PciDeviceInvalidStatus(
                transition=transition, address=row['address'],
                status=row['status'], allowed=', '.join(from_statuses))
        if instance_uuid is not None and \
                row['instance_uuid'] != instance_uuid:
            raise exception.PciDeviceInvalidOwner(
                transition=transition, address=row['address'],
                instance_uuid=instance_uuid, owner=row['instance_uuid'])
