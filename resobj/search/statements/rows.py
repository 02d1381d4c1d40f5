"""The providers with room for each (group, class) of a request.

One row per (group, provider) with room for at least one of the group's
classes. Columns, by name (see :class:`resobj.search.rows.RowLayout`):
``grp`` (the group's index), ``id``, ``root_provider_id``, then a slot
per class of the group (by class id, as in
:func:`resobj.search.request.params`), padded to the group with the
most classes: ``capacity_<n>`` (NULL when the provider has no room for
that class, or another row holds it), ``used_<n>`` and ``max_unit_<n>``
(NULL with one group: only several groups on one provider and class
need it). Where the strategy ``describes_lone_roots`` (and always with
``RowPlan.PER_PROVIDER``), then ``uuid``, ``lone`` (for a root without
children its number of inventories, else NULL) and ``traits`` (for a
root its trait names joined by commas, NULL if none), with which the
summaries need not read a childless root again.

Three entry points: :func:`whole_cloud`, :func:`of_roots` (the trees of
the roots bound as ``:roots`` and the sharing providers
``:sharing_ids``) and :func:`anchored` (the trees of the window's roots,
found by the same statement, see :func:`.anchors.anchor_roots`).
"""

import functools

import sqlalchemy as sa

from resobj.db.sql import resource_provider as sql
from resobj.db.sql import search_strategy as strategies
from resobj.search.statements import anchors
from resobj.search.statements import clauses as cl

_CACHE_SIZE = 256


@functools.lru_cache(maxsize=_CACHE_SIZE)
def whole_cloud(request_shape, strategy, sharing, root_filter):
    """Every provider with room, whose root passes ``root_required``.

    ``root_filter``: the shape of ``root_required``; with ``sharing``,
    the sharing providers ``:sharing_ids`` pass whatever their root, as
    they serve other trees. For a spread group with required traits, no
    childless root that must but cannot take the group alone (see
    ``clauses.may_join_spread_part``).
    """
    extra = []
    if any(root_filter):
        root_ok = sa.and_(*cl.root_clauses(sql.RP.c.root_provider_id,
                                           root_filter))
        if sharing:
            root_ok = sa.or_(root_ok,
                             sql.RP.c.id.in_(cl.list_param('sharing_ids')))
        extra.append(root_ok)
    keep_max_unit, width = _widths(request_shape)
    per_provider = strategy.rows is strategies.RowPlan.PER_PROVIDER
    lone = strategy.describes_lone_roots and not per_provider
    selects = []
    for i, group_shape in enumerate(request_shape):
        clauses = cl.group_clauses(i, group_shape) + extra
        if group_shape.spread_required:
            # The childless roots without the traits (as many as the
            # cloud's roots without the trait) are not read only to be
            # dropped.
            clauses.append(cl.may_join_spread_part(i, group_shape, sharing))
        if per_provider:
            selects.append(_per_provider(i, group_shape, width, clauses,
                                         keep_max_unit))
        else:
            selects.append(_pivot_with_room(i, group_shape.classes, width,
                                            clauses, keep_max_unit, lone))
    rows = _union(selects)
    return _with_traits(rows) if lone else rows


@functools.lru_cache(maxsize=_CACHE_SIZE)
def of_roots(request_shape, strategy, sharing):
    """The providers with room in the trees of ``:roots``.

    ``:roots`` bound as the strategy's ``window_ids``; with ``sharing``,
    the sharing providers ``:sharing_ids`` too. With
    ``INVENTORY_PIVOT``, one statement per (group, class), each filling
    one slot, merged into one row per (group, provider).
    """
    if sharing:
        # The providers of the trees and the sharing providers as one
        # set of ids: an OR of the two tests would keep a planner from
        # reaching the trees' providers through the root's index, and
        # it would read every inventory of the classes instead.
        tree = sql.RP.alias('window_tree')
        sharer = sql.RP.alias('window_sharer')
        window = sql.RP.c.id.in_(sa.union_all(
            sa.select(tree.c.id).where(strategy.window_ids.contains(
                tree.c.root_provider_id, 'roots')),
            sa.select(sharer.c.id).where(
                sharer.c.id.in_(cl.list_param('sharing_ids')))))
    else:
        window = strategy.window_ids.contains(sql.RP.c.root_provider_id,
                                              'roots')
    keep_max_unit, width = _widths(request_shape)
    per_provider = strategy.rows is strategies.RowPlan.PER_PROVIDER
    selects = []
    for i, group_shape in enumerate(request_shape):
        clauses = cl.group_clauses(i, group_shape) + [window]
        if per_provider:
            selects.append(_per_provider(i, group_shape, width, clauses,
                                         keep_max_unit))
            continue
        for n in range(group_shape.classes):
            selects.append(_few_with_room(i, n, clauses, width,
                                          keep_max_unit))
    rows = _union(selects)
    if per_provider:
        return rows
    if width > 1:
        # One row per (group, provider), as the whole cloud's: each
        # branch fills one slot and leaves the others NULL, so MAX
        # merges them. The database merges a few hundred rows faster
        # than Python takes them one by one.
        room = rows.subquery('room')
        keys = [room.c.grp, room.c.id, room.c.root_provider_id]
        rows = sa.select(*keys, *[
            sa.func.max(column).label(column.name)
            for column in list(room.c)[len(keys):]]).group_by(*keys)
    return _with_lone_window(rows) if strategy.describes_lone_roots \
        else rows


@functools.lru_cache(maxsize=_CACHE_SIZE)
def anchored(request_shape, strategy, root_filter):
    """The providers with room in the first ``:count`` roots above ``:after``.

    The window is :func:`.anchors.anchor_roots`' (without sharing
    providers), found by the same statement: every root of the window
    has a row (the one with room for the first class), so the rows name
    them all. Needs ``RowPlan.INVENTORY_PIVOT``.
    """
    window = anchors.anchor_roots(request_shape, False, strategy.root_walk,
                                  root_filter).subquery('window')
    keep_max_unit, width = _widths(request_shape)
    selects = [_window_pivot(i, group_shape.classes, width,
                             cl.group_clauses(i, group_shape),
                             keep_max_unit, window)
               for i, group_shape in enumerate(request_shape)]
    rows = _union(selects)
    return _with_lone_window(rows) if strategy.describes_lone_roots \
        else rows


def _widths(request_shape):
    """(keep max_unit, number of slots) of the rows of ``request_shape``."""
    return (len(request_shape) > 1,
            max(group_shape.classes for group_shape in request_shape))


def _union(selects):
    return selects[0] if len(selects) == 1 else sa.union_all(*selects)


def _group_column(i):
    return sa.literal_column(str(i)).label('grp')


def _empty_slot(n):
    """Class slot ``n``'s (capacity, used, max_unit) columns, all NULL."""
    return [cl.none_column('capacity_%d' % n), cl.none_column('used_%d' % n),
            cl.none_column('max_unit_%d' % n, sa.Integer)]


def _slot(n, capacity, used, max_unit):
    return [capacity.label('capacity_%d' % n), used.label('used_%d' % n),
            max_unit.label('max_unit_%d' % n)]


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
        room = sql.room_for(rc_ids[n], cl.int_param('amount_%d_%d' % (i, n)))
        fitting = sa.func.max(sa.case((room, capacity)))
        capacities.append(fitting)
        columns += _slot(
            n, fitting,
            sa.func.max(sa.case((inv.c.resource_class_id == rc_ids[n],
                                 inv.c.used))),
            sa.func.max(sa.case((room, inv.c.max_unit))) if keep_max_unit
            else sa.cast(sa.null(), sa.Integer))
    return columns, capacities


def _pivot_with_room(i, classes, width, clauses, keep_max_unit, lone):
    """Group ``i``'s providers with room for any class, whole cloud.

    One pass over the inventories, each joined to its provider, grouped
    by provider: each class's figures fill its slot through a CASE, NULL
    where the provider has no room for it. A branch per (group, class),
    merged, would read the inventories and the providers once per class
    and sort the branches' rows together.

    ``lone``: every inventory of the provider passes (of every class: a
    provider's rows are counted anyway, as only then does the count
    tell whether the slots hold all of its inventories), and the row
    ends with the provider's uuid and, for a root without children, its
    number of inventories (else NULL). Without ``lone`` only the
    inventories of the group's classes are read.
    """
    rp, inv = sql.RP, sql.INV
    rc_ids = [cl.int_param('rc_%d_%d' % (i, n)) for n in range(classes)]
    source = inv.join(rp, rp.c.id == inv.c.resource_provider_id)
    where = list(clauses)
    if not lone:
        where.append(inv.c.resource_class_id.in_(rc_ids))
    slots, capacities = _pivot_slots(i, width, rc_ids, keep_max_unit)
    columns = [_group_column(i), rp.c.id, rp.c.root_provider_id, *slots]
    # Grouped by the primary key, the other columns follow from it
    # (PostgreSQL drops them from the key); named for MySQL and MariaDB.
    keys = [rp.c.id, rp.c.root_provider_id]
    if lone:
        keys += [rp.c.uuid, rp.c.parent_provider_id]
        columns += [rp.c.uuid, sa.case(
            (cl.childless_root(rp.c.id, rp.c.parent_provider_id,
                               one_pass=True),
             sa.func.count())).label('lone')]
    return (sa.select(*columns).select_from(source).where(*where)
            .group_by(*keys).having(sa.or_(
                *(capacity.is_not(None) for capacity in capacities))))


def _few_with_room(i, n, clauses, width, keep_max_unit):
    """The rows of ``clauses.with_room`` for a few providers (a window).

    The clauses name the window; the class's figures fill slot ``n`` of
    ``width``.
    """
    inv = sql.INV
    columns = []
    for m in range(width):
        if m != n:
            columns += _empty_slot(m)
            continue
        columns += _slot(n, sql.capacity(), inv.c.used,
                         inv.c.max_unit if keep_max_unit
                         else sa.cast(sa.null(), sa.Integer))
    return cl.with_room(i, n, clauses, _group_column(i), sql.RP.c.id,
                        sql.RP.c.root_provider_id, *columns)


def _window_pivot(i, classes, width, clauses, keep_max_unit, roots):
    """Group ``i``'s providers with room, one row each, in a window.

    The window's trees come from ``roots`` (a selectable of root ids,
    its first column), through the root index, in one pass over their
    providers' inventories of the group's classes, grouped by provider:
    each class's slot filled through a CASE, as :func:`_pivot_with_room`
    does for the whole cloud.
    """
    rp, inv = sql.RP, sql.INV
    rc_ids = [cl.int_param('rc_%d_%d' % (i, n)) for n in range(classes)]
    source = roots.join(rp, rp.c.root_provider_id == list(roots.c)[0]).join(
        inv, inv.c.resource_provider_id == rp.c.id)
    slots, capacities = _pivot_slots(i, width, rc_ids, keep_max_unit)
    return (sa.select(_group_column(i), rp.c.id, rp.c.root_provider_id,
                      *slots)
            .select_from(source)
            .where(inv.c.resource_class_id.in_(rc_ids), *clauses)
            .group_by(rp.c.id, rp.c.root_provider_id)
            .having(sa.or_(*(c.is_not(None) for c in capacities))))


def _per_provider(i, group_shape, width, clauses, keep_max_unit):
    """Group ``i``'s providers with room for any class, one row each.

    ``RowPlan.PER_PROVIDER``: each class's figures in its slot. The
    inner query reads each provider with its inventory of each class
    (the unique index); its OFFSET keeps the planner from merging it
    into the outer query, which would compute each usable amount once
    in the test and again in the column. A class the provider has no
    room for has a NULL capacity.

    A single-provider group takes only providers with room for every
    class: the inventories of its first class lead (the class index),
    joined to the others, rather than every provider of the cloud to
    each of its classes.
    """
    classes, single = group_shape.classes, group_shape.single
    rp = sql.RP
    source = rp
    inner = [rp.c.id, rp.c.root_provider_id, rp.c.parent_provider_id,
             rp.c.uuid]
    invs = [sql.INV.alias('inv_%d' % n) for n in range(classes)]
    for n, inv in enumerate(invs):
        rc_id = cl.int_param('rc_%d_%d' % (i, n))
        on = sa.and_(inv.c.resource_provider_id == rp.c.id,
                     inv.c.resource_class_id == rc_id)
        source = (source.join(inv, on) if single
                  else source.outerjoin(inv, on))
        inner += [
            inv.c.min_unit.label('min_unit_%d' % n),
            inv.c.max_unit.label('max_unit_%d' % n),
            inv.c.step_size.label('step_size_%d' % n),
            sql.usable(inv).label('usable_%d' % n),
            inv.c.used.label('used_%d' % n)]
    # Providers without an inventory of any of the classes (a tree's
    # other providers) stop at the joins.
    if not single:
        clauses = [sa.or_(*(inv.c.id.is_not(None) for inv in invs)),
                   *clauses]
    row = (sa.select(*inner).select_from(source).where(*clauses)
           .offset(0).subquery('per_provider')).c
    columns = [_group_column(i), row.id, row.root_provider_id]
    rooms = []
    for n in range(width):
        if n >= classes:
            columns += _empty_slot(n)
            continue
        amount = cl.int_param('amount_%d_%d' % (i, n))
        used = row['used_%d' % n]
        # Without an inventory of the class every test is NULL: no room.
        room = sql.fits(amount, used, row['min_unit_%d' % n],
                        row['max_unit_%d' % n], row['step_size_%d' % n],
                        row['usable_%d' % n])
        rooms.append(room)
        # SQLite's CAST truncates, which is floor
        # (sql.resource_provider.capacity) for the positive capacity of a
        # provider with room. No function call per value.
        columns += [
            sa.case((room, sa.cast(row['usable_%d' % n], sa.BigInteger))
                    ).label('capacity_%d' % n),
            used,
            row['max_unit_%d' % n] if keep_max_unit
            else cl.none_column('max_unit_%d' % n, sa.Integer)]
    # A root without children is a whole tree: with its uuid, number of
    # inventories and traits the summaries need not read it again.
    # Computed for the rows returned only; the traits for every root, a
    # cheaper test than the lone one. Trait names are [A-Z0-9_]+
    # (validated on creation): a comma separates them.
    root = row.parent_provider_id.is_(None)
    lone = cl.childless_root(row.id, row.parent_provider_id)
    traits = sa.select(sa.func.group_concat(cl.TRAIT.c.name)).select_from(
        sql.RP_TRAIT.join(cl.TRAIT, cl.TRAIT.c.id == sql.RP_TRAIT.c.trait_id)
    ).where(sql.RP_TRAIT.c.resource_provider_id == row.id).scalar_subquery()
    columns += [row.uuid, sa.case((lone, cl.inventory_count(row.id)))
                .label('lone'), sa.case((root, traits)).label('traits')]
    return sa.select(*columns).where(
        sa.and_(*rooms) if single else sa.or_(*rooms))


def _with_traits(rows):
    """``rows`` (of :func:`_pivot_with_room`, with ``lone``) and traits.

    The trait names of the roots without children (those with a lone
    count), joined by commas, NULL if none: one hash aggregate over the
    whole traits table, which the whole cloud's search reads anyway.
    """
    rows = rows.subquery('found')
    names = cl.trait_names()
    return (sa.select(*rows.c, sa.case((rows.c.lone.is_not(None),
                                        names.c.names)).label('traits'))
            .select_from(rows.outerjoin(names, names.c.id == rows.c.id)))


def _with_lone_window(rows):
    """The uuid, lone count and traits of a window's few providers.

    Each figure is a lookup per row through the indexes; the trait
    names come through a LATERAL lookup by primary key, fenced by OFFSET
    0: a join, or a LATERAL subquery PostgreSQL may pull up into one,
    is planned as a hash over the whole traits table for every row.
    """
    rows = rows.subquery('found')
    rp, rp_trait = sql.RP, sql.RP_TRAIT
    lone = cl.childless_root(rp.c.id, rp.c.parent_provider_id)
    name = (sa.select(cl.TRAIT.c.name)
            .where(cl.TRAIT.c.id == rp_trait.c.trait_id).offset(0)
            .lateral('name'))
    traits = (sa.select(sa.func.aggregate_strings(name.c.name, ','))
              .select_from(rp_trait.join(name, sa.true()))
              .where(rp_trait.c.resource_provider_id == rp.c.id)
              .scalar_subquery())
    # The traits of every root, as the per-provider rows have them: the
    # search reads them only where the lone count is, and a second
    # childless test would cost another pass over the providers.
    return (sa.select(*rows.c, rp.c.uuid,
                      sa.case((lone, cl.inventory_count(rp.c.id)))
                      .label('lone'),
                      sa.case((rp.c.parent_provider_id.is_(None), traits))
                      .label('traits'))
            .select_from(rows.join(rp, rp.c.id == rows.c.id)))
