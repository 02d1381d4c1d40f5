"""Online data migrations: batched, resumable rewrites of old rows.

Each migration is a DB API function ``fn(context, max_count)`` that
migrates at most ``max_count`` rows in one transaction and returns
``(found, done)``: how many rows needing work it found (at most
``max_count``) and how many it fixed. Running one again only finds what is
left, so a run can stop at any batch and resume later. Each also has a
reader that counts what it has left, for checks that must change nothing
(:func:`count_left`).
"""

import collections
import functools

from oslo_log import log as logging

from resobj.conf import compute as compute_conf
from resobj.db.api import compute_node
from resobj.db.api import consumer
from resobj.db.api import inventory
from resobj.db.api import migration

LOG = logging.getLogger(__name__)

BATCH_SIZE = 50

Result = collections.namedtuple('Result', 'name found done error')


def registered(conf):
    """[(name, fn)] in the order they run."""
    return [
        ('compute_node_uuids', compute_node.backfill_uuids),
        ('compute_node_allocation_ratios', functools.partial(
            _fill_ratios, compute_conf.allocation_ratio_defaults(conf))),
        ('migration_uuids_and_types', migration.complete_legacy_rows),
        # After compute_node_uuids: a node needs its uuid to get a
        # provider. Not gated on service versions: see
        # doc/source/user/objects/compute_node.rst.
        ('compute_node_inventories', functools.partial(
            _migrate_inventories,
            compute_conf.allocation_ratio_defaults(conf))),
        ('inventory_usage', inventory.fix_usage),
        ('allocation_owners', consumer.fix_owners),
    ]


# The reader counting what each registered migration has left; the
# same rows it would find, so a count of 0 means a run finds nothing.
_COUNTERS = {
    'compute_node_uuids': compute_node.count_lacking_uuids,
    'compute_node_allocation_ratios': compute_node.count_empty_ratios,
    'migration_uuids_and_types': migration.count_legacy_rows,
    'compute_node_inventories': compute_node.count_lacking_inventories,
    'inventory_usage': inventory.count_wrong_usage,
    'allocation_owners': consumer.count_wrong_owners,
}


def count_left(context, conf):
    """[(name, rows left)] per registered migration, in their order.

    Reads only. A migration that depends on an earlier one
    (compute_node_inventories on compute_node_uuids) may find more once
    the earlier one has run.
    """
    return [(name, _COUNTERS[name](context))
            for name, _fn in registered(conf)]


def _fill_ratios(defaults, context, max_count):
    return compute_node.fill_empty_ratios(context, max_count, defaults)


def _migrate_inventories(defaults, context, max_count):
    return compute_node.migrate_inventories(context, max_count, defaults)


def run(context, migrations, max_count=None, batch_size=None,
        progress=None):
    """Run ``migrations`` until done or ``max_count`` rows are migrated.

    Each round runs one batch of every migration. Returns (results,
    remaining): a Result per migration, and whether work may remain (a
    batch came back full, or found rows it could not migrate). A
    migration that raises is logged, reported in its Result and not run
    again; the others continue.

    ``batch_size`` defaults to :data:`BATCH_SIZE`. ``progress(round,
    results)``, when given, is called after each round with the totals so
    far, on runs of more than one round only: a short run has nothing to
    report before its end.
    """
    batch_size = batch_size or BATCH_SIZE
    totals = {name: [0, 0, None] for name, _ in migrations}
    more = {name: False for name, _ in migrations}
    budget = max_count
    rounds = 0
    while budget is None or budget > 0:
        progressed = False
        for name, fn in migrations:
            if totals[name][2] is not None:
                continue
            count = batch_size if budget is None else min(batch_size,
                                                          budget)
            if count <= 0:
                break
            try:
                found, done = fn(context, count)
            except Exception as exc:
                LOG.exception('Online data migration %s failed', name)
                totals[name][2] = '%s: %s' % (type(exc).__name__, exc)
                continue
            totals[name][0] += found
            totals[name][1] += done
            # A full batch may have left rows behind; rows found but not
            # fixed are left behind for sure.
            more[name] = found >= count or found > done
            progressed = progressed or done > 0
            if budget is not None:
                budget -= done
        rounds += 1
        # Another round only when some batch may have left rows behind:
        # each migration runs after those it depends on, so one that
        # came back short has nothing more to find.
        going_on = progressed and (budget is None or budget > 0) and any(
            more[name] for name, _ in migrations if totals[name][2] is None)
        if progress is not None and (going_on or rounds > 1):
            progress(rounds, [Result(name, *totals[name])
                              for name, _ in migrations])
        if not going_on:
            break
    results = [Result(name, *totals[name]) for name, _ in migrations]
    remaining = any(more[name] for name, _ in migrations
                    if totals[name][2] is None)
    return results, remaining
