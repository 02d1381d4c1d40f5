"""Time per AllocationCandidates.get_by_requests call over 1,000 providers.

The request is ``VCPU:2,MEMORY_MB:4096,DISK_GB:20`` against flat compute
nodes that each have VCPU, MEMORY_MB and DISK_GB inventory and some
allocations, once without a limit (every provider is a candidate) and
once with ``limit=50``. Prints the best and the median time per call
and the SQL statements one call runs.

    python bench/allocation_candidates.py          # embedded SQLite file
    python bench/allocation_candidates.py --url URL    # e.g. PostgreSQL

The database at --url must be empty (or a previous run's): the script
creates the schema, providers and allocations itself.
"""

import argparse
import random
import statistics
import time

import benchdb

from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj import context
from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import consumer as consumer_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models
from resobj.objects import allocation_candidate as ac_obj

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2
INVENTORY = ((VCPU, 64, 16.0), (MEMORY_MB, 262144, 1.5),
             (DISK_GB, 4000, 1.0))
REQUEST = {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}


@facade.writer
def populate(ctx, providers, rnd):
    """Flat providers with inventory and one consumer's allocations each."""
    rp = rp_models.ResourceProvider.__table__
    consumer = consumer_models.Consumer.__table__
    for table in (alloc_models.Allocation.__table__,
                  inv_models.Inventory.__table__, consumer,
                  rp_models.ResourceProviderTrait.__table__,
                  rp_models.ResourceProviderAggregate.__table__):
        ctx.session.execute(sa.delete(table))
    ctx.session.execute(sa.update(rp).values(root_provider_id=None))
    ctx.session.execute(sa.delete(rp))
    ctx.session.execute(sa.insert(rp), [
        {'uuid': uuidutils.generate_uuid(), 'name': 'bench-%d' % n}
        for n in range(providers)])
    ctx.session.execute(sa.update(rp).values(root_provider_id=rp.c.id))
    rp_ids = ctx.session.execute(sa.select(rp.c.id)).scalars().all()
    ctx.session.execute(sa.insert(inv_models.Inventory.__table__), [
        {'resource_provider_id': rp_id, 'resource_class_id': rc,
         'total': total, 'reserved': 0, 'min_unit': 1, 'max_unit': total,
         'step_size': 1, 'allocation_ratio': ratio}
        for rp_id in rp_ids for rc, total, ratio in INVENTORY])
    project = _external(ctx, consumer_models.Project.__table__)
    user = _external(ctx, consumer_models.User.__table__)
    ctx.session.execute(sa.insert(consumer), [
        {'uuid': uuidutils.generate_uuid(), 'project_id': project,
         'user_id': user} for _ in rp_ids])
    consumers = ctx.session.execute(sa.select(consumer.c.id)).scalars()
    # Some usage on every provider, so the usage sums have rows to add.
    ctx.session.execute(sa.insert(alloc_models.Allocation.__table__), [
        {'resource_provider_id': rp_id, 'consumer_id': c,
         'resource_class_id': rc, 'used': rnd.randint(1, total // 4)}
        for rp_id, c in zip(rp_ids, consumers)
        for rc, total, _ratio in INVENTORY])


def _external(ctx, table):
    found = ctx.session.execute(sa.select(table.c.id).where(
        table.c.external_id == 'bench')).scalar()
    return found or ctx.session.execute(sa.insert(table).values(
        external_id='bench')).inserted_primary_key[0]


def measure(ctx, limit, repeat):
    group = ac_obj.RequestGroup(resources=REQUEST)
    statements = []

    def record(*args):
        statements.append(args[2])

    engine = facade.get_engine()
    sa.event.listen(engine, 'before_cursor_execute', record)
    found = ac_obj.AllocationCandidates.get_by_requests(ctx, [group],
                                                        limit=limit)
    sa.event.remove(engine, 'before_cursor_execute', record)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        ac_obj.AllocationCandidates.get_by_requests(ctx, [group],
                                                    limit=limit)
        times.append(time.perf_counter() - start)
    return (len(found.allocation_requests), len(found.provider_summaries),
            len(statements), min(times), statistics.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', help='database URL (default: a temporary '
                        'embedded SQLite file)')
    parser.add_argument('--providers', type=int, default=1000)
    parser.add_argument('--repeat', type=int, default=30)
    args = parser.parse_args()
    benchdb.configure(args.url)
    ctx = context.get_admin_context()
    rc_db.ensure_sync(ctx)
    trait_db.ensure_sync(ctx)
    populate(ctx, args.providers, random.Random(42))
    if facade.get_engine().dialect.name == 'postgresql':
        # What autovacuum does soon after a bulk load in any deployment:
        # without statistics the planner takes the fresh tables for
        # empty and nests loops over the usage sums.
        # In a transaction block, committed: the facade's 'begin' hook
        # (facade.read_without_transaction_block) takes a connection
        # outside a reader out of autocommit mode, so an ANALYZE run in
        # AUTOCOMMIT was rolled back with the block, unseen.
        with facade.get_engine().connect() as conn:
            conn.execute(sa.text('ANALYZE'))
            conn.commit()
    print('backend:   %s' % facade.get_engine().dialect.name)
    print('providers: %d; request: %s' % (args.providers, ','.join(
        '%s:%d' % item for item in sorted(REQUEST.items()))))
    for limit in (None, 50):
        requests, summaries, statements, best, median = measure(
            ctx, limit, args.repeat)
        print('limit=%-4s %5d requests, %5d summaries, %2d statements: '
              'best %7.2f ms, median %7.2f ms per call' % (
                  limit, requests, summaries, statements, best * 1000,
                  median * 1000))


if __name__ == '__main__':
    main()
