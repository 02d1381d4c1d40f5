"""What a search looks up besides the providers with room."""

import functools

import sqlalchemy as sa

from resobj.db.sql import resource_provider as sql
from resobj.search.statements import clauses as cl


@functools.lru_cache(maxsize=2)
def names_and_sharing(pairs=True):
    """Rows (kind, name, id, root_id) of what every search starts from.

    Kind ``'rc'``: the id of each class in ``:classes``; ``'trait'``:
    of each trait in ``:traits``; ``'served'``: (no name) a sharing
    provider's id and the root id of a provider it shares with, for
    every provider with the trait named ``:sharing_trait``. One
    statement instead of three. Without ``pairs`` (a limited search,
    which looks up the roots each sharing provider serves window by
    window, see :func:`served_in_window`), a ``'served'`` row names a
    sharing provider only, its root id null: the pairs number as many
    as the cloud's providers in those aggregates.
    """
    def no(type_):
        return sa.cast(sa.null(), type_)
    sharing_id = sa.select(cl.TRAIT.c.id).where(
        cl.TRAIT.c.name == sa.bindparam('sharing_trait')).scalar_subquery()
    if pairs:
        served = _served_pairs(sharing_id=sharing_id).subquery('served')
        served = (served.c[0], served.c[1])
    else:
        served = (sql.RP_TRAIT.c.resource_provider_id, no(sa.Integer))
    # Evaluated once, before the joins of the served pairs, which do not
    # run in a cloud without sharing providers (most of them): the
    # generic plan of a prepared statement cannot know that no provider
    # has the trait, and would hash every provider and aggregate link of
    # the cloud on each search to find nothing. A count, not an EXISTS:
    # an EXISTS expects an early match and scans every trait link
    # instead of probing the trait's index.
    any_sharing = sa.select(sa.func.count()).where(
        sql.RP_TRAIT.c.trait_id == sharing_id).scalar_subquery() > \
        sa.literal_column('0')
    return sa.union_all(
        sql.ids_of('rc', cl.RC.c.name, 'classes', no(sa.Integer)),
        sql.ids_of('trait', cl.TRAIT.c.name, 'traits', no(sa.Integer)),
        sa.select(sa.literal_column("'served'"), no(cl.TRAIT.c.name.type),
                  *served).where(
                      any_sharing,
                      *(() if pairs else _in_an_aggregate(sharing_id))))


def _in_an_aggregate(sharing_id):
    """The conditions of a sharing provider that serves some tree.

    As the pairs have it: the providers with the trait ``sharing_id``
    in an aggregate (which serve their own tree at least).
    """
    # A test per sharing provider through the links' primary key. The
    # OFFSET keeps PostgreSQL from making it a semi-join: its generic
    # plan cannot know that few providers have the trait, and would hash
    # every provider's aggregate links.
    return (sql.RP_TRAIT.c.trait_id == sharing_id,
            sa.select(sql.RP_AGG.c.resource_provider_id).where(
                sql.RP_AGG.c.resource_provider_id ==
                sql.RP_TRAIT.c.resource_provider_id).offset(0).exists())


def _served_pairs(sharing_id=None, window_ids=None):
    """(sharing provider id, root id of a provider it shares with).

    The sharing providers: those with the trait ``sharing_id`` (an
    expression), or else the ids ``:sharing_ids``; with ``window_ids``
    (an IdList), only the roots ``:roots``.
    """
    sharer = sql.RP_AGG.alias('sharer')
    member = sql.RP_AGG.alias('member')
    member_rp = sql.RP.alias('member_rp')
    if sharing_id is None:
        sharers = cl.list_param('sharing_ids')
    else:
        sharers = sa.select(sql.RP_TRAIT.c.resource_provider_id).where(
            sql.RP_TRAIT.c.trait_id == sharing_id)
    sharer_id = sharer.c.resource_provider_id
    if window_ids is not None:
        # The window's roots must drive the joins: a planner by rules
        # (SQLite) would otherwise start from the few sharing providers
        # through the index and join every tree they serve. An
        # expression (``+ 0``) uses no index, so it is only a filter.
        sharer_id = sharer_id + 0
    conditions = [sharer_id.in_(sharers)]
    joined = (sharer.join(member,
                          member.c.aggregate_id == sharer.c.aggregate_id)
              .join(member_rp,
                    member_rp.c.id == member.c.resource_provider_id))
    roots = None if window_ids is None else window_ids.table('roots')
    if roots is not None:
        # The ids as a table, each root's providers a LATERAL subquery on
        # it (behind an OFFSET, which keeps it from being flattened into
        # a join): the planner reaches the trees through the root index,
        # root by root, rather than hashing the ids and reading every
        # provider, which it estimates cheaper.
        member_rp = (sa.select(sql.RP.c.id, sql.RP.c.root_provider_id)
                     .where(sql.RP.c.root_provider_id == roots.c.value)
                     .offset(0).lateral('member_rp'))
        joined = roots.join(member_rp, sa.true()).join(
            member, member.c.resource_provider_id == member_rp.c.id).join(
                sharer, sharer.c.aggregate_id == member.c.aggregate_id)
    elif window_ids is not None:
        conditions.append(window_ids.contains(member_rp.c.root_provider_id,
                                              'roots'))
    return (sa.select(sharer.c.resource_provider_id,
                      member_rp.c.root_provider_id).distinct()
            .select_from(joined).where(*conditions))


@functools.lru_cache(maxsize=8)
def served_in_window(window_ids):
    """Rows (sharing provider id, root id) of the roots ``:roots``.

    The pairs of :func:`names_and_sharing` for the sharing providers
    ``:sharing_ids`` and the roots of one window of a limited search
    only, bound as ``window_ids`` (an IdList). Ids bound as a table
    (PostgreSQL's array) are read root by root through a LATERAL
    subquery; a backend whose window ids are a table must support it.
    """
    return _served_pairs(window_ids=window_ids)


@functools.lru_cache(maxsize=8)
def sharing_in_aggregates(i, group_shape):
    """The ids among ``:ids`` in their own aggregates of group ``i``'s sets.

    Bound as :func:`resobj.search.request.params` binds group ``i``'s
    ``member_of`` sets; see :func:`.clauses.sharer_in_own_aggregates`.
    """
    return sa.select(sql.RP.c.id).where(
        sql.RP.c.id.in_(cl.list_param('ids')),
        *cl.sharer_in_own_aggregates(i, group_shape))


@functools.lru_cache(maxsize=1)
def provider_uuids():
    """Rows (id, uuid) of the providers ``:ids``."""
    return sa.select(sql.RP.c.id, sql.RP.c.uuid).where(
        sql.RP.c.id.in_(cl.list_param('ids')))


@functools.lru_cache(maxsize=1)
def provider_roots():
    """Rows (uuid, root id) of the providers ``:uuids``."""
    return sa.select(sql.RP.c.uuid, sql.RP.c.root_provider_id).where(
        sql.RP.c.uuid.in_(cl.list_param('uuids')))


@functools.lru_cache(maxsize=1)
def aggregates_in_use():
    """A row if a provider is in one of the aggregates ``:aggregates``.

    ``:aggregates``: uuids. No row: a ``member_of`` set no provider
    passes.
    """
    return sa.select(sa.literal_column('1')).select_from(
        sql.RP_AGG.join(sql.AGG, sql.AGG.c.id == sql.RP_AGG.c.aggregate_id)
    ).where(sql.AGG.c.uuid.in_(cl.list_param('aggregates'))).limit(1)


@functools.lru_cache(maxsize=8)
def trait_links(ids):
    """Rows (rp_id, trait_id) of the traits ``:traits`` among ``:ids``.

    ``ids``: how ``:ids`` is bound (an IdList).
    """
    return sa.select(
        sql.RP_TRAIT.c.resource_provider_id, sql.RP_TRAIT.c.trait_id,
    ).where(ids.contains(sql.RP_TRAIT.c.resource_provider_id, 'ids'),
            sql.RP_TRAIT.c.trait_id.in_(cl.list_param('traits')))


@functools.lru_cache(maxsize=256)
def resourceless_providers(request_shape):
    """Rows (grp, rp_id, root_id) of resourceless groups' providers.

    Every provider passing group ``grp``'s traits, aggregates and tree
    (the values are those of ``request.params`` for the resourceless
    groups alone). Such a group asks for no capacity, so an inventory is
    no condition.
    """
    selects = [
        sa.select(sa.literal(i, sa.Integer).label('grp'), sql.RP.c.id,
                  sql.RP.c.root_provider_id)
        .where(*cl.group_clauses(i, group_shape))
        for i, group_shape in enumerate(request_shape)]
    return selects[0] if len(selects) == 1 else sa.union_all(*selects)
