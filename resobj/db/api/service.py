"""Queries on the services table."""

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import base
from resobj.db.models import service as models
from resobj import exception

_TABLE = models.Service.__table__


def _select(context, *criteria):
    return utils.filter_deleted(
        context, _TABLE, sa.select(_TABLE).where(*criteria))


def _get_one(context, key, *criteria):
    row = utils.fetch_one(context, _select(context, *criteria))
    if row is None:
        raise exception.ServiceNotFound(key=key)
    return row


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
        context, _select(context, *criteria).order_by(_TABLE.c.id))


@facade.writer
def create(context, values):
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    values.setdefault('created_at', base.utcnow())
    try:
        result = context.session.execute(sa.insert(_TABLE).values(values))
    except db_exc.DBDuplicateEntry:
        raise exception.ServiceExists(host=values.get('host'),
                                      binary=values.get('binary'))
    return get(context, result.inserted_primary_key[0])


@facade.writer
def update(context, service_id, values):
    values = dict(values)
    values.setdefault('updated_at', base.utcnow())
    try:
        count = context.session.execute(
            sa.update(_TABLE)
            .where(_TABLE.c.id == service_id, _TABLE.c.deleted == 0)
            .values(values)).rowcount
    except db_exc.DBDuplicateEntry:
        raise exception.ServiceExists(host=values.get('host'),
                                      binary=values.get('binary'))
    if not count:
        raise exception.ServiceNotFound(key='id=%s' % service_id)
    return get(context, service_id)


@facade.writer
def destroy(context, service_id):
    """Soft-delete a service; return its row as deleted."""
    if not utils.soft_delete(context, _TABLE, _TABLE.c.id == service_id):
        raise exception.ServiceNotFound(key='id=%s' % service_id)
    return utils.fetch_one(context, sa.select(_TABLE).where(
        _TABLE.c.id == service_id))


@facade.reader
def get_minimum_version(context, binaries):
    """{binary: lowest version among its live, not forced-down services}.

    A binary with no such service maps to 0, which no real service
    reports, so callers comparing against a required version stay safe.
    """
    rows = context.session.execute(
        sa.select(_TABLE.c.binary, sa.func.min(_TABLE.c.version))
        .where(_TABLE.c.binary.in_(list(binaries)),
               _TABLE.c.deleted == 0,
               _TABLE.c.forced_down == sa.false())
        .group_by(_TABLE.c.binary))
    found = dict(rows.all())
    return {binary: found.get(binary) or 0 for binary in binaries}
