"""Time per AllocationCandidates.get_by_requests call over 1,000 providers.

The request is ``VCPU:2,MEMORY_MB:4096,DISK_GB:20`` against flat compute
nodes that each have VCPU, MEMORY_MB and DISK_GB inventory and some
allocations, once without a limit (every provider is a candidate) and
once with ``limit=50``. Prints the best and the median time per call
and the SQL statements one call runs.

    python bench/allocation_candidates.py          # embedded SQLite file
    python bench/allocation_candidates.py --url URL    # e.g. PostgreSQL
    python bench/allocation_candidates.py --sharing 5  # and sharing disks

``--sharing N`` puts the compute providers in aggregates of ten (provider
``i`` in aggregate ``i // 10``) and adds N sharing providers of DISK_GB
(trait MISC_SHARES_VIA_AGGREGATE), sharing provider ``j`` in every
aggregate ``k`` with ``k % 10 == j``: the layout of
``/work/shared/bench/placement_bench.py``.

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
from resobj.db.models import trait as trait_models
from resobj.objects import allocation_candidate as ac_obj

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2
INVENTORY = ((VCPU, 64, 16.0), (MEMORY_MB, 262144, 1.5),
             (DISK_GB, 4000, 1.0))
REQUEST = {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}
SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'
SHARED_DISK = (DISK_GB, 100000, 1.0)
# Compute providers per aggregate, and the number of sharing providers
# the aggregates can take (sharing provider j joins aggregates k % 10 == j).
AGGREGATE_SIZE = 10


@facade.writer
def populate(ctx, providers, sharing, rnd):
    """Flat providers with inventory and one consumer's allocations each.

    With ``sharing``, the providers are in aggregates and that many
    sharing DISK_GB providers join them (see the module's docstring).
    """
    rp = rp_models.ResourceProvider.__table__
    consumer = consumer_models.Consumer.__table__
    for table in (alloc_models.Allocation.__table__,
                  inv_models.Inventory.__table__, consumer,
                  rp_models.ResourceProviderTrait.__table__,
                  rp_models.ResourceProviderAggregate.__table__,
                  rp_models.PlacementAggregate.__table__):
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
    if sharing:
        _share(ctx, sorted(rp_ids), sharing)


def _share(ctx, rp_ids, sharing):
    """Aggregates of the providers ``rp_ids`` and ``sharing`` disks."""
    rp = rp_models.ResourceProvider.__table__
    agg = rp_models.PlacementAggregate.__table__
    rp_agg = rp_models.ResourceProviderAggregate.__table__
    count = -(-len(rp_ids) // AGGREGATE_SIZE)
    ctx.session.execute(sa.insert(agg), [
        {'uuid': uuidutils.generate_uuid()} for _ in range(count)])
    agg_ids = sorted(ctx.session.execute(sa.select(agg.c.id)).scalars())
    ctx.session.execute(sa.insert(rp_agg), [
        {'resource_provider_id': rp_id,
         'aggregate_id': agg_ids[n // AGGREGATE_SIZE]}
        for n, rp_id in enumerate(rp_ids)])
    trait_id = ctx.session.execute(sa.select(
        trait_models.Trait.__table__.c.id).where(
            trait_models.Trait.__table__.c.name == SHARING_TRAIT)).scalar()
    rc, total, ratio = SHARED_DISK
    for j in range(sharing):
        sharer = ctx.session.execute(sa.insert(rp).values(
            uuid=uuidutils.generate_uuid(),
            name='bench-share-%d' % j)).inserted_primary_key[0]
        ctx.session.execute(sa.update(rp).where(rp.c.id == sharer).values(
            root_provider_id=sharer))
        ctx.session.execute(sa.insert(inv_models.Inventory.__table__).values(
            resource_provider_id=sharer, resource_class_id=rc, total=total,
            reserved=0, min_unit=1, max_unit=total, step_size=1,
            allocation_ratio=ratio))
        ctx.session.execute(sa.insert(rp_models.ResourceProviderTrait
                                      .__table__).values(
            resource_provider_id=sharer, trait_id=trait_id))
        ctx.session.execute(sa.insert(rp_agg), [
            {'resource_provider_id': sharer, 'aggregate_id': agg_id}
            for k, agg_id in enumerate(agg_ids)
            if k % AGGREGATE_SIZE == j])


def _external(ctx, table):
    found = ctx.session.execute(sa.select(table.c.id).where(
        table.c.external_id == 'bench')).scalar()
    return found or ctx.session.execute(sa.insert(table).values(
        external_id='bench')).inserted_primary_key[0]


def measure(ctx, limit, repeat):
    group = ac_obj.group(resources=REQUEST)
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
    parser.add_argument('--sharing', type=int, default=0,
                        help='sharing DISK_GB providers (at most %d), '
                        'on aggregates k %%%% %d < N'
                        % (AGGREGATE_SIZE, AGGREGATE_SIZE))
    args = parser.parse_args()
    if not 0 <= args.sharing <= AGGREGATE_SIZE:
        parser.error('--sharing: 0 to %d' % AGGREGATE_SIZE)
    benchdb.configure(args.url)
    ctx = context.get_admin_context()
    rc_db.ensure_sync(ctx)
    trait_db.ensure_sync(ctx)
    populate(ctx, args.providers, args.sharing, random.Random(42))
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
    print('providers: %d, sharing: %d; request: %s' % (
        args.providers, args.sharing, ','.join(
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
