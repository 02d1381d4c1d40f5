"""Online data migrations: batched, resumable rewrites of old rows.

Each migration is a DB API function ``fn(context, max_count)`` that
migrates at most ``max_count`` rows in one transaction and returns
``(found, done)``: how many rows needing work it found (at most
``max_count``) and how many it fixed. Running one again only finds what is
left, so a run can stop at any batch and resume later.
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


def _fill_ratios(defaults, context, max_count):
    return compute_node.fill_empty_ratios(context, max_count, defaults)


def _migrate_inventories(defaults, context, max_count):
    return compute_node.migrate_inventories(context, max_count, defaults)


def run(context, migrations, max_count=None, batch_size=BATCH_SIZE):
    """Run ``migrations`` until done or ``max_count`` rows are migrated.

    Returns (results, remaining): a Result per migration, and whether
    work may remain (a batch came back full, or found rows it could not
    migrate). A migration that raises is logged, reported in its Result
    and not run again; the others continue.
    """
    totals = {name: [0, 0, None] for name, _ in migrations}
    more = {name: False for name, _ in migrations}
    budget = max_count
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
        if not progressed:
            break
    results = [Result(name, *totals[name]) for name, _ in migrations]
    remaining = any(more[name] for name, _ in migrations
                    if totals[name][2] is None)
    return results, remaining
