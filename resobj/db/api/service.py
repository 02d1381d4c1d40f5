"""Queries on the services table."""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import service as models
from resobj import exception

_TABLE = models.Service.__table__


def _get_one(context, key, *criteria):
    return utils.get_one(context, _TABLE, exception.ServiceNotFound, key,
                         *criteria)


@facade.reader
def get(context, service_id):
    return _get_one(context, 'id=%s' % service_id, _TABLE.c.id == service_id)


@facade.reader
def get_by_uuid(context, uuid):
    return _get_one(context, 'uuid=%s' % uuid, _TABLE.c.uuid == uuid)


@facade.reader
def get_by_host_and_binary(context, host, binary):
    return _get_one(context, '%s/%s' % (host, binary),
                    _TABLE.c.host == host, _TABLE.c.binary == binary)


@facade.reader
def get_all(context, binary=None, include_disabled=True):
    criteria = []
    if binary is not None:
        criteria.append(_TABLE.c.binary == binary)
    if not include_disabled:
        criteria.append(_TABLE.c.disabled == sa.false())
    return utils.fetch_all(
        context, utils.select(context, _TABLE, *criteria)
        .order_by(_TABLE.c.id))


@facade.writer
def create(context, values):
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    try:
        service_id = utils.insert(context, _TABLE, values)
    except db_exc.DBDuplicateEntry:
        raise exception.ServiceExists(host=values.get('host'),
                                      binary=values.get('binary'))
    return get(context, service_id)


@facade.writer
def update(context, service_id, values):
    try:
        count = utils.update_live(context, _TABLE, values,
                                  _TABLE.c.id == service_id)
    except db_exc.DBDuplicateEntry:
        raise exception.ServiceExists(host=values.get('host'),
                                      binary=values.get('binary'))
    if not count:
        raise exception.ServiceNotFound(key='id=%s' % service_id)
    return get(context, service_id)


@facade.writer
def destroy(context, service_id):
    """Soft-delete a service; return its row as deleted."""
    row = utils.soft_delete_row(context, _TABLE, service_id)
    if row is None:
        raise exception.ServiceNotFound(key='id=%s' % service_id)
    return row


@facade.reader
def get_minimum_version(context, binaries):
    """{binary: lowest version among its live, not forced-down services}.

    A binary with no such service maps to 0, which no real service
    reports, so callers comparing against a required version stay safe.
    """
    rows = utils.execute(
        context,
        sa.select(_TABLE.c.binary, sa.func.min(_TABLE.c.version))
        .where(_TABLE.c.binary.in_(list(binaries)),
               _TABLE.c.deleted == 0,
               _TABLE.c.forced_down == sa.false())
        .group_by(_TABLE.c.binary))
    found = dict(rows.all())
    return {binary: found.get(binary) or 0 for binary in binaries}
