"""Queries on the compute_nodes table, and its online data migrations.

Reads join the node's resource provider (same uuid) and its VCPU,
MEMORY_MB and DISK_GB inventories in the same query, so callers can
prefer the provider's values and fall back to the legacy columns; writes
that touch both stores go through one writer function, one transaction.
"""

import os_resource_classes as orc
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import resource_class as rc_db
from resobj.db.api import resource_provider as rp_db
from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import base
from resobj.db.models import compute_node as models
from resobj.db.models import consumer as consumer_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models
from resobj import exception

LOG = logging.getLogger(__name__)

_TABLE = models.ComputeNode.__table__
_RP = rp_models.ResourceProvider.__table__
_INV = inv_models.Inventory.__table__
_ALLOC = alloc_models.Allocation.__table__
_CONSUMER = consumer_models.Consumer.__table__
RATIO_COLUMNS = ('cpu_allocation_ratio', 'ram_allocation_ratio',
                 'disk_allocation_ratio')

# The legacy total column standing for each class, and its ratio column.
# Reads label the provider's values inv_<total>, inv_<total>_used,
# inv_<total>_reserved and inv_<ratio>; all are NULL when the provider
# has no inventory of that class (or there is no provider).
RESOURCES = (
    (orc.VCPU, 'vcpus', 'cpu_allocation_ratio'),
    (orc.MEMORY_MB, 'memory_mb', 'ram_allocation_ratio'),
    (orc.DISK_GB, 'local_gb', 'disk_allocation_ratio'),
)


def _standard_class_id(name):
    # Standard classes are stored with their os-resource-classes index as
    # id on every deployment (resource_class.ensure_sync), so the read
    # needs no lookup and works before the classes are synced.
    return orc.STANDARDS.index(name)


def _node_select():
    """compute_nodes with their provider's inventory and usage: one query.

    compute_nodes LEFT JOIN resource_providers ON uuid, then per class a
    LEFT JOIN of that class's inventory, which carries its usage.
    """
    columns = [_TABLE]
    joined = _TABLE.outerjoin(_RP, _RP.c.uuid == _TABLE.c.uuid)
    for rc_name, total, ratio in RESOURCES:
        rc_id = _standard_class_id(rc_name)
        inv = _INV.alias('inv_' + total)
        joined = joined.outerjoin(inv, sa.and_(
            inv.c.resource_provider_id == _RP.c.id,
            inv.c.resource_class_id == rc_id))
        columns += [
            inv.c.total.label('inv_' + total),
            inv.c.reserved.label('inv_%s_reserved' % total),
            inv.c.allocation_ratio.label('inv_' + ratio),
            # NULL without inventory, like the other inv_ columns.
            inv.c.used.label('inv_%s_used' % total),
        ]
    return sa.select(*columns).select_from(joined)


def _fetch(context, *criteria):
    return utils.fetch_all(context, utils.filter_deleted(
        context, _TABLE, _node_select().where(*criteria)
        .order_by(_TABLE.c.id)))


def _from_row(row):
    if row is not None:
        row['stats'] = jsonutils.loads(row['stats']) if row['stats'] else {}
        row['numa_topology'] = utils.json_or_none(row.get('numa_topology'))
    return row


def _to_db(values):
    """Column values from plain ones: stats and numa_topology as JSON."""
    values = dict(values)
    if 'stats' in values:
        values['stats'] = jsonutils.dumps(values['stats'] or {})
    if 'numa_topology' in values:
        values['numa_topology'] = utils.json_text_or_none(
            values['numa_topology'])
    return values


def _get_one(context, key, *criteria):
    rows = _fetch(context, *criteria)
    if not rows:
        raise exception.ComputeNodeNotFound(key=key)
    return _from_row(rows[0])


@facade.reader
def get(context, compute_node_id):
    return _get_one(context, 'id=%s' % compute_node_id,
                    _TABLE.c.id == compute_node_id)


@facade.reader
def get_by_uuid(context, uuid):
    return _get_one(context, 'uuid=%s' % uuid, _TABLE.c.uuid == uuid)


@facade.reader
def get_by_host_and_nodename(context, host, nodename):
    return _get_one(context, '%s/%s' % (host, nodename),
                    _TABLE.c.host == host,
                    _TABLE.c.hypervisor_hostname == nodename)


@facade.reader
def get_all(context, host=None):
    criteria = [] if host is None else [_TABLE.c.host == host]
    return [_from_row(row) for row in _fetch(context, *criteria)]


@facade.writer
def create(context, values, inventories=None):
    """Insert a node; with ``inventories``, its provider's too.

    ``inventories`` is as for :func:`save_with_inventory`; node, provider
    and inventories are written in this one transaction.
    """
    values = _to_db(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    try:
        compute_node_id = utils.insert(context, _TABLE, values)
    except db_exc.DBDuplicateEntry:
        raise exception.ComputeNodeExists(
            host=values.get('host'),
            nodename=values.get('hypervisor_hostname'))
    if inventories is not None:
        _write_inventories(context, _live_row(context, compute_node_id),
                           inventories)
    return get(context, compute_node_id)


@facade.writer
def save_with_inventory(context, compute_node_id, values, inventories):
    """Update a node's legacy columns and its provider's inventory at once.

    ``values`` are legacy column changes (may be empty). ``inventories``
    maps a class name (VCPU, MEMORY_MB, DISK_GB) to ``{'total',
    'allocation_ratio'}`` and optionally ``'reserved'``; classes not
    listed are left alone. The provider (uuid = the node's, name = its
    hypervisor_hostname, made unique on a clash) is created when missing.
    A class with total 0 has its inventory deleted, unless something is
    allocated from it (then it is kept and a warning logged): inventory
    totals must be at least 1.

    One transaction: if any step fails nothing is changed, neither the
    legacy columns nor the inventory.
    """
    if values:
        update(context, compute_node_id, values)
    _write_inventories(context, _live_row(context, compute_node_id),
                       inventories)
    return get(context, compute_node_id)


def _live_row(context, compute_node_id):
    row = utils.fetch_one(context, sa.select(
        _TABLE.c.id, _TABLE.c.uuid, _TABLE.c.hypervisor_hostname).where(
        _TABLE.c.id == compute_node_id, _TABLE.c.deleted == 0))
    if row is None:
        raise exception.ComputeNodeNotFound(key='id=%s' % compute_node_id)
    return row


def _ensure_provider(context, node):
    """(id, generation) of the node's provider, creating it if missing.

    The provider is named after the node's hypervisor_hostname; provider
    names are unique, so when another provider has that name (a node
    of the same name on another host, say) the uuid is appended, which
    is unique by itself. Each insert runs in a savepoint so a lost race
    leaves the transaction usable; a provider created concurrently with
    the same uuid is then re-read with a locking read, which sees rows
    committed after this transaction began (MySQL's repeatable read
    would otherwise hide it).
    """
    found = utils.execute(
        context,
        sa.select(_RP.c.id, _RP.c.generation).where(
            _RP.c.uuid == node['uuid'])).first()
    if found is not None:
        return tuple(found)
    base_name = node['hypervisor_hostname'] or node['uuid']
    for name in (base_name, '%s-%s' % (base_name, node['uuid'])):
        try:
            with context.session.begin_nested():
                row = rp_db.create(context, node['uuid'], name[:200])
            return row['id'], row['generation']
        except exception.ResourceProviderExists:
            found = utils.execute(
                context,
                sa.select(_RP.c.id, _RP.c.generation)
                .where(_RP.c.uuid == node['uuid'])
                .with_for_update()).first()
            if found is not None:
                return tuple(found)
    raise exception.ResourceProviderExists(name=base_name,
                                           uuid=node['uuid'])


def _wanted(provider_uuid, name, spec, current):
    """The inventory row ``spec`` asks for, or None for "no inventory".

    Reserved is the one given (more than the total is refused), else the
    current row's (an operator may have set it on the provider; capped at
    a total that shrank), else 0.
    """
    total = int(spec['total'])
    if total < 1:
        return None
    reserved = spec.get('reserved')
    if reserved is None:
        reserved = current['reserved'] if current else 0
    elif int(reserved) > total:
        raise exception.InvalidInventoryValue(
            resource_class=name, provider=provider_uuid,
            reason='reserved %s is more than the total %s'
            % (reserved, total))
    ratio = float(spec['allocation_ratio'])
    if not ratio > 0:
        raise exception.InvalidInventoryValue(
            resource_class=name, provider=provider_uuid,
            reason='allocation_ratio must be greater than 0, not %r'
            % (ratio,))
    return {'total': total, 'reserved': min(int(reserved), total),
            'min_unit': 1, 'max_unit': total, 'step_size': 1,
            'allocation_ratio': ratio}


def _write_inventories(context, node, inventories):
    """Make the node's provider hold ``inventories``; see save_with_inventory.

    Bumps the provider's generation (a compare-and-swap) once, when
    anything changed, so placement-style writers working from the old
    generation fail rather than overwrite this.
    """
    if not inventories:
        return
    provider_id, generation = _ensure_provider(context, node)
    rc_ids = rc_db.ids_by_names(context, inventories)
    columns = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
               'allocation_ratio')
    current = {row['resource_class_id']: row for row in utils.fetch_all(
        context, sa.select(_INV.c.resource_class_id,
                           *(_INV.c[c] for c in columns)).where(
            _INV.c.resource_provider_id == provider_id,
            _INV.c.resource_class_id.in_(sorted(rc_ids.values()))))}
    now = base.utcnow()
    changed = False
    for name, spec in sorted(inventories.items()):
        rc_id = rc_ids[name]
        old = current.get(rc_id)
        new = _wanted(node['uuid'], name, spec, old)
        if new is None:
            if old is not None:
                changed |= _delete_unused(context, node, provider_id,
                                          rc_id, name)
        elif old is None:
            utils.execute(context, sa.insert(_INV).values(dict(
                new, resource_provider_id=provider_id,
                resource_class_id=rc_id, created_at=now)))
            changed = True
        elif any(old[c] != new[c] for c in columns):
            utils.execute(
                context,
                sa.update(_INV).where(
                    _INV.c.resource_provider_id == provider_id,
                    _INV.c.resource_class_id == rc_id)
                .values(dict(new, updated_at=now)))
            changed = True
    if changed:
        rp_db.increment_generation(context, provider_id, generation)


def _delete_unused(context, node, provider_id, rc_id, name):
    """Delete one class's inventory unless it is in use; whether deleted."""
    in_use = utils.execute(
        context,
        sa.select(_ALLOC.c.id).where(
            _ALLOC.c.resource_provider_id == provider_id,
            _ALLOC.c.resource_class_id == rc_id).limit(1)).first()
    if in_use is not None:
        # Deleting it would orphan allocations; the provider keeps
        # advertising the old total until they are gone.
        LOG.warning('Compute node %s reports no %s but its resource '
                    'provider has allocations of it; keeping the '
                    'inventory', node['uuid'], name)
        return False
    utils.execute(context, sa.delete(_INV).where(
        _INV.c.resource_provider_id == provider_id,
        _INV.c.resource_class_id == rc_id))
    return True


@facade.writer
def update(context, compute_node_id, values):
    try:
        count = utils.update_live(context, _TABLE, _to_db(values),
                                  _TABLE.c.id == compute_node_id)
    except db_exc.DBDuplicateEntry:
        raise exception.ComputeNodeExists(
            host=values.get('host'),
            nodename=values.get('hypervisor_hostname'))
    if not count:
        raise exception.ComputeNodeNotFound(key='id=%s' % compute_node_id)
    return get(context, compute_node_id)


@facade.writer
def destroy(context, compute_node_id):
    """Soft-delete a compute node and delete its resource provider.

    One transaction. The provider (same uuid as the node) goes with its
    inventories, aggregate and trait links; while any consumer has
    allocations on it the node is refused (ComputeNodeInUse) and nothing
    changes. A node without a provider is simply soft-deleted. Returns
    the node's row as deleted.
    """
    node = _live_row(context, compute_node_id)
    provider_id = utils.execute(
        context,
        sa.select(_RP.c.id).where(_RP.c.uuid == node['uuid'])
    ).scalar_one_or_none() if node['uuid'] else None
    if provider_id is not None:
        consumers = utils.execute(
            context,
            sa.select(_ALLOC.c.consumer_id).distinct().where(
                _ALLOC.c.resource_provider_id == provider_id)
            .order_by(_ALLOC.c.consumer_id)).scalars().all()
        if consumers:
            raise exception.ComputeNodeInUse(
                node=node['hypervisor_hostname'] or compute_node_id,
                provider=node['uuid'], consumers=len(consumers),
                example=_consumer_uuid(context, consumers[0]))
        rp_db.destroy(context, provider_id)
    row = utils.soft_delete_row(context, _TABLE, compute_node_id)
    if row is None:
        raise exception.ComputeNodeNotFound(key='id=%s' % compute_node_id)
    return _from_row(row)


def _consumer_uuid(context, consumer_id):
    return utils.execute(
        context,
        sa.select(_CONSUMER.c.uuid).where(_CONSUMER.c.id == consumer_id)
    ).scalar_one_or_none()


@facade.writer
def set_uuid_if_missing(context, compute_node_id, uuid):
    """Give a legacy row ``uuid`` unless it got one meanwhile; return it.

    A compare-and-swap (``WHERE uuid IS NULL``), so two readers filling
    the same row concurrently agree on the winner's uuid.
    """
    utils.execute(
        context,
        sa.update(_TABLE)
        .where(_TABLE.c.id == compute_node_id, _TABLE.c.uuid.is_(None))
        .values(uuid=uuid))
    return utils.execute(
        context,
        sa.select(_TABLE.c.uuid).where(_TABLE.c.id == compute_node_id)
    ).scalar_one()


# The live rows backfill_uuids fixes.
_LACKS_UUID = (_TABLE.c.uuid.is_(None), _TABLE.c.deleted == 0)


@facade.reader
def count_lacking_uuids(context):
    """How many rows :func:`backfill_uuids` has left to fix."""
    return utils.count(context, _TABLE, *_LACKS_UUID)


@facade.writer
def backfill_uuids(context, max_count):
    """Online migration: give up to ``max_count`` legacy rows a uuid.

    Returns (found, done). Re-runnable: only rows still lacking one match.
    """
    ids = utils.execute(
        context,
        sa.select(_TABLE.c.id).where(*_LACKS_UUID)
        .order_by(_TABLE.c.id).limit(max_count)).scalars().all()
    done = 0
    for compute_node_id in ids:
        done += utils.execute(
            context,
            sa.update(_TABLE)
            .where(_TABLE.c.id == compute_node_id, _TABLE.c.uuid.is_(None))
            .values(uuid=uuidutils.generate_uuid())).rowcount
    return len(ids), done


def _empty(column):
    return sa.or_(column.is_(None), column == 0.0)


def _empty_ratios():
    """The live rows fill_empty_ratios fixes."""
    return (_TABLE.c.deleted == 0,
            sa.or_(*(_empty(_TABLE.c[c]) for c in RATIO_COLUMNS)))


@facade.reader
def count_empty_ratios(context):
    """How many rows :func:`fill_empty_ratios` has left to fix."""
    return utils.count(context, _TABLE, *_empty_ratios())


@facade.writer
def fill_empty_ratios(context, max_count, defaults):
    """Online migration: set NULL or 0.0 allocation ratios to ``defaults``.

    ``defaults`` maps 'cpu', 'ram' and 'disk' to ratios. Old code stored
    0.0 to mean "use the configured value"; this writes that value.
    Returns (found, done) counted in rows.
    """
    ids = utils.execute(
        context,
        sa.select(_TABLE.c.id).where(*_empty_ratios())
        .order_by(_TABLE.c.id).limit(max_count)).scalars().all()
    if not ids:
        return 0, 0
    for column in RATIO_COLUMNS:
        resource = column.split('_', 1)[0]
        utils.execute(
            context,
            sa.update(_TABLE)
            .where(_TABLE.c.id.in_(ids), _empty(_TABLE.c[column]))
            .values({column: defaults[resource]}))
    return len(ids), len(ids)


# Classes a node with a NUMA topology keeps on its cells' providers.
_CELL_CLASSES = (orc.VCPU, orc.MEMORY_MB)


def _lacks_inventory(rc_name, rc_id, total_column):
    """A node whose legacy total is >= 1 but whose provider has none.

    A node with a NUMA topology never lacks VCPU or MEMORY_MB on its
    own provider: its cells' child providers hold them.
    """
    lacks = sa.and_(total_column >= 1, ~sa.exists().where(
        _INV.c.resource_provider_id == _RP.c.id,
        _INV.c.resource_class_id == rc_id))
    if rc_name in _CELL_CLASSES:
        lacks = sa.and_(lacks, _TABLE.c.numa_topology.is_(None))
    return lacks


_NODE_AND_PROVIDER = _TABLE.outerjoin(_RP, _RP.c.uuid == _TABLE.c.uuid)


def _lacking_inventories(context):
    """Per class of RESOURCES: a node's provider lacks its inventory."""
    classes = rc_db.ids_by_names(context, [r[0] for r in RESOURCES])
    return [_lacks_inventory(rc_name, classes[rc_name], _TABLE.c[total])
            for rc_name, total, _ratio in RESOURCES]


def _needs_inventories(lacking):
    """The nodes migrate_inventories fixes (over _NODE_AND_PROVIDER)."""
    return (_TABLE.c.deleted == 0, _TABLE.c.uuid.is_not(None),
            sa.or_(_RP.c.id.is_(None), *lacking))


@facade.reader
def count_lacking_inventories(context):
    """How many nodes :func:`migrate_inventories` has left to fix.

    Nodes still without a uuid are not among them until
    :func:`backfill_uuids` has given them one.
    """
    return utils.count(context, _NODE_AND_PROVIDER,
                       *_needs_inventories(_lacking_inventories(context)))


@facade.writer
def migrate_inventories(context, max_count, ratio_defaults):
    """Online migration: give live nodes a provider and inventories.

    For up to ``max_count`` live nodes (with a uuid: the uuid backfill
    runs first) that have no provider, or whose provider lacks inventory
    of a class their legacy total says they have, create the provider
    and the missing inventories from the legacy columns. Inventory the
    provider already has is left alone: the provider wins on reads, and
    this must not overwrite it with the (possibly older) legacy value.
    A class whose legacy total is 0 needs none, so such a node is not
    found again; nor do VCPU and MEMORY_MB of a node with a NUMA
    topology, whose cells' child providers hold them.
    ``ratio_defaults`` ({'cpu', 'ram', 'disk'}) stand in for NULL or 0.0
    legacy ratios, as on reads.

    Returns (found, done) counted in nodes; re-runnable.
    """
    lacking = _lacking_inventories(context)
    rows = utils.fetch_all(context, sa.select(
        _TABLE.c.id, _TABLE.c.uuid, _TABLE.c.hypervisor_hostname,
        _TABLE.c.numa_topology.is_not(None).label('has_cells'),
        *(_TABLE.c[total] for _rc, total, _ratio in RESOURCES),
        *(_TABLE.c[ratio] for _rc, _total, ratio in RESOURCES),
        _RP.c.id.label('provider_id'),
        *(sa.case((lack, 1), else_=0).label('lacks_' + rc_name)
          for (rc_name, _t, _r), lack in zip(RESOURCES, lacking)))
        .select_from(_NODE_AND_PROVIDER)
        .where(*_needs_inventories(lacking))
        .order_by(_TABLE.c.id).limit(max_count))
    for row in rows:
        inventories = {}
        for rc_name, total, ratio in RESOURCES:
            if row['has_cells'] and rc_name in _CELL_CLASSES:
                continue
            if row['provider_id'] is None or row['lacks_' + rc_name]:
                resource = ratio.split('_', 1)[0]
                inventories[rc_name] = {
                    'total': row[total],
                    'allocation_ratio': row[ratio] or
                    ratio_defaults[resource]}
        # Creates the provider too when it is missing.
        _write_inventories(context, row, inventories)
    return len(rows), len(rows)
