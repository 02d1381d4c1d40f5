"""A same_subtree search over NUMA trees, resobj against the reference.

Each service (one gunicorn worker, the same command line, a fresh
database: bench/apiserve.py) gets the same trees over HTTP, one after the
other: per tree a root with DISK_GB, two NUMA cells (VCPU, MEMORY_MB,
trait HW_NUMA_ROOT) and under each cell two PCI functions (SRIOV_NET_VF,
one CUSTOM_PHYSNET_A and one CUSTOM_PHYSNET_B). Then a microversion 1.36+
request with granular groups, a resourceless group and ``same_subtree``
(a guest's CPU, memory and a VF on physnet A within one NUMA cell) is
timed with and without ``limit=50``, each request on a new connection,
from its sending to the response's last byte (as the shared harness
times requests: the client's parsing of the 2 MB answer is not part of
the figure).
Prints p50 per service, the ratio reference p50 / resobj p50 and whether
both answered the same number of candidates (two per tree).

    python bench/same_subtree.py --backend sqlite --ref-venv /work/refvenv
"""

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.parse
import uuid

import apiserve

MICROVERSION = '1.39'
QUERY = ('resources_CPU=VCPU:2,MEMORY_MB:2048'
         '&resources_NET=SRIOV_NET_VF:1&required_NET=CUSTOM_PHYSNET_A'
         '&required_NUMA=HW_NUMA_ROOT&same_subtree=_NUMA,_CPU,_NET'
         '&group_policy=none')
PHYSNETS = ('CUSTOM_PHYSNET_A', 'CUSTOM_PHYSNET_B')
# The target ratio of reference p50 / resobj p50.
TARGET = 8


def log(msg):
    print('[same_subtree] %s' % msg, file=sys.stderr, flush=True)


class Client(object):
    """JSON over http.client; keep-alive, or a new connection each time."""

    def __init__(self, url, keepalive):
        self.netloc = urllib.parse.urlsplit(url).netloc
        self.keepalive = keepalive
        self.conn = None

    def request(self, method, path, body=None, expect=(200,)):
        headers = {'X-Auth-Token': 'admin', 'Accept': 'application/json',
                   'OpenStack-API-Version': 'placement ' + MICROVERSION}
        if body is not None:
            body = json.dumps(body)
            headers['Content-Type'] = 'application/json'
        if not self.keepalive:
            headers['Connection'] = 'close'
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.netloc, timeout=600)
        start = time.perf_counter()
        self.conn.request(method, path, body, headers)
        resp = self.conn.getresponse()
        data = resp.read()
        # As the shared harness times a request: to the response's last
        # byte, without the client's parsing of it.
        self.elapsed = time.perf_counter() - start
        if not self.keepalive or resp.will_close:
            self.conn.close()
            self.conn = None
        if resp.status not in expect:
            raise RuntimeError('%s %s: %d %s' % (method, path, resp.status,
                                                 data[:300]))
        return json.loads(data) if data else None


def provider(client, name, parent, inventories, traits):
    rp = str(uuid.uuid4())
    body = {'name': name, 'uuid': rp}
    if parent:
        body['parent_provider_uuid'] = parent
    client.request('POST', '/resource_providers', body, expect=(200,))
    client.request('PUT', '/resource_providers/%s/inventories' % rp,
                   {'resource_provider_generation': 0,
                    'inventories': inventories})
    if traits:
        client.request('PUT', '/resource_providers/%s/traits' % rp,
                       {'resource_provider_generation': 1,
                        'traits': traits})
    return rp


def build(client, trees):
    for trait in PHYSNETS:
        client.request('PUT', '/traits/' + trait, expect=(201, 204))
    for t in range(trees):
        root = provider(client, 'host%d' % t, None,
                        {'DISK_GB': {'total': 2000}}, [])
        for n in range(2):
            cell = provider(client, 'host%d-numa%d' % (t, n), root,
                            {'VCPU': {'total': 32},
                             'MEMORY_MB': {'total': 65536}},
                            ['HW_NUMA_ROOT'])
            for f, physnet in enumerate(PHYSNETS):
                provider(client, 'host%d-numa%d-pf%d' % (t, n, f), cell,
                         {'SRIOV_NET_VF': {'total': 8}}, [physnet])


def measure(client, query, repeat):
    """(p50 ms, candidates) of ``repeat`` requests."""
    times, counts = [], set()
    for _ in range(repeat):
        body = client.request('GET', '/allocation_candidates?' + query)
        times.append(client.elapsed * 1000)
        counts.add(len(body['allocation_requests']))
    if len(counts) != 1:
        raise RuntimeError('answers of different sizes: %s' % counts)
    return statistics.median(times), counts.pop()


def run(args, name, workdir):
    service = apiserve.start_service(args.backend, name, workdir,
                                     args.ref_venv, 1, log)
    analyzer = apiserve.auto_analyze(args.backend, service, log)
    try:
        start = time.monotonic()
        build(Client(service.url, keepalive=True), args.trees)
        log('%s: %d trees built in %.0f s' % (name, args.trees,
                                              time.monotonic() - start))
        if analyzer:
            # Autovacuum's round over the fresh tables, without waiting
            # for its next round.
            analyzer.run_once()
        client = Client(service.url, keepalive=False)
        figures = {}
        for label, query, repeat in (
                ('all', QUERY, args.repeat),
                ('limit=50', QUERY + '&limit=50', args.repeat * 2)):
            measure(client, query, 1)   # warm-up, untimed
            figures[label] = measure(client, query, repeat)
            log('%s %s: p50 %.1f ms, %d candidates'
                % (name, label, *figures[label]))
        return figures
    finally:
        if analyzer:
            analyzer.stop()
        service.stop()
        apiserve.drop_database(args.backend, service.db_url)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--backend', choices=('sqlite', 'postgresql'),
                   default='sqlite')
    p.add_argument('--trees', type=int, default=1000)
    p.add_argument('--repeat', type=int, default=10,
                   help='timed requests without limit (twice as many '
                        'with limit=50)')
    p.add_argument('--ref-venv', default=os.path.expanduser(
        '~/.cache/resobj-bench/placement-venv'))
    p.add_argument('--only', choices=('resobj', 'reference'))
    args = p.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix='resobj-same-subtree-')
    names = [args.only] if args.only else ['reference', 'resobj']
    load = ' '.join('%.2f' % x for x in os.getloadavg())
    results = {name: run(args, name, workdir) for name in names}
    print('backend %s, %d trees, load %s before, %s after; GET '
          '/allocation_candidates?%s (microversion %s)'
          % (args.backend, args.trees, load,
             ' '.join('%.2f' % x for x in os.getloadavg()), QUERY,
             MICROVERSION))
    print('| request | %s | ratio | target | same count |'
          % ' | '.join('%s p50 ms (candidates)' % n for n in names))
    print('|---|' + '---|' * (len(names) + 3))
    for label in ('all', 'limit=50'):
        cells = ['%.1f (%d)' % results[n][label] for n in names]
        if args.only:
            ratio, met, same = '-', '', '-'
        else:
            ref, res = results['reference'][label], results['resobj'][label]
            ratio = '%.1fx' % (ref[0] / res[0])
            met = '>= %dx: %s' % (TARGET, 'yes' if ref[0] / res[0] >= TARGET
                                  else 'NO')
            same = 'yes' if ref[1] == res[1] else 'NO'
        print('| %s | %s | %s | %s | %s |' % (label, ' | '.join(cells),
                                              ratio, met, same))
    print('server logs: %s' % workdir)


if __name__ == '__main__':
    main()
