"""Queries on the flavors table.

``extra_specs`` is a dict of strings to callers and JSON text in the
column; this module is the only place that knows the encoding.
"""

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
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


def _get_one(context, key, *criteria):
    return _decode(utils.get_one(context, _TABLE, exception.FlavorNotFound,
                                 key, *criteria))


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
        context, utils.select(context, _TABLE, *criteria)
        .order_by(_TABLE.c.id))]


@facade.writer
def create(context, values):
    try:
        flavor_id = utils.insert(context, _TABLE, _encode(values))
    except db_exc.DBDuplicateEntry:
        raise exception.FlavorExists(flavorid=values.get('flavorid'),
                                     name=values.get('name'))
    return get(context, flavor_id)


@facade.writer
def update(context, flavor_id, values):
    # Read first: it reports a missing flavor, and names both keys if the
    # change collides (after a failed statement PostgreSQL refuses further
    # reads in the transaction).
    current = get(context, flavor_id)
    try:
        count = utils.update_live(context, _TABLE, _encode(values),
                                  _TABLE.c.id == flavor_id)
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
    row = utils.soft_delete_row(context, _TABLE, flavor_id)
    if row is None:
        raise exception.FlavorNotFound(key='id=%s' % flavor_id)
    return _decode(row)
