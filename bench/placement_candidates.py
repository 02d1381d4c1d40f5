"""The same candidate search as allocation_candidates.py, on placement.

Times openstack/placement's own ``AllocationCandidates.get_by_requests``
(the object call behind ``GET /allocation_candidates``, no HTTP) on the
same data and request as ``bench/allocation_candidates.py``: 1,000 flat
providers with VCPU, MEMORY_MB and DISK_GB and one consumer's
allocations each, request ``VCPU:2,MEMORY_MB:4096,DISK_GB:20``, without
a limit and with ``limit=50``. It needs openstack-placement, which
resobj does not depend on; install it in a separate virtualenv:

    python3 -m venv /tmp/venv-placement
    /tmp/venv-placement/bin/pip install openstack-placement==16.0.0
    /tmp/venv-placement/bin/python bench/placement_candidates.py
    /tmp/venv-placement/bin/python bench/placement_candidates.py --url URL
"""

import argparse
import random
import statistics
import tempfile
import time

from oslo_config import cfg
from oslo_utils import uuidutils
from placement import conf as placement_conf
from placement import context as placement_context
from placement.db.sqlalchemy import migration
from placement import db_api
from placement import deploy
from placement import lib as placement_lib
from placement.objects import allocation_candidate as ac_obj
import sqlalchemy as sa

# Placement stores standard classes with their os-resource-classes index.
VCPU, MEMORY_MB, DISK_GB = 0, 1, 2
INVENTORY = ((VCPU, 64, 16.0), (MEMORY_MB, 262144, 1.5),
             (DISK_GB, 4000, 1.0))
REQUEST = {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}


def configure(url):
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf.set_override('connection', url or 'sqlite:///%s/placement.db'
                      % tempfile.mkdtemp(), group='placement_database')
    conf([], default_config_files=[], default_config_dirs=[])
    db_api.configure(conf)
    migration.create_schema(db_api.get_placement_engine())
    deploy.update_database(conf)
    return conf


@db_api.placement_context_manager.writer
def populate(ctx, providers, rnd):
    meta = sa.MetaData()
    meta.reflect(ctx.session.connection())
    t = meta.tables
    for name in ('allocations', 'inventories', 'consumers'):
        ctx.session.execute(sa.delete(t[name]))
    rp = t['resource_providers']
    ctx.session.execute(sa.update(rp).values(root_provider_id=None))
    ctx.session.execute(sa.delete(rp))
    ctx.session.execute(sa.insert(rp), [
        {'uuid': uuidutils.generate_uuid(), 'name': 'bench-%d' % n,
         'generation': 0} for n in range(providers)])
    ctx.session.execute(sa.update(rp).values(root_provider_id=rp.c.id))
    rp_ids = ctx.session.execute(sa.select(rp.c.id)).scalars().all()
    ctx.session.execute(sa.insert(t['inventories']), [
        {'resource_provider_id': rp_id, 'resource_class_id': rc,
         'total': total, 'reserved': 0, 'min_unit': 1, 'max_unit': total,
         'step_size': 1, 'allocation_ratio': ratio}
        for rp_id in rp_ids for rc, total, ratio in INVENTORY])
    ids = []
    for name in ('projects', 'users'):
        found = ctx.session.execute(sa.select(t[name].c.id).where(
            t[name].c.external_id == 'bench')).scalar()
        ids.append(found or ctx.session.execute(sa.insert(t[name]).values(
            external_id='bench')).inserted_primary_key[0])
    consumers = [uuidutils.generate_uuid() for _ in rp_ids]
    ctx.session.execute(sa.insert(t['consumers']), [
        {'uuid': c, 'project_id': ids[0], 'user_id': ids[1],
         'generation': 0} for c in consumers])
    ctx.session.execute(sa.insert(t['allocations']), [
        {'resource_provider_id': rp_id, 'consumer_id': c,
         'resource_class_id': rc, 'used': rnd.randint(1, total // 4)}
        for rp_id, c in zip(rp_ids, consumers)
        for rc, total, _ratio in INVENTORY])


def measure(ctx, limit, repeat):
    def call():
        groups = {'': placement_lib.RequestGroup(
            use_same_provider=False, resources=dict(REQUEST))}
        return ac_obj.AllocationCandidates.get_by_requests(
            ctx, groups, placement_lib.RequestWideParams(limit=limit))

    found = call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return (len(found.allocation_requests), len(found.provider_summaries),
            min(times), statistics.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', help='database URL (default: a temporary '
                        'embedded SQLite file)')
    parser.add_argument('--providers', type=int, default=1000)
    parser.add_argument('--repeat', type=int, default=10)
    args = parser.parse_args()
    conf = configure(args.url)
    ctx = placement_context.RequestContext(config=conf)
    populate(ctx, args.providers, random.Random(42))
    engine = db_api.get_placement_engine()
    if engine.dialect.name == 'postgresql':
        with engine.connect() as conn:
            conn.execution_options(isolation_level='AUTOCOMMIT').execute(
                sa.text('ANALYZE'))
    print('backend:   %s (placement)' % engine.dialect.name)
    print('providers: %d; request: %s' % (args.providers, ','.join(
        '%s:%d' % item for item in sorted(REQUEST.items()))))
    for limit in (None, 50):
        requests, summaries, best, median = measure(ctx, limit, args.repeat)
        print('limit=%-4s %5d requests, %5d summaries: best %7.2f ms, '
              'median %7.2f ms per call' % (
                  limit, requests, summaries, best * 1000, median * 1000))


if __name__ == '__main__':
    main()
