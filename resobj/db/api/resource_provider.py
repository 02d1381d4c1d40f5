"""Queries on resource providers, their trees, aggregates and traits.

The provider tables are hard-deleted, so the soft-delete helpers of
``utils`` (``select``, ``get_one``, ``update_live``) do not apply; rows
are still read and inserted through ``utils.fetch_*`` and
``utils.insert``.

Concurrency: every change that callers order by generation ends with
:func:`increment_generation`, a compare-and-swap in the same transaction,
so a change made from a stale generation rolls back entirely.
"""

import functools

from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as models
from resobj.db.models import trait as trait_models
from resobj.db.sql import resource_provider as sql
from resobj import exception

_RP = models.ResourceProvider.__table__
_AGG = models.PlacementAggregate.__table__
_RP_AGG = models.ResourceProviderAggregate.__table__
_RP_TRAIT = models.ResourceProviderTrait.__table__
_INV = inv_models.Inventory.__table__
_ALLOC = alloc_models.Allocation.__table__
_TRAIT = trait_models.Trait.__table__

FILTERS = frozenset({'name', 'uuid', 'member_of', 'forbidden_aggregates',
                     'in_tree', 'required_traits', 'forbidden_traits',
                     'resources'})


def _provider_select():
    """Providers with their root's and parent's uuids, in one query."""
    root = _RP.alias('root')
    parent = _RP.alias('parent')
    return sa.select(
        _RP.c.id, _RP.c.uuid, _RP.c.name, _RP.c.generation,
        _RP.c.root_provider_id, _RP.c.parent_provider_id,
        root.c.uuid.label('root_provider_uuid'),
        parent.c.uuid.label('parent_provider_uuid'),
        _RP.c.created_at, _RP.c.updated_at,
    ).select_from(
        # Inner join: root_provider_id is NULL only inside the transaction
        # that creates a root.
        _RP.join(root, root.c.id == _RP.c.root_provider_id)
        .outerjoin(parent, parent.c.id == _RP.c.parent_provider_id))


@functools.cache
def _by(column):
    # One provider by id or uuid is read on nearly every request; the
    # statement is built once and only its parameter changes.
    return _provider_select().where(_RP.c[column] == sa.bindparam('key'))


def _get_one(context, key, column, value):
    row = utils.fetch_one(context, _by(column), {'key': value})
    if row is None:
        raise exception.ResourceProviderNotFound(key=key)
    return row


@facade.reader
def get(context, provider_id):
    return _get_one(context, 'id=%s' % provider_id, 'id', provider_id)


@facade.reader
def get_by_uuid(context, uuid):
    return _get_one(context, uuid, 'uuid', uuid)


@facade.writer
def increment_generation(context, provider_id, seen_generation):
    """Set the generation to ``seen_generation + 1``; return it.

    A compare-and-swap: when the stored generation is no longer
    ``seen_generation`` (another change came first, or the provider is
    gone) this raises ResourceProviderConcurrentUpdateDetected, and the
    caller's transaction, which this joins, rolls back with it.
    """
    count = utils.execute(
        context,
        sa.update(_RP)
        .where(_RP.c.id == provider_id, _RP.c.generation == seen_generation)
        .values(generation=seen_generation + 1, updated_at=base.utcnow())
    ).rowcount
    if count != 1:
        # Only on the failure path: name the provider as users know it.
        uuid = utils.execute(
            context,
            sa.select(_RP.c.uuid).where(_RP.c.id == provider_id)
        ).scalar()
        raise exception.ResourceProviderConcurrentUpdateDetected(
            provider=uuid or 'id=%s' % provider_id,
            generation=seen_generation)
    return seen_generation + 1


def _parent_row(context, uuid, parent_uuid):
    if parent_uuid == uuid:
        raise exception.InvalidResourceProviderParent(
            uuid=uuid, parent=parent_uuid,
            reason='a provider cannot be its own parent')
    row = utils.fetch_one(context, sa.select(
        _RP.c.id, _RP.c.root_provider_id).where(_RP.c.uuid == parent_uuid))
    if row is None:
        raise exception.InvalidResourceProviderParent(
            uuid=uuid, parent=parent_uuid, reason='no such provider')
    return row


@facade.writer
def create(context, uuid, name, parent_provider_uuid=None):
    """Insert a provider; return its row.

    A root is its own root: its ``root_provider_id`` is set to its new id
    in the same transaction. A child takes its parent's root.
    """
    root_id = parent_id = None
    if parent_provider_uuid is not None:
        parent = _parent_row(context, uuid, parent_provider_uuid)
        parent_id, root_id = parent['id'], parent['root_provider_id']
    try:
        provider_id = utils.insert(context, _RP, {
            'uuid': uuid, 'name': name, 'generation': 0,
            'parent_provider_id': parent_id, 'root_provider_id': root_id})
    except db_exc.DBDuplicateEntry:
        raise exception.ResourceProviderExists(name=name, uuid=uuid)
    except db_exc.DBReferenceError:
        # The parent was deleted after it was read.
        raise exception.InvalidResourceProviderParent(
            uuid=uuid, parent=parent_provider_uuid, reason='no such provider')
    if root_id is None:
        utils.execute(context, sa.update(_RP).where(
            _RP.c.id == provider_id).values(root_provider_id=provider_id))
    return get(context, provider_id)


def _subtree_ids(context, row):
    """The ids of ``row``'s provider and all its descendants.

    One query reads the (id, parent) pairs of the provider's whole tree;
    the walk down from the provider happens here, which every backend
    supports alike (MySQL cannot update a table from a recursive select
    on itself).
    """
    pairs = utils.execute(
        context,
        sa.select(_RP.c.id, _RP.c.parent_provider_id).where(
            _RP.c.root_provider_id == row['root_provider_id'])).all()
    children = {}
    for child_id, parent_id in pairs:
        children.setdefault(parent_id, []).append(child_id)
    found, todo = set(), [row['id']]
    while todo:
        current = todo.pop()
        found.add(current)
        todo.extend(children.get(current, ()))
    return found


@facade.writer
def update(context, provider_id, values):
    """Change ``name`` and/or ``parent_provider_uuid``; return the row.

    The generation is neither checked nor bumped, as in placement. A new
    parent must exist and must not be the provider or one of its
    descendants; when the root changes, every descendant's root changes
    with it, in this transaction. ``parent_provider_uuid=None`` makes the
    provider a root.
    """
    unknown = set(values) - {'name', 'parent_provider_uuid'}
    if unknown:
        raise exception.Invalid(
            message='Only a provider\'s name and parent can be updated, '
                    'not %s' % ', '.join(sorted(unknown)))
    row = get(context, provider_id)
    changes = {}
    if 'name' in values and values['name'] != row['name']:
        changes['name'] = values['name']
    new_parent = values.get('parent_provider_uuid', row[
        'parent_provider_uuid'])
    subtree = None
    if new_parent != row['parent_provider_uuid']:
        if new_parent is None:
            parent_id, root_id = None, provider_id
        else:
            parent = _parent_row(context, row['uuid'], new_parent)
            subtree = _subtree_ids(context, row)
            if parent['id'] in subtree:
                raise exception.InvalidResourceProviderParent(
                    uuid=row['uuid'], parent=new_parent,
                    reason='it is a descendant of the provider, which '
                           'would make a loop')
            parent_id, root_id = parent['id'], parent['root_provider_id']
        changes['parent_provider_id'] = parent_id
        if root_id != row['root_provider_id']:
            if subtree is None:
                subtree = _subtree_ids(context, row)
            utils.execute(
                context,
                sa.update(_RP).where(_RP.c.id.in_(sorted(subtree)))
                .values(root_provider_id=root_id))
    if changes:
        changes['updated_at'] = base.utcnow()
        try:
            utils.execute(context, sa.update(_RP).where(
                _RP.c.id == provider_id).values(changes))
        except db_exc.DBDuplicateEntry:
            raise exception.ResourceProviderExists(
                name=values.get('name'), uuid=row['uuid'])
        except db_exc.DBReferenceError:
            raise exception.InvalidResourceProviderParent(
                uuid=row['uuid'], parent=new_parent,
                reason='no such provider')
    return get(context, provider_id)


def _exists(context, stmt):
    return utils.execute(context, stmt.limit(1)).first() is not None


@facade.writer
def destroy(context, provider_id):
    """Delete a provider with its inventories, aggregate and trait links.

    Refused while it has children or allocations. One transaction: a
    refusal or a failure leaves everything in place.
    """
    row = get(context, provider_id)
    if _exists(context, sa.select(_RP.c.id).where(
            _RP.c.parent_provider_id == provider_id)):
        raise exception.CannotDeleteParentResourceProvider(uuid=row['uuid'])
    if _exists(context, sa.select(_ALLOC.c.id).where(
            _ALLOC.c.resource_provider_id == provider_id)):
        raise exception.ResourceProviderInUse(uuid=row['uuid'])
    for table in (_INV, _RP_AGG, _RP_TRAIT):
        utils.execute(context, sa.delete(table).where(
            table.c.resource_provider_id == provider_id))
    try:
        # A root references itself; clear that before the row goes, as
        # not every backend checks self-references at statement end.
        utils.execute(context, sa.update(_RP).where(
            _RP.c.id == provider_id).values(root_provider_id=None))
        utils.execute(context, sa.delete(_RP).where(
            _RP.c.id == provider_id))
    except db_exc.DBReferenceError:
        # A child was added after the check above.
        raise exception.CannotDeleteParentResourceProvider(uuid=row['uuid'])
    return row


def _ensure_aggregates(context, uuids):
    """{uuid: id} of placement_aggregates rows, inserting missing ones.

    Safe against concurrent inserts of the same uuid: each insert runs
    in a savepoint, and a lost race re-reads the winner's row with a
    locking read, which (unlike a plain read under MySQL's repeatable
    read) sees rows committed after this transaction began.
    """
    uuids = sorted(set(uuids))
    if not uuids:
        return {}
    found = dict(utils.execute(
        context,
        sa.select(_AGG.c.uuid, _AGG.c.id).where(_AGG.c.uuid.in_(uuids))
    ).all())
    for uuid in uuids:
        if uuid in found:
            continue
        try:
            with context.session.begin_nested():
                found[uuid] = utils.insert(context, _AGG, {'uuid': uuid})
        except db_exc.DBDuplicateEntry:
            found[uuid] = utils.execute(
                context,
                sa.select(_AGG.c.id).where(_AGG.c.uuid == uuid)
                .with_for_update(read=True)).scalar_one()
    return found


def _replace_links(context, table, column, provider_id, wanted_ids):
    """Make the provider's links in ``table`` exactly ``wanted_ids``.

    Returns whether anything changed.
    """
    current = set(utils.execute(
        context,
        sa.select(table.c[column]).where(
            table.c.resource_provider_id == provider_id)).scalars())
    wanted = set(wanted_ids)
    removed, added = current - wanted, wanted - current
    if removed:
        utils.execute(context, sa.delete(table).where(
            table.c.resource_provider_id == provider_id,
            table.c[column].in_(sorted(removed))))
    if added:
        now = base.utcnow()
        utils.execute(context, sa.insert(table), [
            {'resource_provider_id': provider_id, column: link_id,
             'created_at': now} for link_id in sorted(added)])
    return bool(removed or added)


@facade.writer
def set_aggregates(context, provider_id, aggregate_uuids,
                   seen_generation=None):
    """Make ``aggregate_uuids`` the provider's aggregates.

    Unknown aggregate uuids are recorded. With ``seen_generation`` the
    change ends with the generation compare-and-swap (always, changed or
    not); without it the generation is left alone, as placement did before
    microversion 1.19. Returns the provider's generation afterwards.
    """
    ids = _ensure_aggregates(context, aggregate_uuids)
    _replace_links(context, _RP_AGG, 'aggregate_id', provider_id,
                   ids.values())
    if seen_generation is None:
        return get(context, provider_id)['generation']
    return increment_generation(context, provider_id, seen_generation)


@facade.reader
def get_aggregates(context, provider_id):
    """The provider's aggregate uuids, in the aggregates' creation order.

    As placement lists them.
    """
    return list(utils.execute(
        context,
        sa.select(_AGG.c.uuid).select_from(
            _AGG.join(_RP_AGG, _RP_AGG.c.aggregate_id == _AGG.c.id))
        .where(_RP_AGG.c.resource_provider_id == provider_id)
        .order_by(_AGG.c.id)).scalars())


@facade.writer
def set_traits(context, provider_id, seen_generation, trait_names):
    """Make ``trait_names`` the provider's traits; return the generation.

    Unknown names raise TraitNotFound, naming every one of them (as
    placement's answer does). The generation is compared and bumped only
    when the set of traits changes, as in placement.
    """
    ids = trait_db.ids_by_names(context, trait_names, every=True)
    if not _replace_links(context, _RP_TRAIT, 'trait_id', provider_id,
                          ids.values()):
        return seen_generation
    return increment_generation(context, provider_id, seen_generation)


@facade.reader
def get_traits(context, provider_id):
    """The provider's trait names, in the traits' creation order."""
    return list(utils.execute(
        context,
        sa.select(_TRAIT.c.name).select_from(
            _TRAIT.join(_RP_TRAIT, _RP_TRAIT.c.trait_id == _TRAIT.c.id))
        .where(_RP_TRAIT.c.resource_provider_id == provider_id)
        .order_by(_TRAIT.c.id)).scalars())


def _nothing_to_list(context, tree, in_aggregates, with_traits, missing):
    """Whether placement lists no providers instead of raising ``missing``.

    Placement looks the filters up in an order, and answers an empty
    list as soon as one leaves no provider, before it reaches the names
    that do not exist: a tree that does not exist (before any name), then,
    for an unknown class, the aggregates (``member_of`` alone) or the
    required traits (alone) that no provider has. ``in_aggregates`` and
    ``with_traits``: the list's conditions of each. Only run once a name
    is found unknown, so that a valid list costs no statement more.
    """
    if tree is not None and not _exists(
            context, sa.select(_RP.c.id).where(_RP.c.uuid == tree)):
        return True
    if not isinstance(missing, exception.ResourceClassNotFound):
        return False
    return any(
        terms and not _exists(context, sa.select(_RP.c.id).where(*terms))
        for terms in (in_aggregates, with_traits))


@facade.reader
def get_all_by_filters(context, filters=None):
    """Providers matching every filter given, ordered by id.

    ``filters`` keys (all optional):

    ``name``, ``uuid``
        exact match;
    ``member_of``
        a list of lists of aggregate uuids: the provider must be in at
        least one aggregate of every inner list (its root's aggregates
        do not count, as in placement's provider list);
    ``forbidden_aggregates``
        aggregate uuids the provider may not be in;
    ``in_tree``
        a provider uuid: providers of the same tree;
    ``required_traits``
        a list of sets of trait names: the provider must have at least
        one trait of every set;
    ``forbidden_traits``
        trait names the provider must have none of;
    ``resources``
        ``{resource class name: amount}``: the provider has inventory of
        each class with room for ``amount`` more, within its min_unit,
        max_unit and step_size.

    Unknown traits raise TraitNotFound (naming the first: the required
    ones in the order given, then the forbidden ones), unknown classes
    ResourceClassNotFound (the first in the order given), but where
    placement answers no providers instead (see
    :func:`_nothing_to_list`): then the list is empty. The statements
    run do not grow with the number of providers or allocations.
    """
    filters = dict(filters or {})
    unknown = set(filters) - FILTERS
    if unknown:
        raise exception.Invalid(message='Unknown resource provider filters: '
                                '%s' % ', '.join(sorted(unknown)))
    stmt = _provider_select()
    if filters.get('name') is not None:
        stmt = stmt.where(_RP.c.name == filters['name'])
    if filters.get('uuid') is not None:
        stmt = stmt.where(_RP.c.uuid == filters['uuid'])
    if filters.get('in_tree') is not None:
        stmt = stmt.where(sql.in_tree_of(filters['in_tree']))
    # The provider's own aggregates, not its root's: placement's rule
    # for listing providers (a candidate search counts the root's too).
    in_aggregates = [sql.in_aggregates(any_of, through_root=False)
                     for any_of in filters.get('member_of') or ()]
    if in_aggregates:
        stmt = stmt.where(*in_aggregates)
    if filters.get('forbidden_aggregates'):
        stmt = stmt.where(~sql.in_aggregates(
            filters['forbidden_aggregates'], through_root=False))
    required = [set(any_of) for any_of in
                filters.get('required_traits') or ()]
    forbidden = set(filters.get('forbidden_traits') or ())
    resources = filters.get('resources') or {}
    with_traits = []
    try:
        if required or forbidden:
            # One lookup for every trait named, however many filters
            # name it; an unknown one is named in placement's order:
            # the required ones as given (an in: set's by name), then
            # the forbidden ones.
            ids = trait_db.ids_by_names(
                context, [name for any_of in required
                          for name in sorted(any_of)] + sorted(forbidden),
                in_order=True)
            with_traits = [sql.with_any_trait(ids[n] for n in any_of)
                           for any_of in required]
            if with_traits:
                stmt = stmt.where(*with_traits)
            if forbidden:
                stmt = stmt.where(~sql.with_any_trait(
                    ids[n] for n in forbidden))
        if resources:
            # An unknown one named in the order given, as placement.
            rc_ids = rc_db.ids_by_names(context, resources, in_order=True)
            for name, amount in sorted(resources.items()):
                stmt = stmt.where(sql.with_room(rc_ids[name], amount))
    except (exception.TraitNotFound,
            exception.ResourceClassNotFound) as missing:
        if _nothing_to_list(context, filters.get('in_tree'), in_aggregates,
                            with_traits, missing):
            return []
        raise
    return utils.fetch_all(context, stmt.order_by(_RP.c.id))
