"""The provider summaries of the trees the requests use."""

import functools
import typing

import sqlalchemy as sa

from resobj.db.sql import resource_provider as sql
from resobj.search.statements import clauses as cl


class ProviderRow(typing.NamedTuple):
    """A row of :func:`providers`."""

    id: int
    uuid: str
    parent_provider_id: typing.Optional[int]
    root_provider_id: int
    # Its number of inventories.
    inventories: int
    # Its trait names joined by commas (a row of the statement holds
    # one; the DB API joins a provider's rows, see :func:`providers`);
    # None if it has none, or if the statement was made without them.
    names: typing.Optional[str]


@functools.lru_cache(maxsize=8)
def providers(ids, with_traits):
    """Every provider of ``:roots``' trees and its number of inventories.

    ``ids``: how ``:roots`` is bound (an IdList). Rows (``id``,
    ``uuid``, ``parent_provider_id``, ``root_provider_id``,
    ``inventories``, ``names``: a :class:`ProviderRow`), in no order
    (the order is no part of the answer). ``with_traits``: one row per
    trait of the provider, ``names`` its name (one row, NULL, for a
    provider without traits), so that :func:`traits` need not run;
    the reader joins a provider's names. Else one row per provider,
    ``names`` NULL. A parent and a root are in the same tree as their
    child, so the rows themselves name them: no self-joins. The count
    tells the search whether the candidate rows already hold all of a
    provider's inventories (in a flat cloud they do), so that only the
    others are read again (:func:`inventories`).
    """
    rp = sql.RP
    columns = (rp.c.id, rp.c.uuid, rp.c.parent_provider_id,
               rp.c.root_provider_id, _inventories(rp.c.id))
    if not with_traits:
        return cl.of_trees(
            sa.select(*columns, sa.null().label('names')), rp, ids)
    # Rows, not an aggregate per provider: the planner sizes the hash
    # aggregate for the trees of a few roots, and over thousands of
    # providers its states spilled to disk; the joins are index lookups.
    rp_trait = sql.RP_TRAIT
    links = rp.outerjoin(
        rp_trait, rp_trait.c.resource_provider_id == rp.c.id).outerjoin(
        cl.TRAIT, cl.TRAIT.c.id == rp_trait.c.trait_id)
    return cl.of_trees(
        sa.select(*columns, cl.TRAIT.c.name.label('names')), links, ids)


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
