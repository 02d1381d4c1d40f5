"""The statements of the allocation write path.

Plain SQLAlchemy Core statements over the allocation, consumer and
provider tables: no context, no session, nothing runs here.
``resobj.db.api.allocation`` runs them (its docstring says in which
steps); each is built once per shape (the lengths of the lists it
binds, see sql.resource_provider.in_list) and cached.
"""

import functools

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from resobj.db.models import allocation as alloc_models
from resobj.db.models import consumer as consumer_models
from resobj.db.models import resource_class as rc_models
from resobj.db.sql import resource_provider as sql

ALLOC = alloc_models.Allocation.__table__
INV = sql.INV
RP = sql.RP
RC = rc_models.ResourceClass.__table__
CONSUMER = consumer_models.Consumer.__table__
PROJECT = consumer_models.Project.__table__
USER = consumer_models.User.__table__
TYPE = consumer_models.ConsumerType.__table__


@functools.lru_cache(maxsize=128)
def snapshot_query(fresh, counts):
    """Step 1's query; binds consumer_ids, rp_ids (new) and rc_ids.

    ``fresh``: the consumers were created in this transaction and hold
    nothing, so their rows need not be looked for: a simpler statement,
    which PostgreSQL plans in a fraction of the time. ``counts``: the
    lengths of the three lists, in that order, or None (see
    sql.resource_provider.in_list).
    """
    n_consumers, n_rps, n_rcs = counts or (None, None, None)

    def in_rp_ids(column):
        return sql.in_list(column, 'rp_ids', n_rps)

    def in_consumer_ids(column):
        return sql.in_list(column, 'consumer_ids', n_consumers)

    def sums(condition):
        """Allocations per (provider, class) where ``condition`` holds."""
        return (
            sa.select(ALLOC.c.resource_provider_id,
                      ALLOC.c.resource_class_id,
                      sa.func.sum(ALLOC.c.used).label('used'))
            .where(condition)
            .group_by(ALLOC.c.resource_provider_id,
                      ALLOC.c.resource_class_id)
            .subquery())

    def of_this_inventory(sub):
        return sa.and_(sub.c.resource_provider_id == RP.c.id,
                       sub.c.resource_class_id == INV.c.resource_class_id)

    inventory = sa.and_(
        INV.c.resource_provider_id == RP.c.id,
        sql.in_list(INV.c.resource_class_id, 'rc_ids', n_rcs))
    # The inventory's usage is its own column (see INV).
    columns = (INV.c.resource_class_id, INV.c.total, INV.c.reserved,
               INV.c.min_unit, INV.c.max_unit, INV.c.step_size,
               INV.c.allocation_ratio, INV.c.used)
    if fresh:
        return (
            sa.select(RP.c.id, RP.c.uuid, RP.c.generation,
                      sa.false().label('held'), *columns,
                      sa.literal(0, sa.Integer))
            .select_from(RP.outerjoin(INV, inventory))
            .where(in_rp_ids(RP.c.id)))
    held = (sa.select(ALLOC.c.resource_provider_id)
            .where(in_consumer_ids(ALLOC.c.consumer_id)))
    # Two ways in, each on an index: a UNION rather than an OR, which
    # PostgreSQL could only answer by scanning every provider.
    involved = sa.union(
        held, sa.select(RP.c.id).where(in_rp_ids(RP.c.id))).subquery()
    # The consumers' share from the consumer index.
    own = sums(in_consumer_ids(ALLOC.c.consumer_id))
    return (
        sa.select(RP.c.id, RP.c.uuid, RP.c.generation,
                  RP.c.id.in_(held).label('held'), *columns,
                  sa.func.coalesce(own.c.used, 0))
        .select_from(
            involved.join(RP, RP.c.id == involved.c[0])
            .outerjoin(INV, inventory)
            .outerjoin(own, of_this_inventory(own))))


@functools.lru_cache(maxsize=32)
def delete_query(counts):
    """Delete the rows of ``consumer_ids`` (``counts``: see in_list)."""
    return sa.delete(ALLOC).where(sql.in_list(
        ALLOC.c.consumer_id, 'consumer_ids', counts and counts[0]))


# Rows inserted as they are (where WITH clauses cannot write).
INSERT = sa.insert(ALLOC)


def seen_params(seen):
    """(count, values) binding the (id, generation) pairs of bump_query."""
    counts, values = sql.list_params({
        'seen_id': [rp_id for rp_id, _gen in seen],
        'seen_gen': [gen for _rp_id, gen in seen]})
    if counts is None:
        # Too many for one parameter each: the pairs as one expanding
        # parameter of tuples.
        return None, {'seen': seen}
    return counts[0], values


@functools.lru_cache(maxsize=64)
def bump_query(count, returning=False):
    """Compare-and-swap the generations of ``count`` providers.

    ``count`` None: the (id, generation) pairs are one expanding
    parameter ``seen``; see :func:`seen_params` and
    sql.resource_provider.in_list.
    """
    pair = sa.tuple_(RP.c.id, RP.c.generation)
    if count is None:
        seen = pair.in_(sa.bindparam('seen', expanding=True))
    else:
        seen = pair.in_([
            sa.tuple_(sa.bindparam('seen_id_%d' % i),
                      sa.bindparam('seen_gen_%d' % i))
            for i in range(count)])
    bump = _bump(seen)
    return bump.returning(RP.c.id) if returning else bump


def _bump(seen):
    """UPDATE the providers where ``seen`` holds to their next generation.

    ``updated_at`` kept: a usage change is not an update of the provider.
    """
    return sa.update(RP).where(seen).values(
        generation=RP.c.generation + 1, updated_at=RP.c.updated_at)


def _array(name, item_type):
    return sa.bindparam(name, type_=postgresql.ARRAY(item_type))


def _insert_rows(rows):
    """INSERT the (provider, consumer, class, used, now) rows ``rows``.

    ``rows``: a SELECT of those five columns, in that order.
    """
    return sa.insert(ALLOC).from_select(
        ['resource_provider_id', 'consumer_id', 'resource_class_id',
         'used', 'created_at'], rows)


@functools.lru_cache(maxsize=32)
def insert_with_bump_query(count):
    """WITH inserted AS (INSERT the rows) UPDATE ... RETURNING id.

    PostgreSQL only. The rows come as four parallel integer arrays
    (``:rps``, ``:consumers``, ``:rcs``, ``:useds``), so the statement
    is the same for any number of rows; ``count``: see bump_query.
    """
    rows = sa.func.unnest(
        *(_array(name, sa.Integer)
          for name in ('rps', 'consumers', 'rcs', 'useds')),
    ).table_valued('rp', 'consumer', 'rc', 'used').render_derived()
    inserted = _insert_rows(
        sa.select(rows.c.rp, rows.c.consumer, rows.c.rc, rows.c.used,
                  sa.bindparam('now', type_=sa.DateTime)),
    ).cte('inserted')
    return bump_query(count, returning=True).add_cte(inserted)


@functools.lru_cache(maxsize=128)
def ids_query(counts, create=None):
    """``counts``: the lengths of the lists of :func:`_ids`, or None.

    ``create``: None, or whether the consumer to create has a type (see
    :func:`create_consumer_query`).
    """
    n = dict(zip(('uuids', 'names', 'projects', 'users', 'types',
                  'consumers'), counts or (None,) * 6))
    branches = [
        sql.ids_of('rp', RP.c.uuid, 'uuids', count=n['uuids']),
        sql.ids_of('rc', RC.c.name, 'names', count=n['names']),
        # The owners of a new consumer: known for all but the first
        # consumer of a project, user or type, and then read here for
        # free rather than by a statement of their own.
        sql.ids_of('project', PROJECT.c.external_id, 'projects',
                   count=n['projects']),
        sql.ids_of('user', USER.c.external_id, 'users', count=n['users']),
        sql.ids_of('type', TYPE.c.name, 'types', count=n['types']),
        # Which consumers exist: a new one needs no lookup.
        sql.ids_of('consumer', CONSUMER.c.uuid, 'consumers',
                   count=n['consumers'])]
    if create is None:
        return sa.union_all(*branches)
    created = create_consumer_query(create)
    branches.append(sa.select(
        sa.literal_column("'created'"), sa.cast(sa.null(), sa.String),
        created.c.id))
    return sa.union_all(*branches).add_cte(created)


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
    criteria = [PROJECT.c.external_id == sa.bindparam('new_project'),
                USER.c.external_id == sa.bindparam('new_user')]
    type_id = sa.cast(sa.null(), sa.Integer)
    # One row of each, by a unique key: the join is the product.
    owners = PROJECT.join(USER, sa.true())
    if typed:
        criteria.append(TYPE.c.name == sa.bindparam('new_type'))
        type_id = TYPE.c.id
        owners = owners.join(TYPE, sa.true())
    if when is not None:
        criteria.append(when)
    owners = sa.select(
        sa.bindparam('new_uuid', type_=sa.String), PROJECT.c.id,
        USER.c.id, type_id, sa.literal(1, sa.Integer),
        sa.bindparam('now', type_=sa.DateTime)).select_from(owners).where(
            *criteria)
    return (
        postgresql.insert(CONSUMER)
        .from_select(['uuid', 'project_id', 'user_id', 'consumer_type_id',
                      'generation', 'created_at'], owners)
        .on_conflict_do_nothing(index_elements=['uuid'])
        .returning(CONSUMER.c.id)
        .cte('new_consumer'))


@functools.lru_cache(maxsize=2)
def claim_query(typed):
    """A new consumer's whole claim as one statement (PostgreSQL).

    The claim a scheduler makes for every boot, a new consumer whose
    project and user (and type, if ``typed``) exist, allocating on
    providers and classes that exist, is most of a cloud's writes. On a
    backend whose WITH clauses hold INSERT and UPDATE
    (``WRITES_IN_WITH``) this statement does all of the write path's
    steps for it:

    * it reads each requested (provider, class) with its inventory,
      keeping the rows that fit the rule of sql.resource_provider.fits (a new
      consumer holds nothing, so its whole amount must fit);
    * only if every requested row fits, it inserts the consumer at
      generation 1 (:func:`create_consumer_query`: not if it exists);
    * with the consumer's id, the allocations, in (provider, class)
      order as every writer locks inventories;
    * and, if the consumer was inserted, it compare-and-swaps each
      provider's generation against the one it read.

    So it writes the whole claim or nothing, except where a provider's
    generation moved under it (a concurrent writer): the caller sees
    that in the answer and rolls the transaction back. Whatever it does
    not write (an unknown name, a unit rule, capacity, a new owner, a
    consumer that exists), the caller's general path handles and words.

    Binds the consumer's values (see :func:`create_consumer_query`),
    ``now``, the requested rows as three parallel arrays (``rp_uuids``,
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
    rp = (sa.select(RP.c.id, RP.c.uuid, RP.c.generation)
          .where(RP.c.uuid == asked.c.rp_uuid).offset(0).lateral('rp'))
    rc = (sa.select(RC.c.id).where(RC.c.name == asked.c.rc_name)
          .offset(0).lateral('rc'))
    # The inventory that fits, by its unique index, likewise.
    room = (sa.select(INV.c.id)
            .where(INV.c.resource_provider_id == rp.c.id,
                   INV.c.resource_class_id == rc.c.id,
                   sql.fits(asked.c.used, INV.c.used, INV.c.min_unit,
                            INV.c.max_unit, INV.c.step_size,
                            sql.usable(INV)))
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
    inserted = _insert_rows(
        sa.select(fitting.c.rp_id, created.c.id, fitting.c.rc_id,
                  fitting.c.used, sa.bindparam('now', type_=sa.DateTime))
        .select_from(fitting.join(created, sa.true()))
        .order_by(fitting.c.rp_id, fitting.c.rc_id),
    ).cte('inserted')
    seen = sa.select(fitting.c.rp_id, fitting.c.generation)
    bumped = (
        _bump(sa.and_(sa.tuple_(RP.c.id, RP.c.generation).in_(seen),
                      sa.exists(sa.select(created.c.id))))
        .returning(RP.c.id)
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
