"""Queries on the flavors table.

``extra_specs`` is a dict of strings to callers and JSON text in the
column; this module is the only place that knows the encoding.
"""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import base
from resobj.db.models import flavor as models
from resobj import exception

_TABLE = models.Flavor.__table__


def _decode(row):
    if row is not None:
        # NULL is what a row inserted without extra specs holds.
        text = row['extra_specs']
        row['extra_specs'] = jsonutils.loads(text) if text else {}
    return row


def _encode(values):
    values = dict(values)
    if 'extra_specs' in values:
        values['extra_specs'] = jsonutils.dumps(values['extra_specs'] or {},
                                                sort_keys=True)
    return values


def _select(context, *criteria):
    return utils.filter_deleted(
        context, _TABLE, sa.select(_TABLE).where(*criteria))


def _get_one(context, key, *criteria):
    row = utils.fetch_one(context, _select(context, *criteria))
    if row is None:
        raise exception.FlavorNotFound(key=key)
    return _decode(row)


@facade.reader
def get(context, flavor_id):
    return _get_one(context, 'id=%s' % flavor_id, _TABLE.c.id == flavor_id)


@facade.reader
def get_by_flavor_id(context, flavorid):
    return _get_one(context, 'flavorid=%s' % flavorid,
                    _TABLE.c.flavorid == flavorid)


@facade.reader
def get_by_name(context, name):
    return _get_one(context, 'name=%s' % name, _TABLE.c.name == name)


@facade.reader
def get_all(context, is_public=None, include_disabled=True):
    """Flavors in id order; ``is_public=None`` means public and private."""
    criteria = []
    if is_public is not None:
        criteria.append(_TABLE.c.is_public == sa.true() if is_public
                        else _TABLE.c.is_public == sa.false())
    if not include_disabled:
        criteria.append(_TABLE.c.disabled == sa.false())
    return [_decode(row) for row in utils.fetch_all(
        context, _select(context, *criteria).order_by(_TABLE.c.id))]


@facade.writer
def create(context, values):
    values = _encode(values)
    values.setdefault('created_at', base.utcnow())
    try:
        result = context.session.execute(sa.insert(_TABLE).values(values))
    except db_exc.DBDuplicateEntry:
        raise exception.FlavorExists(flavorid=values.get('flavorid'),
                                     name=values.get('name'))
    return get(context, result.inserted_primary_key[0])


@facade.writer
def update(context, flavor_id, values):
    # Read first: it reports a missing flavor, and names both keys if the
    # change collides (after a failed statement PostgreSQL refuses further
    # reads in the transaction).
    current = get(context, flavor_id)
    values = _encode(values)
    values.setdefault('updated_at', base.utcnow())
    try:
        count = context.session.execute(
            sa.update(_TABLE)
            .where(_TABLE.c.id == flavor_id, _TABLE.c.deleted == 0)
            .values(values)).rowcount
    except db_exc.DBDuplicateEntry:
        raise exception.FlavorExists(
            flavorid=values.get('flavorid', current['flavorid']),
            name=values.get('name', current['name']))
    if not count:
        # A context reading deleted rows found the flavor, but only live
        # flavors change.
        raise exception.FlavorNotFound(key='id=%s' % flavor_id)
    return get(context, flavor_id)


@facade.writer
def destroy(context, flavor_id):
    """Soft-delete a flavor; return its row as deleted."""
    if not utils.soft_delete(context, _TABLE, _TABLE.c.id == flavor_id):
        raise exception.FlavorNotFound(key='id=%s' % flavor_id)
    return _decode(utils.fetch_one(context, sa.select(_TABLE).where(
        _TABLE.c.id == flavor_id)))
