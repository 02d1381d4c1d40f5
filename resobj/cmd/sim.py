"""resobj-sim: fake compute nodes with resource trackers, under load.

Starts ``--nodes`` fake compute nodes, each with a ResourceTracker and a
thread playing its compute service, and runs ``--ops`` random
operations (boot, delete, resize, cold and live migration, confirm and
revert) with shared-storage nodes, boot-from-volume instances and PCI
devices among them. It ends with every move confirmed, one audit per
node, a capacity and usage table, and a per-node check that placement's
usage equals the trackers' own accounting; it exits 1 on any mismatch or
unexpected error.

Placement is reached:

* with ``--url``: over HTTP at that placement-compatible service; the
  objects (instances, migrations, nodes) use ``--database`` (the same
  database the service uses);
* by default: resobj-api is started on a temporary SQLite database and
  reached over HTTP, the objects using the same file;
* with ``--in-process``: no HTTP at all, the in-process client.
"""

import argparse
import collections
import logging as std_logging
import os
import socket
import subprocess
import sys
import tempfile
import time

from oslo_config import cfg
from oslo_utils import uuidutils
import requests

from resobj.cmd import sim_workload
from resobj.compute import fake_driver
from resobj.compute import manager as compute_manager
from resobj.compute import report
from resobj.compute import report_http
from resobj.compute import report_local
from resobj.compute import tracker as rt
from resobj import conf as resobj_conf
from resobj import context as resobj_context
from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj.db import facade
from resobj.db import migration as db_migration
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj import version

PROG = 'resobj-sim'

FLAVORS = (
    # name, vcpus, memory_mb, root_gb, ephemeral_gb, swap (MB)
    ('tiny', 1, 512, 1, 0, 0),
    ('small', 1, 2048, 20, 0, 512),
    ('medium', 2, 4096, 40, 5, 1024),
    ('large', 4, 8192, 80, 10, 1536),
)


def _parser():
    parser = argparse.ArgumentParser(
        prog=PROG, description='Run fake compute nodes with resource '
        'trackers under random load and check that placement agrees with '
        'their accounting.', epilog='Exits 1 when placement and a tracker '
        'disagree, or on an unexpected error.')
    parser.add_argument('--nodes', type=int, default=5,
                        help='fake compute nodes to run (default: 5)')
    parser.add_argument('--ops', type=int, default=500,
                        help='random operations to run: boots, deletes, '
                             'resizes, migrations (default: 500)')
    parser.add_argument('--seed', type=int, default=1,
                        help='seed of the random operations; the same seed '
                             'runs the same operations (default: 1)')
    parser.add_argument('--url',
                        help='a running placement-compatible service to '
                             'report to over HTTP (default: start '
                             'resobj-api on a temporary SQLite database)')
    parser.add_argument('--database',
                        help='the database URL of the objects (instances, '
                             'migrations, nodes); required with --url, '
                             'the database that service uses (default: the '
                             'temporary SQLite database)')
    parser.add_argument('--in-process', action='store_true',
                        help='no HTTP: report through the objects in this '
                             'process (default: over HTTP)')
    parser.add_argument('--shared-every', type=int, default=3,
                        help='every Nth node draws its disk from a shared '
                             'Ceph-like pool; 0 for none (default: 3)')
    parser.add_argument('--audit-every', type=int, default=25,
                        help='operations between two audits of a node '
                             '(default: 25)')
    parser.add_argument('--api-workers', type=int, default=2,
                        help='worker processes of the resobj-api it starts '
                             '(default: 2)')
    parser.add_argument('--verbose', action='store_true',
                        help='log each operation (default: warnings and '
                             'errors only)')
    parser.add_argument('--version', action='version',
                        version=version.version_option())
    return parser


def _free_port():
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def _start_api(tmpdir, database, workers):
    port = _free_port()
    config = os.path.join(tmpdir, 'resobj-api.conf')
    with open(config, 'w') as f:
        f.write('[database]\nconnection = %s\n[api]\nauth_strategy = '
                'noauth2\naccess_log =\n' % database)
    log = open(os.path.join(tmpdir, 'resobj-api.log'), 'w')
    proc = subprocess.Popen(
        [sys.executable, '-m', 'resobj.cmd.api', '--config-file', config,
         '--host', '127.0.0.1', '--port', str(port), '--workers',
         str(workers)], stdout=log, stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d' % port
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError('resobj-api exited (%s); see %s'
                               % (proc.returncode, log.name))
        try:
            requests.get(url + '/', timeout=1)
            return proc, url
        except requests.RequestException:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError('resobj-api did not answer on %s' % url)


def _configure(database):
    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    conf([], project='resobj', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('connection', database, group='database')
    # 1500 MB of reserved disk is 2 GB of reserved DISK_GB (rounded up).
    conf.set_override('reserved_host_disk_mb', 1500, group='compute')
    facade.configure(conf)
    db_migration.db_sync()
    ctx = resobj_context.get_admin_context()
    rc_db.ensure_sync(ctx)
    trait_db.ensure_sync(ctx)
    objects.register_all()
    objects.configure(conf)
    return conf, ctx


Pool = collections.namedtuple('Pool', 'uuid name')


def _setup_cloud(conf, ctx, client, nodes, shared_every):
    """Services, a shared pool, flavors and one tracker per node."""
    flavors = []
    for name, vcpus, mem, root, eph, swap in FLAVORS:
        flavor = objects.Flavor(ctx, flavorid=name, name=name, vcpus=vcpus,
                                memory_mb=mem, root_gb=root,
                                ephemeral_gb=eph, swap=swap)
        flavor.create()
        flavors.append(flavor)
    pool = aggregate = None
    if shared_every and nodes >= shared_every:
        # Every provider-side thing goes through the reporting client:
        # with --url, placement lives in another service and database
        # than the objects.
        pool = Pool(uuidutils.generate_uuid(), 'sim-ceph-pool')
        client.ensure_provider(pool.uuid, pool.name)
        size = 2000 * (nodes // shared_every)
        client.set_inventory(pool.uuid, {'DISK_GB': {
            'total': size, 'reserved': 0, 'min_unit': 1, 'max_unit': size,
            'step_size': 1, 'allocation_ratio': 1.0}})
        client.set_traits(pool.uuid, [report.SHARING_TRAIT])
        aggregate = uuidutils.generate_uuid()
        client.set_aggregates(pool.uuid, [aggregate])
    trackers = {}
    for i in range(nodes):
        host = 'sim-host-%02d' % i
        objects.Service(ctx, host=host, binary=cn_obj.COMPUTE_BINARY).create()
        shared = pool is not None and i % shared_every == shared_every - 1
        uuid = uuidutils.generate_uuid()
        if shared:
            # In the pool's aggregate before the tracker first looks for
            # its sharing provider.
            client.ensure_provider(uuid, host)
            client.set_aggregates(uuid, [aggregate])
        pci = [{'address': '0000:81:00.%d' % d, 'vendor_id': '8086',
                'product_id': '1520'} for d in range(2)] if i % 2 else []
        driver = fake_driver.FakeDriver(
            host, vcpus=32, memory_mb=65536,
            local_gb=100 if shared else 1000, shared_storage=shared,
            pci_devices=pci, uuid=uuid)
        tracker = rt.ResourceTracker.from_conf(conf, host, host, driver,
                                               client)
        tracker.update_available_resource(ctx)
        trackers[(host, host)] = tracker
    return flavors, pool, trackers


def _progress(done, total, elapsed):
    width = 40
    filled = int(width * done / max(total, 1))
    rate = done / elapsed if elapsed > 0 else 0.0
    sys.stderr.write('\r[%s%s] %d/%d ops  %.1f ops/s' % (
        '#' * filled, '.' * (width - filled), done, total, rate))
    sys.stderr.flush()


def _settle(ctx, manager, registry):
    """Confirm every pending move, then audit every node once."""
    for move in registry.all_moves():
        sim_workload.finish(ctx, manager, move, True)
    audits = []
    for tracker in manager.trackers.values():
        audits.append(tracker.update_available_resource(ctx))
    return audits


def _check(client, trackers, pool):
    """Rows of (provider, class, placement, trackers, capacity, ok)."""
    expected = {}
    for tracker in trackers.values():
        for provider, amounts in tracker.accounting().items():
            totals = expected.setdefault(provider, {})
            for rc, amount in amounts.items():
                totals[rc] = totals.get(rc, 0) + amount
    names = {t.provider: t.nodename for t in trackers.values()}
    providers = sorted(names, key=names.get)
    if pool is not None:
        names[pool.uuid] = pool.name
        providers.append(pool.uuid)
    rows = []
    for provider in providers:
        used = client.get_usages(provider)
        _gen, inventory = client.get_inventory(provider)
        for rc in sorted(set(used) | set(expected.get(provider, {}))):
            inv = inventory.get(rc)
            capacity = int((inv['total'] - inv['reserved']) *
                           inv['allocation_ratio']) if inv else 0
            mine = expected.get(provider, {}).get(rc, 0)
            rows.append((names[provider], rc, used.get(rc, 0), mine,
                         capacity, used.get(rc, 0) == mine))
    return rows


def _table(rows):
    header = ('Provider', 'Class', 'Placement', 'Trackers', 'Capacity',
              'Check')
    text = [header] + [(r[0], r[1], str(r[2]), str(r[3]), str(r[4]),
                        'ok' if r[5] else 'MISMATCH') for r in rows]
    widths = [max(len(row[i]) for row in text) for i in range(len(header))]
    return '\n'.join('  '.join(cell.ljust(w) for cell, w in zip(row, widths))
                     for row in text)


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.url and not args.database:
        print('%s: error: --url needs --database (the objects\' database)'
              % PROG, file=sys.stderr)
        return 2
    # Warnings (e.g. an allocation corrected by an audit) are worth
    # seeing; per-operation INFO is not, unless asked.
    std_logging.basicConfig(
        level=std_logging.INFO if args.verbose else std_logging.ERROR,
        format='%(levelname)s %(name)s: %(message)s')
    tmpdir = tempfile.TemporaryDirectory(prefix='resobj-sim-')
    database = args.database or 'sqlite:///%s' % os.path.join(
        tmpdir.name, 'resobj.sqlite')
    api = None
    try:
        conf, ctx = _configure(database)
        if args.in_process:
            client, mode = report_local.LocalReportClient(ctx), 'in-process'
        else:
            url = args.url
            if url is None:
                api, url = _start_api(tmpdir.name, database,
                                      args.api_workers)
            client, mode = report_http.HTTPReportClient(url), 'HTTP %s' % url
        print('%s: %d nodes, %d operations, placement via %s, database %s'
              % (PROG, args.nodes, args.ops, mode, database),
              file=sys.stderr)
        flavors, pool, trackers = _setup_cloud(conf, ctx, client, args.nodes,
                                               args.shared_every)
        manager = compute_manager.ComputeManager(trackers)
        stats, registry, elapsed = sim_workload.run(
            ctx, manager, flavors, args.ops, args.seed, _progress,
            args.audit_every)
        sys.stderr.write('\n')
        final_audits = _settle(ctx, manager, registry)
        rows = _check(client, trackers, pool)
    finally:
        if api is not None:
            api.terminate()
            api.wait(timeout=30)
        tmpdir.cleanup()
    return _summary(args, stats, elapsed, final_audits, rows)


def _totals(rows):
    """{class: (capacity, used)} over the rows, as placement reported.

    Each provider appears once in the rows, so a shared pool counts
    once however many nodes draw from it.
    """
    totals = {}
    for _name, rc, used, _mine, capacity, _ok in rows:
        cap, total_used = totals.get(rc, (0, 0))
        totals[rc] = (cap + capacity, total_used + used)
    return totals


def _summary(args, stats, elapsed, final_audits, rows):
    print(_table(rows))
    print()
    print('Cloud totals (from placement, a shared pool counted once):')
    for rc, (capacity, used) in sorted(_totals(rows).items()):
        print('  %-10s capacity %8d  used %8d  free %8d' % (
            rc, capacity, used, capacity - used))
    audits = stats.audits + final_audits
    kinds = sorted({k for k, _o in stats.by_kind})
    print()
    print('operations: %d in %.1f s = %.1f ops/s (%d refused: full or '
          'lost a race)' % (stats.done, elapsed, stats.done / elapsed
                            if elapsed else 0.0, stats.refused))
    for kind in kinds:
        print('  %-13s %s' % (kind, ', '.join(
            '%s %d' % (outcome, n) for (k, outcome), n in
            sorted(stats.by_kind.items()) if k == kind)))
    if stats.refusals:
        print('  refusals: %s' % ', '.join(
            '%s %d' % item for item in sorted(stats.refusals.items())))
    if audits:
        audits.sort()
        print('audit time per node: mean %.1f ms, median %.1f ms, max %.1f '
              'ms over %d audits' % (
                  1000 * sum(audits) / len(audits),
                  1000 * audits[len(audits) // 2], 1000 * audits[-1],
                  len(audits)))
    mismatches = [r for r in rows if not r[5]]
    for error in stats.errors[:20]:
        print('error: %s' % error, file=sys.stderr)
    print('mismatches: %d, errors: %d' % (len(mismatches),
                                          len(stats.errors)))
    return 1 if mismatches or stats.errors else 0


if __name__ == '__main__':
    sys.exit(main())
