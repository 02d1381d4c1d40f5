"""Allocation claims per second against 1,000 providers.

Runs ``replace_for_consumers`` (the full write path: usage snapshot,
capacity and unit checks, insert, generation compare-and-swap) once per
claim, and next to it the physical limit on the same database: one write
transaction per claim that only inserts the same allocation rows. Prints
both rates and their ratio.

    python bench/claims.py                       # embedded SQLite file
    python bench/claims.py --url postgresql+psycopg2://user:pw@host/db

The database at --url must be empty (or a previous run's): the script
creates the schema, providers and consumers itself.
"""

import argparse
import random
import time

import benchdb

from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj import context
from resobj.db.api import allocation as alloc_db
from resobj.db.api import resource_class as rc_db
from resobj.db import facade
from resobj.db.models import allocation as alloc_models
from resobj.db.models import consumer as consumer_models
from resobj.db.models import inventory as inv_models
from resobj.db.models import resource_provider as rp_models

VCPU, MEMORY_MB, DISK_GB = 0, 1, 2
CLAIM = ((VCPU, 2), (MEMORY_MB, 2048), (DISK_GB, 20))


@facade.writer
def populate(ctx, providers, consumers):
    """Providers with ample inventory, and consumers, in bulk."""
    rp = rp_models.ResourceProvider.__table__
    ctx.session.execute(sa.delete(alloc_models.Allocation.__table__))
    ctx.session.execute(sa.delete(inv_models.Inventory.__table__))
    ctx.session.execute(sa.delete(consumer_models.Consumer.__table__))
    ctx.session.execute(sa.update(rp).values(root_provider_id=None))
    ctx.session.execute(sa.delete(rp))
    ctx.session.execute(sa.insert(rp), [
        {'uuid': uuidutils.generate_uuid(), 'name': 'bench-%d' % n}
        for n in range(providers)])
    rp_ids = ctx.session.execute(sa.select(rp.c.id)).scalars().all()
    ctx.session.execute(sa.insert(inv_models.Inventory.__table__), [
        {'resource_provider_id': rp_id, 'resource_class_id': rc,
         'total': total, 'reserved': 0, 'min_unit': 1, 'max_unit': total,
         'step_size': 1, 'allocation_ratio': 16.0}
        for rp_id in rp_ids
        for rc, total in ((VCPU, 64), (MEMORY_MB, 262144),
                          (DISK_GB, 4000))])
    project = _get_or_insert(ctx, consumer_models.Project.__table__)
    user = _get_or_insert(ctx, consumer_models.User.__table__)
    table = consumer_models.Consumer.__table__
    ctx.session.execute(sa.insert(table), [
        {'uuid': uuidutils.generate_uuid(), 'project_id': project,
         'user_id': user} for _ in range(consumers)])
    return rp_ids, ctx.session.execute(sa.select(table.c.id)).scalars().all()


def analyze():
    """Refresh the planner's statistics after the bulk changes.

    populate() replaces every row and the raw run adds thousands of
    allocations; until autovacuum notices, PostgreSQL plans the claims'
    queries with a previous run's statistics (sequential scans over dead
    rows, or over a table it believes empty). A service's tables change
    gradually and autovacuum keeps up, so fresh statistics are the fair
    measure.
    """
    engine = facade.get_engine()
    if engine.dialect.name == 'postgresql':
        with engine.connect() as conn:
            conn.execution_options(isolation_level='AUTOCOMMIT')
            conn.exec_driver_sql('ANALYZE')


def _get_or_insert(ctx, table):
    found = ctx.session.execute(sa.select(table.c.id).where(
        table.c.external_id == 'bench')).scalar()
    return found or ctx.session.execute(sa.insert(table).values(
        external_id='bench')).inserted_primary_key[0]


@facade.writer
def raw_claim(ctx, rows):
    ctx.session.execute(sa.insert(alloc_models.Allocation.__table__), [
        {'resource_provider_id': rp, 'consumer_id': c,
         'resource_class_id': rc, 'used': used} for rp, c, rc, used in rows])


def timed(claim, claims):
    """Seconds to run ``claim`` over ``claims``."""
    start = time.perf_counter()
    for rows in claims:
        claim(rows)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', help='database URL (default: a temporary '
                        'embedded SQLite file)')
    parser.add_argument('--providers', type=int, default=1000)
    parser.add_argument('--claims', type=int, default=2000)
    parser.add_argument('--rounds', type=int, default=10,
                        help='alternate the two paths this many times')
    args = parser.parse_args()
    benchdb.configure(args.url)
    ctx = context.get_admin_context()
    rc_db.ensure_sync(ctx)
    rnd = random.Random(42)

    def workload(consumers):
        return [[(rp, c, rc, amount) for rc, amount in CLAIM]
                for c, rp in zip(consumers, (rnd.choice(rp_ids)
                                             for _ in consumers))]

    rp_ids, consumers = populate(ctx, args.providers, 2 * args.claims)
    # Same shape of work for both: one claim = three rows, one commit.
    raw_work = workload(consumers[:args.claims])
    full_work = workload(consumers[args.claims:])
    # The two paths take turns in rounds, so that a change in the
    # machine's load (other processes, a checkpoint) hits both alike and
    # the ratio stays meaningful on a busy machine.
    raw = full = 0.0
    step = -(-args.claims // args.rounds)
    for start in range(0, args.claims, step):
        raw += timed(lambda rows: raw_claim(ctx, rows),
                     raw_work[start:start + step])
        analyze()
        full += timed(lambda rows: alloc_db.replace_for_consumers(
            ctx, [rows[0][1]], rows), full_work[start:start + step])
    raw, full = args.claims / raw, args.claims / full
    backend = facade.get_engine().dialect.name
    print('backend:                  %s' % backend)
    print('providers, claims:        %d, %d' % (args.providers, args.claims))
    print('raw insert transactions:  %8.0f claims/s' % raw)
    print('replace_for_consumers:    %8.0f claims/s' % full)
    print('ratio:                    %8.0f %%' % (100.0 * full / raw))


if __name__ == '__main__':
    main()
