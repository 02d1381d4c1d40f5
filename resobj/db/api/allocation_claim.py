"""A new consumer's claim in one statement, where WITH clauses write.

The claim a scheduler makes for every boot, a new consumer (its expected
generation None) whose project and user exist, allocating on providers
and classes that exist, is most of a cloud's writes. On a backend whose
WITH clauses hold INSERT and UPDATE (``WRITES_IN_WITH``: PostgreSQL)
one statement does all of :func:`resobj.db.api.allocation.replace_all`'s
work for it:

* it reads each requested (provider, class) with its inventory, keeping
  the rows that fit: the unit rules and capacity of
  :func:`resobj.db.provider_sql.fits` (a new consumer holds nothing, so
  its whole amount must fit);
* only if every requested row fits, it inserts the consumer at
  generation 1 (``ON CONFLICT DO NOTHING``: not if it exists);
* with the consumer's id, the allocations, in (provider, class) order
  as every writer locks inventories (see resobj.db.api.allocation);
* and, if the consumer was inserted, it compare-and-swaps each
  provider's generation against the one it read.

So the statement writes the whole claim or nothing, except for a
provider whose generation moved under it (a concurrent writer), which
the caller sees in its answer and turns into a rolled-back transaction
and a retry. When it inserts nothing, for whatever reason (an unknown
name, a unit rule, capacity, an owner or the consumer not new), the
caller runs the general path in the same transaction, which words the
error as placement does: the statement never has to.

A claim is then BEGIN, one statement and COMMIT, where the general path
takes three statements (the ids, the read and check, the insert with
the bump).
"""

import functools

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from resobj.db import backends
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import consumer as consumer_models
from resobj.db.models import resource_class as rc_models
from resobj.db import provider_sql as sql
from resobj import exception

_ALLOC = alloc_models.Allocation.__table__
_RC = rc_models.ResourceClass.__table__
_CONSUMER = consumer_models.Consumer.__table__
_PROJECT = consumer_models.Project.__table__
_USER = consumer_models.User.__table__
_TYPE = consumer_models.ConsumerType.__table__


def create_consumer_query(typed, when=None):
    """Insert consumer ``:new_uuid`` if its owners exist and it does not.

    PostgreSQL only, as a data-modifying WITH of another statement: a
    consumer whose project and user (and type, if ``typed``) are known
    needs no INSERT of its own, a round trip fewer. ``when``: a further
    condition of the insert. Returns the CTE, whose ``id`` is the new
    consumer's, or nothing if it was not inserted: an owner is new, the
    consumer exists (ON CONFLICT DO NOTHING: committed by another
    transaction since, which the caller then meets as a duplicate), or
    ``when`` does not hold.
    """
    criteria = [_PROJECT.c.external_id == sa.bindparam('new_project'),
                _USER.c.external_id == sa.bindparam('new_user')]
    type_id = sa.cast(sa.null(), sa.Integer)
    # One row of each, by a unique key: the join is the product.
    owners = _PROJECT.join(_USER, sa.true())
    if typed:
        criteria.append(_TYPE.c.name == sa.bindparam('new_type'))
        type_id = _TYPE.c.id
        owners = owners.join(_TYPE, sa.true())
    if when is not None:
        criteria.append(when)
    owners = sa.select(
        sa.bindparam('new_uuid', type_=sa.String), _PROJECT.c.id,
        _USER.c.id, type_id, sa.literal(1, sa.Integer),
        sa.bindparam('now', type_=sa.DateTime)).select_from(owners).where(
            *criteria)
    return (
        postgresql.insert(_CONSUMER)
        .from_select(['uuid', 'project_id', 'user_id', 'consumer_type_id',
                      'generation', 'created_at'], owners)
        .on_conflict_do_nothing(index_elements=['uuid'])
        .returning(_CONSUMER.c.id)
        .cte('new_consumer'))


def _array(name, item_type):
    return sa.bindparam(name, type_=postgresql.ARRAY(item_type))


@functools.lru_cache(maxsize=2)
def _claim_query(typed):
    """The claim statement; ``typed``: the consumer has a type.

    Binds the consumer's (see :func:`create_consumer_query`), ``now``,
    the requested rows as three parallel arrays (``rp_uuids``,
    ``rc_names``, ``amounts``: one statement for any number of rows)
    and ``rows``, their number. Answers one row per requested provider
    if the consumer was inserted, none otherwise: the consumer's id,
    the provider's uuid, the generation read and whether the
    compare-and-swap bumped it.
    """
    asked = sa.func.unnest(
        _array('rp_uuids', sa.String), _array('rc_names', sa.String),
        _array('amounts', sa.Integer),
    ).table_valued('rp_uuid', 'rc_name', 'used').render_derived('asked')
    # Each name by its unique index, row by row: a LATERAL subquery
    # behind a fence (OFFSET 0 keeps the planner from merging it into
    # the join). Left to choose, a planner that does not know how few
    # rows the arrays hold reads every provider, or every inventory of
    # the classes, to find the few asked for.
    rp = (sa.select(sql.RP.c.id, sql.RP.c.uuid, sql.RP.c.generation)
          .where(sql.RP.c.uuid == asked.c.rp_uuid).offset(0).lateral('rp'))
    rc = (sa.select(_RC.c.id).where(_RC.c.name == asked.c.rc_name)
          .offset(0).lateral('rc'))
    # The inventory that fits, by its unique index, likewise.
    inv = sql.INV
    room = (sa.select(inv.c.id)
            .where(inv.c.resource_provider_id == rp.c.id,
                   inv.c.resource_class_id == rc.c.id,
                   sql.fits(asked.c.used, inv.c.used, inv.c.min_unit,
                            inv.c.max_unit, inv.c.step_size,
                            sql.usable(inv)))
            .offset(0).lateral('room'))
    fitting = (
        sa.select(rp.c.id.label('rp_id'), rp.c.uuid, rp.c.generation,
                  rc.c.id.label('rc_id'), asked.c.used)
        .select_from(asked.join(rp, sa.true()).join(rc, sa.true())
                     .join(room, sa.true()))
        .cte('fitting'))
    every_row_fits = sa.select(sa.func.count()).select_from(
        fitting).scalar_subquery() == sa.bindparam('rows')
    created = create_consumer_query(typed, when=every_row_fits)
    inserted = sa.insert(_ALLOC).from_select(
        ['resource_provider_id', 'consumer_id', 'resource_class_id',
         'used', 'created_at'],
        sa.select(fitting.c.rp_id, created.c.id, fitting.c.rc_id,
                  fitting.c.used, sa.bindparam('now', type_=sa.DateTime))
        .select_from(fitting.join(created, sa.true()))
        .order_by(fitting.c.rp_id, fitting.c.rc_id),
    ).cte('inserted')
    seen = sa.select(fitting.c.rp_id, fitting.c.generation)
    # ``updated_at`` kept: a usage change is not an update of the
    # provider.
    bumped = (
        sa.update(sql.RP)
        .where(sa.tuple_(sql.RP.c.id, sql.RP.c.generation).in_(seen),
               sa.exists(sa.select(created.c.id)))
        .values(generation=sql.RP.c.generation + 1,
                updated_at=sql.RP.c.updated_at)
        .returning(sql.RP.c.id)
        .cte('bumped'))
    providers = sa.select(fitting.c.rp_id, fitting.c.uuid,
                          fitting.c.generation).distinct().subquery()
    return (
        sa.select(created.c.id.label('consumer_id'), providers.c.uuid,
                  providers.c.generation,
                  bumped.c.id.is_not(None).label('bumped'))
        .select_from(
            created.join(providers, sa.true())
            .outerjoin(bumped, bumped.c.id == providers.c.rp_id))
        .add_cte(inserted))


def applies(context, requests):
    """Whether ``requests`` are a claim :func:`claim` can make.

    One new consumer (generation None: the caller asserts it is new)
    allocating a positive amount of each requested (provider, class),
    each pair once, on a backend whose WITH clauses write.
    """
    if len(requests) != 1:
        return False
    request = requests[0]
    allocations = request['allocations']
    if request.get('generation', '') is not None or not allocations:
        return False
    pairs = {(a['resource_provider_uuid'], a['resource_class'])
             for a in allocations if a['used'] > 0}
    if len(pairs) != len(allocations):
        return False
    return backends.for_dialect(
        context.session.get_bind().dialect.name).WRITES_IN_WITH


def claim(conn, request):
    """Make the claim ``request`` (see :func:`applies`) in one statement.

    ``conn``: the writer transaction's Core connection. Returns
    ``replace_all``'s answer ({consumer uuid: 1}, {provider uuid: new
    generation}), or None if the statement wrote nothing: the caller
    then takes the general path in the same transaction. A provider
    whose generation moved since the statement read it raises
    ResourceProviderConcurrentUpdateDetected, for the caller to roll
    back and retry.
    """
    allocations = request['allocations']
    typed = request.get('consumer_type') is not None
    values = {
        'new_uuid': request['consumer_uuid'],
        'new_project': request['project_id'],
        'new_user': request['user_id'],
        'now': base.utcnow(),
        'rp_uuids': [a['resource_provider_uuid'] for a in allocations],
        'rc_names': [a['resource_class'] for a in allocations],
        'amounts': [a['used'] for a in allocations],
        'rows': len(allocations)}
    if typed:
        values['new_type'] = request['consumer_type']
    found = conn.execute(_claim_query(typed), values).all()
    if not found:
        return None
    for row in found:
        if not row.bumped:
            raise exception.ResourceProviderConcurrentUpdateDetected(
                provider=row.uuid, generation=row.generation)
    return ({request['consumer_uuid']: 1},
            {row.uuid: row.generation + 1 for row in found})
