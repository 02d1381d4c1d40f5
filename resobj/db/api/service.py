"""Queries on the services table."""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import base as models_base
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


@facade.writer
def register(context, host, binary, version, topic=None):
    """Create or update the live service of (host, binary) as started now.

    Sets ``version`` and ``last_seen_up`` (this process's clock, as for
    :func:`heartbeat`), and ``topic`` when given; everything else a row
    already has (disabled, forced_down, report_count) stays. Returns the
    row. A service starting concurrently under the same key ends up as
    the same row: the insert runs in a savepoint, and losing it to the
    other writer's insert turns into the update.
    """
    values = {'version': version, 'last_seen_up': models_base.utcnow()}
    if topic is not None:
        values['topic'] = topic
    if not _update_registered(context, host, binary, values):
        try:
            with context.session.begin_nested():
                return create(context, dict(values, host=host,
                                            binary=binary))
        except exception.ServiceExists:
            # Another start of the same service won the insert: update
            # its row. Else the topic is another live service's.
            if not _update_registered(context, host, binary, values):
                raise
    return get_by_host_and_binary(context, host, binary)


def _update_registered(context, host, binary, values):
    try:
        return utils.update_live(context, _TABLE, values,
                                 _TABLE.c.host == host,
                                 _TABLE.c.binary == binary)
    except db_exc.DBDuplicateEntry:
        raise exception.ServiceExists(host=host, binary=binary)


@facade.writer
def heartbeat(context, service_id, version):
    """Record that a live service of ``version`` reported now; its row.

    ``last_seen_up`` is stamped with the clock of the process that has
    database access, which :func:`get_minimum_version` compares it with,
    not the clock of a node that reports through another service; so
    one node's skewed clock cannot make it look down. ``report_count``
    is incremented in the statement itself, so concurrent reports are
    all counted. ``version`` is written each time: a node rolled back
    and reporting through a conductor shows its own version at once.
    """
    count = utils.update_live(
        context, _TABLE,
        {'last_seen_up': models_base.utcnow(), 'version': version,
         'report_count': _TABLE.c.report_count + 1},
        _TABLE.c.id == service_id)
    if not count:
        raise exception.ServiceNotFound(key='id=%s' % service_id)
    return get(context, service_id)


def _up(down_time):
    """Not forced down, and reported within ``down_time`` seconds.

    One that never reported (NULL: code from before services reported)
    cannot be told dead from alive and counts as up. The one rule of
    liveness: the version gate and resobj-status both use it.
    """
    since = models_base.utcnow() - datetime.timedelta(seconds=down_time)
    return sa.and_(_TABLE.c.forced_down == sa.false(),
                   sa.or_(_TABLE.c.last_seen_up.is_(None),
                          _TABLE.c.last_seen_up >= since))


@facade.reader
def get_minimum_version(context, binaries, down_time=None):
    """{binary: lowest version among its live, not forced-down services}.

    With ``down_time`` (seconds), a service whose ``last_seen_up`` is
    older than that is down and left out; one that never reported (NULL:
    code from before services reported) cannot be told dead from alive
    and counts. None counts every live row. One grouped query.

    A binary with no such service maps to 0, which no real service
    reports, so callers comparing against a required version stay safe.
    """
    criteria = [_TABLE.c.binary.in_(list(binaries)),
                _TABLE.c.deleted == 0]
    if down_time is not None:
        criteria.append(_up(down_time))
    else:
        criteria.append(_TABLE.c.forced_down == sa.false())
    rows = utils.execute(
        context,
        sa.select(_TABLE.c.binary, sa.func.min(_TABLE.c.version))
        .where(*criteria)
        .group_by(_TABLE.c.binary))
    found = dict(rows.all())
    return {binary: found.get(binary) or 0 for binary in binaries}


def _with_liveness(down_time):
    """The columns resobj-status shows of a service, and whether it is up.

    ``live`` is up by :func:`_up` with ``down_time`` seconds; a CASE
    rather than the bare condition: a boolean column on every backend,
    MySQL's integers included.
    """
    live = sa.type_coerce(sa.case((_up(down_time), 1), else_=0),
                          sa.Boolean)
    return sa.select(_TABLE.c.binary, _TABLE.c.host, _TABLE.c.version,
                     _TABLE.c.last_seen_up, _TABLE.c.forced_down,
                     _TABLE.c.disabled, live.label('live'))


@facade.reader
def older_than(context, version, down_time):
    """The services below service version ``version``, up or not.

    Rows with ``binary``, ``host``, ``version``, ``last_seen_up``,
    ``forced_down``, ``disabled`` and ``live`` (up by :func:`_up` with
    ``down_time`` seconds), of every service not deleted whose version is
    below ``version``, oldest version first, then by binary and host. For
    resobj-status: a service that stopped reporting no longer holds the
    cloud back, one that still reports does.
    """
    return utils.execute(
        context,
        _with_liveness(down_time)
        .where(_TABLE.c.deleted == 0, _TABLE.c.version < version)
        .order_by(_TABLE.c.version, _TABLE.c.binary, _TABLE.c.host)).all()


@facade.reader
def get_all_with_liveness(context, down_time):
    """Every service not deleted, as :func:`older_than` gives them.

    By binary, then host: what resobj-status lists.
    """
    return utils.execute(
        context,
        _with_liveness(down_time).where(_TABLE.c.deleted == 0)
        .order_by(_TABLE.c.binary, _TABLE.c.host)).all()
