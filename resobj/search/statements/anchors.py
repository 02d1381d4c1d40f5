"""The roots a window of the search starts from."""

import functools

import sqlalchemy as sa

from resobj.db.sql import resource_provider as sql
from resobj.db.sql import search_strategy as strategies
from resobj.search.statements import clauses as cl


@functools.lru_cache(maxsize=256)
def anchor_roots(request_shape, served, root_walk, root_filter):
    """The first ``:count`` root ids above ``:after`` that may anchor.

    A root may anchor a candidate when it passes ``root_required``
    (``root_filter``) and, for every class of every group, a provider of
    its tree has room or (with ``served``) a sharing provider serves it
    (one of the sharing providers ``:sharing_ids`` is in an aggregate of
    a provider of its tree): a necessary condition only. As the second
    test is the same for every class, it is made once: served, or room
    for every class. Each test is an EXISTS on the root, so the database
    walks roots in id order and stops after ``:count``, whatever the
    number of roots sharing providers serve. Roots are the parentless
    providers, which planners estimate from statistics. ``root_walk``:
    see :class:`resobj.search.strategy.RootWalk`.
    """
    fenced = root_walk is strategies.RootWalk.FENCED
    if fenced:
        # A planner with statistics guesses that hardly any inventory
        # passes the capacity test, and left alone tests every root and
        # sorts them all for the limit. The roots come from a subquery
        # in id order behind a fence (OFFSET 0 keeps it from being
        # merged into the outer query), so the tests run root by root
        # until the limit.
        roots = (sql.RP.c.parent_provider_id.is_(None),
                 sql.RP.c.id > cl.int_param('after'))
        anchor = (sa.select(sql.RP.c.id).where(*roots)
                  .order_by(sql.RP.c.id).offset(0).subquery('anchor'))
        roots = ()
    else:
        anchor = sql.RP.alias('anchor')
        roots = (anchor.c.parent_provider_id.is_(None),
                 anchor.c.id > cl.int_param('after'))
    conditions = []
    for i, group_shape in enumerate(request_shape):
        clauses = cl.group_clauses(i, group_shape) + [
            sql.RP.c.root_provider_id == anchor.c.id]
        for n in range(group_shape.classes):
            probe = cl.with_room(i, n, clauses, sql.RP.c.id)
            if fenced:
                # Each EXISTS must stay a test of one root. Without the
                # OFFSET, PostgreSQL turns it into a semi-join and, as
                # it cannot estimate the capacity test, computes every
                # provider with room once and compares each root with
                # all of them. A subquery with an OFFSET is never pulled
                # up into a join.
                probe = probe.offset(0)
            conditions.append(probe.exists())
    if served:
        probe = cl.served_tree(anchor.c.id)
        if fenced:
            probe = probe.offset(0)
        conditions = [sa.or_(probe.exists(), sa.and_(*conditions))]
    conditions += cl.root_clauses(anchor.c.id, root_filter)
    return (sa.select(anchor.c.id).where(*roots, *conditions)
            .order_by(anchor.c.id).limit(cl.int_param('count')))


@functools.lru_cache(maxsize=4)
def root_passing(root_filter):
    """The providers ``:ids`` whose root passes ``root_required``."""
    return sa.select(sql.RP.c.id).where(
        sql.RP.c.id.in_(cl.list_param('ids')),
        *cl.root_clauses(sql.RP.c.root_provider_id, root_filter))


@functools.lru_cache(maxsize=4)
def some_root_passing(root_filter):
    """One root provider that passes ``root_required``, if any."""
    return sa.select(sql.RP.c.id).where(
        sql.RP.c.parent_provider_id.is_(None),
        *cl.root_clauses(sql.RP.c.id, root_filter)).limit(1)
