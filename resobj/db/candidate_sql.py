"""The statements of the allocation candidate search, built once per shape.

A request's statements depend on its *shape* (how many groups, how many
classes and aggregate or trait sets in each, whether it names a tree)
and not on its values (classes, amounts, aggregates, traits), which are
bound parameters. Building a SQLAlchemy statement and its cache key
costs more than running it on a small cloud, so each shape's statements
are built once per process (a bounded LRU) and run with new values;
SQLAlchemy's compiled cache then serves the SQL text too.

Parameter names: ``rc_<group>_<n>`` and ``amount_<group>_<n>`` for the
group's n-th class by class id; ``agg_<group>_<n>`` for its n-th
``member_of`` set, ``fagg_<group>`` its forbidden aggregates,
``ftrait_<group>`` its forbidden trait ids, ``rtrait_<group>_<n>`` a
single-provider group's n-th required set, ``tree_<group>`` the root
id of its ``in_tree``. :func:`params` computes them from the groups;
:func:`root_params` those of the request-wide ``root_required``:
``root_traits`` (and their number, ``root_trait_count``) and
``root_forbidden``.
"""

import functools
import json
import sqlite3

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from resobj.db import facade
from resobj.db.models import resource_class as rc_models
from resobj.db.models import trait as trait_models
from resobj.db import provider_sql as sql

RC = rc_models.ResourceClass.__table__
TRAIT = trait_models.Trait.__table__

# Above this many ids a list is written into the SQL rather than bound
# one parameter per id (MySQL, and SQLite without JSON functions, whose
# limit is 32,766 parameters).
MAX_BOUND_IDS = 30000

_CACHE_SIZE = 256

# The largest limit bound into a LIMIT clause (a signed 32-bit int, which
# every backend takes); a larger limit is no limit.
MAX_LIMIT = 2147483647


def shape(groups):
    """What the statements of ``groups`` depend on; hashable."""
    return tuple(
        (len(group['rc_amounts']), len(group['member_of']),
         bool(group['forbidden_aggs']), bool(group['forbidden_traits']),
         len(group['required_traits']) if group['use_same_provider'] else 0,
         group['in_tree'] is not None, bool(group['use_same_provider']))
        for group in groups)


def params(groups, trait_ids, tree_roots):
    """The bound values of ``groups`` for the statements of their shape."""
    values = {}
    for i, group in enumerate(groups):
        for n, (rc_id, amount) in enumerate(
                sorted(group['rc_amounts'].items())):
            values['rc_%d_%d' % (i, n)] = rc_id
            values['amount_%d_%d' % (i, n)] = amount
        for n, any_of in enumerate(group['member_of']):
            values['agg_%d_%d' % (i, n)] = sorted(any_of)
        if group['forbidden_aggs']:
            values['fagg_%d' % i] = sorted(group['forbidden_aggs'])
        if group['forbidden_traits']:
            values['ftrait_%d' % i] = sorted(
                trait_ids[name] for name in group['forbidden_traits'])
        if group['use_same_provider']:
            for n, any_of in enumerate(group['required_traits']):
                values['rtrait_%d_%d' % (i, n)] = sorted(
                    trait_ids[name] for name in any_of)
        if group['in_tree'] is not None:
            values['tree_%d' % i] = tree_roots[group['in_tree']]
    return values


def root_shape(required, forbidden):
    """(any required, any forbidden): the shape of ``root_required``."""
    return bool(required), bool(forbidden)


def root_params(required, forbidden):
    """The bound values of ``root_required``, from trait ids."""
    values = {}
    if required:
        values['root_traits'] = sorted(required)
        values['root_trait_count'] = len(required)
    if forbidden:
        values['root_forbidden'] = sorted(forbidden)
    return values


def root_clauses(root_id, root_filter):
    """``root_id`` (a root provider id column) passes ``root_required``.

    Every required trait: the root's links among them number as many as
    they do (one statement shape whatever their number). No forbidden
    trait: the root is not among the providers having one.
    """
    required, forbidden = root_filter
    links = sql.RP_TRAIT
    clauses = []
    if required:
        clauses.append(root_id.in_(
            sa.select(links.c.resource_provider_id)
            .where(links.c.trait_id.in_(_list('root_traits')))
            .group_by(links.c.resource_provider_id)
            .having(sa.func.count() == _int('root_trait_count'))))
    if forbidden:
        clauses.append(root_id.not_in(
            sa.select(links.c.resource_provider_id)
            .where(links.c.trait_id.in_(_list('root_forbidden')))))
    return clauses


def _prepared_at_once(build):
    """``build``'s statements are prepared on their first run.

    On PostgreSQL with psycopg (see
    ``facade.prepare_marked_statements_at_once``): every search of a
    shape runs them again.
    """
    @functools.wraps(build)
    def marked(*args, **kwargs):
        return build(*args, **kwargs).execution_options(
            **{facade.PREPARE_AT_ONCE: True})
    return marked


def _int(name):
    return sa.bindparam(name, type_=sa.Integer)


def _list(name, big=False):
    """An expanding parameter; ``big`` lists are written into the SQL."""
    return sa.bindparam(name, expanding=True, literal_execute=big)


@functools.lru_cache(maxsize=1)
def _sqlite_has_json():
    # The sqlite3 module links one SQLite library per process, the one
    # the engine uses; JSON functions are built in from SQLite 3.38 and
    # in most builds before.
    try:
        sqlite3.connect(':memory:').execute(
            "SELECT value FROM json_each('[1]')").fetchall()
    except sqlite3.Error:
        return False
    return True


def id_style(dialect, ids):
    """How the statements take the id set ``ids`` on ``dialect``.

    The summaries may name a thousand roots. Bound one parameter per id,
    SQLAlchemy renders a placeholder per id on every call and the
    database parses them: on SQLite a third of the statement's time. So
    the ids are one JSON text on SQLite (``json_each``), one array on
    PostgreSQL, and one parameter per id elsewhere, or written into the
    SQL past MAX_BOUND_IDS. Returns 'json', 'array', 'inline' or 'bound'.
    """
    if dialect == 'postgresql':
        return 'array'
    if dialect == 'sqlite' and _sqlite_has_json():
        return 'json'
    return 'inline' if len(ids) > MAX_BOUND_IDS else 'bound'


def id_value(style, ids):
    """The bound value of the sorted ids ``ids`` in ``style``.

    An array goes as its text ('{1,2,3}'), which the statement casts:
    psycopg adapts a Python list of a thousand ints in Python, item by
    item (a millisecond), where the text costs a join.
    """
    ids = sorted(ids)
    if style == 'json':
        return json.dumps(ids)
    if style == 'array':
        return '{%s}' % ','.join(map(str, ids))
    return ids


def _id_table(name, style):
    """The ids bound as one text ``name``, as a table of ``value``s.

    ``style`` 'json' (SQLite's ``json_each``) or 'array' (PostgreSQL's
    ``unnest``). A table, not ``= ANY(array)``: PostgreSQL hashes the
    array of an ANY only when it is a constant, and a prepared
    statement's parameter is not one; it then compared every provider
    with every id, 3 ms of 4 for a thousand roots.
    """
    if style == 'json':
        return sa.func.json_each(
            sa.bindparam(name, type_=sa.String)).table_valued('value')
    return sa.func.unnest(sa.cast(
        sa.bindparam(name, type_=sa.String), postgresql.ARRAY(sa.Integer))
    ).table_valued('value').render_derived()


def _in_ids(column, name, style):
    """``column`` in the id set bound as ``name`` (see :func:`id_style`)."""
    if style in ('json', 'array'):
        return column.in_(sa.select(_id_table(name, style).c.value))
    return column.in_(_list(name, style == 'inline'))


def _group_clauses(i, group_shape):
    """Group ``i``'s per-provider conditions other than capacity."""
    _classes, member_of, fagg, ftrait, required, in_tree, single = \
        group_shape
    clauses = []
    if in_tree:
        clauses.append(sql.RP.c.root_provider_id == _int('tree_%d' % i))
    # As in placement, an aggregate of a root spans its tree for the
    # group that may spread over the tree; a single-provider (suffixed)
    # group's provider must be in the aggregate itself.
    through_root = not single
    for n in range(member_of):
        clauses.append(sql.in_aggregates(_list('agg_%d_%d' % (i, n)),
                                         through_root))
    if fagg:
        clauses.append(~sql.in_aggregates(_list('fagg_%d' % i),
                                          through_root))
    if ftrait:
        # A provider with a forbidden trait can serve no part of the
        # group, whichever providers join it.
        clauses.append(~sql.with_any_trait(_list('ftrait_%d' % i)))
    # A single-provider group's provider must have the traits itself; a
    # spread group is checked on its combinations instead.
    for n in range(required):
        clauses.append(sql.with_any_trait(_list('rtrait_%d_%d' % (i, n))))
    return clauses


def _with_room(i, n, clauses, *columns):
    """Select ``columns`` of the few providers with room for one class.

    The clauses limit the providers to a few (one root's tree, a
    window), and the class index is hidden from the planner (see
    ``provider_sql.room_for``) so that it starts from those providers.
    A planner without statistics (PostgreSQL on tables not analysed
    yet) otherwise walks every inventory of the class and keeps the
    few: 24 ms instead of 3 on PostgreSQL for 50 roots among 1,000.
    """
    rc_id, amount = _int('rc_%d_%d' % (i, n)), _int('amount_%d_%d' % (i, n))
    rp, inv = sql.RP, sql.INV
    return (sa.select(*columns)
            .select_from(inv.join(
                rp, rp.c.id == inv.c.resource_provider_id))
            .where(sql.room_for(rc_id, amount, few=True), *clauses))


def _pivot_slots(i, width, rc_ids, keep_max_unit):
    """Group ``i``'s class slots over inventory rows grouped by provider.

    ``rc_ids``: the group's class parameters, one slot each, padded with
    empty slots to ``width``. Each slot takes the MAX over the
    provider's INV rows of a CASE on its class: the capacity where the
    amount fits (else NULL), the usage whether it fits or not (the
    search reads it only where the capacity is), and max_unit where it
    fits (``keep_max_unit``). Returns (columns, the capacity aggregates,
    for the HAVING test).
    """
    inv = sql.INV
    capacity = sql.capacity()
    columns, capacities = [], []
    for n in range(width):
        if n >= len(rc_ids):
            columns += _empty_slot(n)
            continue
        room = sql.room_for(rc_ids[n], _int('amount_%d_%d' % (i, n)))
        fitting = sa.func.max(sa.case((room, capacity)))
        capacities.append(fitting)
        columns += [
            fitting.label('capacity_%d' % n),
            sa.func.max(sa.case((inv.c.resource_class_id == rc_ids[n],
                                 inv.c.used)))
            .label('used_%d' % n),
            sa.func.max(sa.case((room, inv.c.max_unit)))
            .label('max_unit_%d' % n)
            if keep_max_unit else _none('max_unit_%d' % n, sa.Integer)]
    return columns, capacities


def _pivot_with_room(i, classes, width, clauses, keep_max_unit, lone):
    """Group ``i``'s providers with room for any class, whole cloud.

    One pass over the inventories, each joined to its provider, grouped
    by provider: each class's figures fill its slot through a CASE, NULL
    where the provider has no room for it. Per (group, class) a branch
    of its own, then merged, read the inventories and the providers once
    per class and sorted the branches' rows together: 7.1 ms against 4.5
    on PostgreSQL for a thousand providers and three classes, with the
    columns of ``lone`` (when each usage was still a sum).

    ``lone``: every inventory of the provider passes (of every class: a
    provider's rows are counted anyway, as only then does the count
    tell whether the slots hold all of its inventories), and the row
    ends with the provider's uuid and, for a root without children, its
    number of inventories (else NULL). Without ``lone`` only the
    inventories of the group's classes are read.
    """
    rp, inv = sql.RP, sql.INV
    rc_ids = [_int('rc_%d_%d' % (i, n)) for n in range(classes)]
    source = inv.join(rp, rp.c.id == inv.c.resource_provider_id)
    where = list(clauses)
    if not lone:
        where.append(inv.c.resource_class_id.in_(rc_ids))
    slots, capacities = _pivot_slots(i, width, rc_ids, keep_max_unit)
    columns = [sa.literal_column(str(i)).label('grp'), rp.c.id,
               rp.c.root_provider_id, *slots]
    # Grouped by the primary key, the other columns follow from it
    # (PostgreSQL drops them from the key); named for MySQL and MariaDB.
    keys = [rp.c.id, rp.c.root_provider_id]
    if lone:
        keys += [rp.c.uuid, rp.c.parent_provider_id]
        columns += [rp.c.uuid, sa.case(
            (_childless_root(rp.c.id, rp.c.parent_provider_id),
             sa.func.count())).label('lone')]
    return (sa.select(*columns).select_from(source).where(*where)
            .group_by(*keys).having(sa.or_(
                *(capacity.is_not(None) for capacity in capacities))))


def _few_with_room(i, n, clauses, width, keep_max_unit):
    """The rows of :func:`_with_room` for a few providers (a window).

    The clauses name the window (see :func:`candidate_rows`); the
    class's figures fill slot ``n`` of ``width``.
    """
    inv = sql.INV
    slot = [sql.capacity(), inv.c.used,
            inv.c.max_unit if keep_max_unit
            else _none('max_unit', sa.Integer)]
    return _with_room(i, n, clauses, sa.literal_column(str(i)).label('grp'),
                      sql.RP.c.id, sql.RP.c.root_provider_id,
                      *_slots(width, n, slot))


def _window_pivot(i, classes, width, clauses, keep_max_unit, roots):
    """Group ``i``'s providers with room, one row each, in a window.

    The window's trees come from ``roots`` (a selectable of root ids,
    its first column), through the root index, in one pass over their
    providers' inventories of the group's classes, grouped by provider:
    each class's slot filled through a CASE, as :func:`_pivot_with_room`
    does for the whole cloud. One branch per class, sorted and merged
    with MAX, read the window's providers once per class: the whole
    statement (with :func:`_with_lone_window`'s columns) took 1.57
    against 1.45 ms on PostgreSQL for 50 roots and three classes,
    prepared (when each usage was still a sum).
    """
    rp, inv = sql.RP, sql.INV
    rc_ids = [_int('rc_%d_%d' % (i, n)) for n in range(classes)]
    source = roots.join(rp, rp.c.root_provider_id == list(roots.c)[0]).join(
        inv, inv.c.resource_provider_id == rp.c.id)
    slots, capacities = _pivot_slots(i, width, rc_ids, keep_max_unit)
    return (sa.select(sa.literal_column(str(i)).label('grp'), rp.c.id,
                      rp.c.root_provider_id, *slots)
            .select_from(source)
            .where(inv.c.resource_class_id.in_(rc_ids), *clauses)
            .group_by(rp.c.id, rp.c.root_provider_id)
            .having(sa.or_(*(c.is_not(None) for c in capacities))))


def _childless_root(provider_id, parent_id):
    """The provider is a root without children: a whole tree."""
    child = sql.RP.alias('child')
    return sa.and_(parent_id.is_(None), ~sa.exists().where(
        child.c.parent_provider_id == provider_id))


def _inventory_count(provider_id):
    """Correlated scalar subquery: the provider's number of inventories."""
    return sa.select(sa.func.count()).where(
        sql.INV.c.resource_provider_id == provider_id).scalar_subquery()


def _trait_names(within=None):
    """Subquery (id, names): each provider's trait names, joined by commas.

    One hash aggregate; ``within``: only the providers of that
    selectable (its ``id`` column), else every provider with a trait.
    Trait names are [A-Z0-9_]+ (validated on creation): a comma
    separates them.
    """
    rp_trait = sql.RP_TRAIT
    source = rp_trait
    if within is not None:
        source = within.join(
            rp_trait, rp_trait.c.resource_provider_id == within.c.id)
    source = source.join(TRAIT, TRAIT.c.id == rp_trait.c.trait_id)
    return (sa.select(rp_trait.c.resource_provider_id.label('id'),
                      sa.func.aggregate_strings(TRAIT.c.name, ',')
                      .label('names'))
            .select_from(source)
            .group_by(rp_trait.c.resource_provider_id).subquery('names'))


def _none(name, type_=sa.BigInteger):
    """A typed NULL column: UNION ALL branches agree on every type."""
    return sa.cast(sa.null(), type_).label(name)


def _empty_slot(n):
    """Class slot ``n``'s (capacity, used, max_unit) columns, all NULL."""
    return [_none('capacity_%d' % n), _none('used_%d' % n),
            _none('max_unit_%d' % n, sa.Integer)]


def _slots(width, filled, values):
    """``width`` class slots: ``values`` in slot ``filled``, NULL elsewhere."""
    columns = []
    for n in range(width):
        columns += values if n == filled else _empty_slot(n)
    return columns


def _per_provider(i, classes, width, clauses, keep_max_unit):
    """Group ``i``'s providers with room for any class, one row each.

    SQLite's search: each class's figures in its slot. SQLite has no
    statistics and plans by rules: one statement per class made it find
    each provider once per class, and building the rows cost more than
    the lookups (6.2 ms for a thousand providers with three classes,
    5.1 ms as one row each). The inner query reads each
    provider with its inventory of each class (the unique index); its
    OFFSET keeps SQLite from merging it into the outer query, which
    would compute each usable amount once in the test and again in the
    column. A class the provider has no room for has a NULL capacity.
    """
    rp = sql.RP
    source = rp
    inner = [rp.c.id, rp.c.root_provider_id, rp.c.parent_provider_id,
             rp.c.uuid]
    invs = [sql.INV.alias('inv_%d' % n) for n in range(classes)]
    for n, inv in enumerate(invs):
        rc_id = _int('rc_%d_%d' % (i, n))
        source = source.outerjoin(inv, sa.and_(
            inv.c.resource_provider_id == rp.c.id,
            inv.c.resource_class_id == rc_id))
        inner += [
            inv.c.min_unit.label('min_unit_%d' % n),
            inv.c.max_unit.label('max_unit_%d' % n),
            inv.c.step_size.label('step_size_%d' % n),
            sql.usable(inv).label('usable_%d' % n),
            inv.c.used.label('used_%d' % n)]
    # Providers without an inventory of any of the classes (a tree's
    # other providers) stop at the joins.
    has_any = sa.or_(*(inv.c.id.is_not(None) for inv in invs))
    row = (sa.select(*inner).select_from(source).where(has_any, *clauses)
           .offset(0).subquery('per_provider')).c
    columns = [sa.literal_column(str(i)).label('grp'), row.id,
               row.root_provider_id]
    rooms = []
    for n in range(width):
        if n >= classes:
            columns += _empty_slot(n)
            continue
        amount = _int('amount_%d_%d' % (i, n))
        used = row['used_%d' % n]
        # Without an inventory of the class every test is NULL: no room.
        room = sql.fits(amount, used, row['min_unit_%d' % n],
                        row['max_unit_%d' % n], row['step_size_%d' % n],
                        row['usable_%d' % n])
        rooms.append(room)
        # SQLite's CAST truncates, which is floor (provider_sql.capacity)
        # for the positive capacity of a provider with room. No function
        # call per value.
        columns += [
            sa.case((room, sa.cast(row['usable_%d' % n], sa.BigInteger))
                    ).label('capacity_%d' % n),
            used,
            row['max_unit_%d' % n] if keep_max_unit
            else _none('max_unit_%d' % n, sa.Integer)]
    # A root without children is a whole tree: with its uuid, number of
    # inventories and traits the summaries need not read it again (see
    # allocation_candidate._summaries). Computed for the rows returned
    # only; the traits for every root, a cheaper test than the lone one.
    # Trait names are [A-Z0-9_]+ (validated on creation): a comma
    # separates them.
    root = row.parent_provider_id.is_(None)
    lone = _childless_root(row.id, row.parent_provider_id)
    inventories = _inventory_count(row.id)
    traits = sa.select(sa.func.group_concat(TRAIT.c.name)).select_from(
        sql.RP_TRAIT.join(TRAIT, TRAIT.c.id == sql.RP_TRAIT.c.trait_id)
    ).where(sql.RP_TRAIT.c.resource_provider_id == row.id).scalar_subquery()
    columns += [row.uuid, sa.case((lone, inventories)).label('lone'),
                sa.case((root, traits)).label('traits')]
    return sa.select(*columns).where(sa.or_(*rooms))


def _with_traits(rows):
    """``rows`` (of :func:`_pivot_with_room`, with ``lone``) and traits.

    The trait names of the roots without children (those with a lone
    count), joined by commas, NULL if none: one hash aggregate over the
    whole traits table, which the whole cloud's search reads anyway.
    """
    rows = rows.subquery('found')
    names = _trait_names()
    return (sa.select(*rows.c, sa.case((rows.c.lone.is_not(None),
                                        names.c.names)).label('traits'))
            .select_from(rows.outerjoin(names, names.c.id == rows.c.id)))


def _with_lone_window(rows):
    """The uuid, lone count and traits of a window's few providers.

    As SQLite's rows (see :func:`_per_provider`): after the slots, the
    provider's uuid, for a root without children its number of
    inventories (else NULL), and for a root its trait names, with which
    the summaries need not read a childless root again.

    Each figure is a lookup per row through the indexes; the trait
    names come through a LATERAL lookup by primary key, fenced by OFFSET
    0: a join, or a LATERAL subquery PostgreSQL may pull up into one,
    is planned as a hash over the whole traits table for every row
    (3.6 of 6 ms for 50 rows).
    """
    rows = rows.subquery('found')
    rp, rp_trait = sql.RP, sql.RP_TRAIT
    lone = _childless_root(rp.c.id, rp.c.parent_provider_id)
    name = (sa.select(TRAIT.c.name)
            .where(TRAIT.c.id == rp_trait.c.trait_id).offset(0)
            .lateral('name'))
    traits = (sa.select(sa.func.aggregate_strings(name.c.name, ','))
              .select_from(rp_trait.join(name, sa.true()))
              .where(rp_trait.c.resource_provider_id == rp.c.id)
              .scalar_subquery())
    # The traits of every root, as SQLite's rows have them: the search
    # reads them only where the lone count is, and a second childless
    # test cost PostgreSQL another pass over the providers (1.45 against
    # 1.36 ms for 50 roots).
    return (sa.select(*rows.c, rp.c.uuid,
                      sa.case((lone, _inventory_count(rp.c.id))).label('lone'),
                      sa.case((rp.c.parent_provider_id.is_(None), traits))
                      .label('traits'))
            .select_from(rows.join(rp, rp.c.id == rows.c.id)))


@functools.lru_cache(maxsize=_CACHE_SIZE)
@_prepared_at_once
def candidate_rows(request_shape, windowed=False, sharing=False,
                   blind=False, root_filter=(False, False), lone=False):
    """Rows (grp, rp_id, root_id, then per class capacity, used, max_unit).

    A provider's row in group ``grp`` has a slot of three columns per
    class of the group (by class id, as in :func:`params`), padded to
    the group with the most classes: the slot's capacity is NULL when
    the provider has no room for that class (or another class's row
    holds it). ``max_unit`` is NULL with one group: only several groups
    on one provider and class need it, and a NULL costs nothing to
    read. ``blind`` (SQLite, see :func:`_per_provider`): one row per
    provider with room for any class, and after the slots its uuid, for
    a root without children its number of inventories (else NULL), and
    for a root its trait names joined by commas (NULL if none);
    elsewhere, for the whole cloud, one pass over the inventories per
    group (:func:`_pivot_with_room`); in an ``'anchored'`` window, one
    pass over the window's inventories per group
    (:func:`_window_pivot`); in other windows one statement per (group,
    class), whose rows fill one slot, merged into one row per (group,
    provider) when there are several classes. ``windowed``: False, or
    only providers of the trees of a window of roots. ``'anchored'``
    (PostgreSQL, not ``sharing``): the window is
    :func:`anchor_roots`' first ``:count`` roots above ``:after``,
    found by the same statement, so that every root of the window has a
    row (the one with room for the first class) and the rows name them
    all; otherwise how ``:roots`` is bound (see :func:`id_style`; 'json'
    is not taken here), and (with ``sharing``) the sharing providers
    ``:sharing_ids``, which may serve them.
    ``root_filter`` (see :func:`root_shape`): outside a window (whose
    roots passed it already), only providers whose root passes
    ``root_required`` and (with ``sharing``) the sharing providers
    ``:sharing_ids``, which serve other trees whatever their own root.
    ``lone`` (not ``blind``): after the slots, the columns of SQLite's
    rows (uuid, lone count, traits) all the same: from the pass over the
    inventories and one hash aggregate of the traits for the whole cloud
    (:func:`_with_traits`), by lookups per row in a window
    (:func:`_with_lone_window`).
    """
    selects = []
    root_ok = None
    if not windowed and any(root_filter):
        root_ok = sa.and_(*root_clauses(sql.RP.c.root_provider_id,
                                        root_filter))
        if sharing:
            root_ok = sa.or_(root_ok, sql.RP.c.id.in_(_list('sharing_ids')))
    keep_max_unit = len(request_shape) > 1
    width = max(group_shape[0] for group_shape in request_shape)
    # The window's trees joined from its roots (see _window_pivot), or
    # tested on each provider.
    window_table = None
    if windowed == 'anchored':
        window_table = anchor_roots(request_shape, root_filter=root_filter
                                    ).subquery('window')
    for i, group_shape in enumerate(request_shape):
        clauses = _group_clauses(i, group_shape)
        if windowed and window_table is None:
            window = _in_ids(sql.RP.c.root_provider_id, 'roots', windowed)
            clauses.append(sa.or_(window, sql.RP.c.id.in_(
                _list('sharing_ids'))) if sharing else window)
        elif root_ok is not None:
            clauses.append(root_ok)
        if blind:
            selects.append(_per_provider(i, group_shape[0], width, clauses,
                                         keep_max_unit))
            continue
        if not windowed:
            selects.append(_pivot_with_room(i, group_shape[0], width,
                                            clauses, keep_max_unit, lone))
            continue
        if window_table is not None:
            selects.append(_window_pivot(i, group_shape[0], width, clauses,
                                         keep_max_unit, window_table))
            continue
        for n in range(group_shape[0]):
            selects.append(_few_with_room(i, n, clauses, width,
                                          keep_max_unit))
    rows = selects[0] if len(selects) == 1 else sa.union_all(*selects)
    if windowed and not blind and window_table is None and width > 1:
        # One row per (group, provider), as the whole cloud's: each
        # branch fills one slot and leaves the others NULL, so MAX
        # merges them. The database merges a few hundred rows faster
        # than Python takes them one by one.
        room = rows.subquery('room')
        keys = list(room.c)[:3]
        rows = sa.select(*keys, *[
            sa.func.max(column).label(column.name)
            for column in list(room.c)[3:]]).group_by(*keys)
    if not lone or blind:
        return rows
    return _with_lone_window(rows) if windowed else _with_traits(rows)


@functools.lru_cache(maxsize=_CACHE_SIZE)
@_prepared_at_once
def anchor_roots(request_shape, served=False, blind=False,
                 root_filter=(False, False)):
    """The first ``:count`` root ids above ``:after`` that may anchor.

    A root may anchor a candidate when it passes ``root_required``
    (``root_filter``, see :func:`root_shape`) and, for every class of
    every group, a provider of its tree has room or (with ``served``) a
    sharing provider serves it (it is in ``:served_roots``): a necessary
    condition only. Each test is an EXISTS on the root, so the database
    walks roots in id order and stops after ``:count``. Roots are the
    parentless providers, which planners estimate from statistics.
    """
    roots = (sql.RP.c.parent_provider_id.is_(None),
             sql.RP.c.id > _int('after'))
    if blind:
        # SQLite walks the table by id and stops at the limit.
        anchor = sql.RP.alias('anchor')
        roots = (anchor.c.parent_provider_id.is_(None),
                 anchor.c.id > _int('after'))
    else:
        # PostgreSQL guesses that hardly any inventory passes the
        # capacity test, and left alone tests every root and sorts them
        # all for the limit. The roots come from a subquery in id order
        # behind a fence (OFFSET 0 keeps it from being merged into the
        # outer query), so the tests run root by root until the limit.
        anchor = (sa.select(sql.RP.c.id).where(*roots)
                  .order_by(sql.RP.c.id).offset(0).subquery('anchor'))
        roots = ()
    conditions = []
    for i, group_shape in enumerate(request_shape):
        clauses = _group_clauses(i, group_shape) + [
            sql.RP.c.root_provider_id == anchor.c.id]
        for n in range(group_shape[0]):
            probe = _with_room(i, n, clauses, sql.RP.c.id)
            if not blind:
                # Each EXISTS must stay a test of one root. Without the
                # OFFSET, PostgreSQL turns it into a semi-join; and as
                # it cannot estimate the capacity test (it guesses a
                # handful of rows once statistics exist), it computes
                # every provider with room once and compares each root
                # with all of them: 40 ms instead of 2 for 1,000
                # providers. A subquery with an OFFSET is never pulled
                # up into a join.
                probe = probe.offset(0)
            condition = probe.exists()
            if served:
                condition = sa.or_(condition,
                                   anchor.c.id.in_(_list('served_roots')))
            conditions.append(condition)
    conditions += root_clauses(anchor.c.id, root_filter)
    return (sa.select(anchor.c.id).where(*roots, *conditions)
            .order_by(anchor.c.id).limit(_int('count')))


@functools.lru_cache(maxsize=4)
def root_passing(root_filter):
    """The providers ``:ids`` whose root passes ``root_required``."""
    return sa.select(sql.RP.c.id).where(
        sql.RP.c.id.in_(_list('ids')),
        *root_clauses(sql.RP.c.root_provider_id, root_filter))


@functools.lru_cache(maxsize=1)
@_prepared_at_once
def names_and_sharing():
    """Rows (kind, name, id, root id) of what every search starts from.

    Kind ``'rc'``: the id of each class in ``:classes``; ``'trait'``:
    of each trait in ``:traits``; ``'served'``: (no name) a sharing
    provider's id and the root id of a provider it shares with, for
    every provider with the trait named ``:sharing_trait``. One
    statement instead of three.
    """
    def no(type_):
        return sa.cast(sa.null(), type_)
    sharing_id = sa.select(TRAIT.c.id).where(
        TRAIT.c.name == sa.bindparam('sharing_trait')).scalar_subquery()
    served = _served_roots(sharing_id).subquery('served')
    # Evaluated once, before the joins of the served pairs, which do not
    # run in a cloud without sharing providers (most of them): the
    # generic plan of a prepared statement cannot know that no provider
    # has the trait, and hashed every provider and aggregate link of the
    # cloud on each search to find nothing (0.25 of 0.5 ms for 1,000
    # providers on PostgreSQL). A count, not an EXISTS: an EXISTS
    # expects an early match and scanned every trait link instead of
    # probing the trait's index.
    any_sharing = sa.select(sa.func.count()).where(
        sql.RP_TRAIT.c.trait_id == sharing_id).scalar_subquery() > \
        sa.literal_column('0')
    return sa.union_all(
        sql.ids_of('rc', RC.c.name, 'classes', no(sa.Integer)),
        sql.ids_of('trait', TRAIT.c.name, 'traits', no(sa.Integer)),
        sa.select(sa.literal_column("'served'"), no(TRAIT.c.name.type),
                  served.c[0], served.c[1]).where(any_sharing))


def _served_roots(sharing_id):
    """(sharing provider id, root id of a provider it shares with).

    For every provider with the trait ``sharing_id`` (an expression).
    """
    sharer = sql.RP_AGG.alias('sharer')
    member = sql.RP_AGG.alias('member')
    member_rp = sql.RP.alias('member_rp')
    return (sa.select(sharer.c.resource_provider_id,
                      member_rp.c.root_provider_id).distinct()
            .select_from(
                sharer.join(member,
                            member.c.aggregate_id == sharer.c.aggregate_id)
                .join(member_rp,
                      member_rp.c.id == member.c.resource_provider_id))
            .where(sharer.c.resource_provider_id.in_(
                sa.select(sql.RP_TRAIT.c.resource_provider_id).where(
                    sql.RP_TRAIT.c.trait_id == sharing_id))))


@functools.lru_cache(maxsize=4)
def trait_links(style):
    """(rp_id, trait_id) of the traits ``:traits`` among ``:ids``.

    ``style``: how ``:ids`` is bound, see :func:`id_style`.
    """
    return sa.select(
        sql.RP_TRAIT.c.resource_provider_id, sql.RP_TRAIT.c.trait_id,
    ).where(_in_ids(sql.RP_TRAIT.c.resource_provider_id, 'ids', style),
            sql.RP_TRAIT.c.trait_id.in_(_list('traits')))


def _of_trees(select, source, style):
    """``select`` from ``source`` (which joins RP), in ``:roots``' trees.

    With the roots as a table ('json' on SQLite, 'array' on PostgreSQL,
    see :func:`_id_table`), each root's tree comes from the root index,
    driven by that table: on SQLite an IN test made it look up and then
    sort every row, half of the providers statement's 2.2 ms for a
    thousand roots. Elsewhere an IN test (see :func:`_in_ids`).
    """
    if style in ('json', 'array'):
        roots = _id_table('roots', style)
        return select.select_from(roots.join(
            source, sql.RP.c.root_provider_id == roots.c.value))
    return select.select_from(source).where(
        _in_ids(sql.RP.c.root_provider_id, 'roots', style))


@functools.lru_cache(maxsize=_CACHE_SIZE)
def resourceless_providers(request_shape):
    """Rows (grp, rp_id, root_id) of resourceless groups' providers.

    Every provider passing group ``grp``'s traits, aggregates and tree
    (:func:`_group_clauses`; the values are those of :func:`params` for
    the resourceless groups alone). Such a group asks for no capacity,
    so an inventory is no condition.
    """
    selects = [
        sa.select(sa.literal(i, sa.Integer).label('grp'), sql.RP.c.id,
                  sql.RP.c.root_provider_id)
        .where(*_group_clauses(i, group_shape))
        for i, group_shape in enumerate(request_shape)]
    return selects[0] if len(selects) == 1 else sa.union_all(*selects)


@functools.lru_cache(maxsize=4)
def tree_parents(style):
    """Rows (id, parent id) of every provider of ``:roots``' trees."""
    return _of_trees(sa.select(sql.RP.c.id, sql.RP.c.parent_provider_id),
                     sql.RP, style)


def summary_has_traits(style):
    """Whether :func:`summary_providers` gives the traits, in ``style``."""
    return style == 'array'


@functools.lru_cache(maxsize=4)
@_prepared_at_once
def summary_providers(style):
    """Every provider of ``:roots``' trees and its number of inventories.

    ``style``: how ``:roots`` is bound, here and below (see
    :func:`id_style`).

    Rows (id, uuid, parent id, root id, inventories), in no order (the
    order is no part of the answer); on PostgreSQL ('array') with a
    sixth column (:func:`summary_has_traits`), the provider's trait
    names joined by commas (NULL if none), so that
    :func:`summary_traits` need not run. A parent and a
    root are in the same tree as their child, so the rows themselves
    name them: no self-joins. The count tells the search whether the
    candidate rows already hold all of a provider's inventories (in a
    flat cloud they do), so that only the others are read again
    (:func:`summary_inventories`).
    """
    rp = sql.RP
    columns = (rp.c.id, rp.c.uuid, rp.c.parent_provider_id,
               rp.c.root_provider_id)
    if not summary_has_traits(style):
        return _of_trees(sa.select(*columns, _inventory_count(rp.c.id)),
                         rp, style)
    # The trees' providers once (a CTE read twice is computed once),
    # their traits as one hash-joined aggregate over them. A per-provider
    # subquery instead scanned the whole traits table for each provider
    # (the planner's choice for a small table): 70 ms for a thousand.
    tree = _of_trees(sa.select(*columns), rp, style).cte('tree')
    names = _trait_names(within=tree.alias('member'))
    return (sa.select(*tree.c, _inventory_count(tree.c.id), names.c.names)
            .select_from(tree.outerjoin(names, names.c.id == tree.c.id)))


@functools.lru_cache(maxsize=4)
@_prepared_at_once
def summary_inventories(style):
    """Rows (rp id, class name, capacity, used) of the providers ``:ids``.

    Every inventory of each, with its usage.
    """
    inv = sql.INV
    return (sa.select(inv.c.resource_provider_id, RC.c.name,
                      sql.capacity(), inv.c.used)
            .select_from(inv.join(RC, RC.c.id == inv.c.resource_class_id))
            .where(_in_ids(inv.c.resource_provider_id, 'ids', style)))


@functools.lru_cache(maxsize=4)
@_prepared_at_once
def summary_traits(style):
    """(rp_id, trait name) of the providers of ``:roots``' trees, by name."""
    rp_trait, rp = sql.RP_TRAIT, sql.RP
    links = (rp.join(rp_trait, rp_trait.c.resource_provider_id == rp.c.id)
             .join(TRAIT, TRAIT.c.id == rp_trait.c.trait_id))
    return _of_trees(
        sa.select(rp_trait.c.resource_provider_id, TRAIT.c.name), links,
        style).order_by(TRAIT.c.name)
