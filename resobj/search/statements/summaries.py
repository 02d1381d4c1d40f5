"""The provider summaries of the trees the requests use."""

import functools
import typing

import sqlalchemy as sa

from resobj.db import provider_sql as sql
from resobj.search.statements import clauses as cl


class ProviderRow(typing.NamedTuple):
    """A row of :func:`providers`."""

    id: int
    uuid: str
    parent_provider_id: typing.Optional[int]
    root_provider_id: int
    # Its number of inventories.
    inventories: int
    # Its trait names joined by commas; None if it has none, or if the
    # statement was made without them.
    names: typing.Optional[str]


@functools.lru_cache(maxsize=8)
def providers(ids, with_traits):
    """Every provider of ``:roots``' trees and its number of inventories.

    ``ids``: how ``:roots`` is bound (an IdList). Rows (``id``,
    ``uuid``, ``parent_provider_id``, ``root_provider_id``,
    ``inventories``, ``names``: a :class:`ProviderRow`), in no order
    (the order is no part of the answer); ``with_traits``: ``names`` is
    the provider's trait names joined by commas (NULL if none), so that
    :func:`traits` need not run; else NULL. A parent
    and a root are in the same tree as their child, so the rows
    themselves name them: no self-joins. The count tells the search
    whether the candidate rows already hold all of a provider's
    inventories (in a flat cloud they do), so that only the others are
    read again (:func:`inventories`).
    """
    rp = sql.RP
    columns = (rp.c.id, rp.c.uuid, rp.c.parent_provider_id,
               rp.c.root_provider_id)
    if not with_traits:
        return cl.of_trees(
            sa.select(*columns, _inventories(rp.c.id),
                      sa.null().label('names')), rp, ids)
    # The trees' providers once (a CTE read twice is computed once),
    # their traits as one hash-joined aggregate over them: a per-provider
    # subquery instead scans the whole traits table for each provider
    # (the planner's choice for a small table).
    tree = cl.of_trees(sa.select(*columns), rp, ids).cte('tree')
    names = cl.trait_names(within=tree.alias('member'))
    return (sa.select(*tree.c, _inventories(tree.c.id), names.c.names)
            .select_from(tree.outerjoin(names, names.c.id == tree.c.id)))


def _inventories(provider_id):
    return cl.inventory_count(provider_id).label('inventories')


@functools.lru_cache(maxsize=8)
def inventories(ids):
    """Rows (rp id, class name, capacity, used) of the providers ``:ids``.

    Every inventory of each, with its usage.
    """
    inv = sql.INV
    return (sa.select(inv.c.resource_provider_id, cl.RC.c.name,
                      sql.capacity(), inv.c.used)
            .select_from(inv.join(
                cl.RC, cl.RC.c.id == inv.c.resource_class_id))
            .where(ids.contains(inv.c.resource_provider_id, 'ids')))


@functools.lru_cache(maxsize=8)
def traits(ids):
    """(rp_id, trait name) of the providers of ``:roots``' trees, by name."""
    rp_trait, rp = sql.RP_TRAIT, sql.RP
    links = (rp.join(rp_trait, rp_trait.c.resource_provider_id == rp.c.id)
             .join(cl.TRAIT, cl.TRAIT.c.id == rp_trait.c.trait_id))
    return cl.of_trees(
        sa.select(rp_trait.c.resource_provider_id, cl.TRAIT.c.name), links,
        ids).order_by(cl.TRAIT.c.name)
