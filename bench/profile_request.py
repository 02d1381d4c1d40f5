"""Profile one request type of the WSGI application, in process.

Loads resobj's application (no HTTP server: what is left is the
application's own cost, the part a server change cannot reach) on a
fresh database, creates ``--providers`` compute providers through it
with the shared harness's inventories, then runs ``--requests`` requests
of one kind under cProfile and prints the mean wall time per request and
the top functions by own and by cumulative time.

    python bench/profile_request.py claim
    python bench/profile_request.py usages \
        --url postgresql+psycopg://postgres@127.0.0.1/DB
    python bench/profile_request.py claim --no-profile   # timing only

Kinds: ``claim`` (PUT /allocations/{new consumer}, VCPU 2, MEMORY_MB
4096, DISK_GB 20 on a random provider), ``usages`` (GET
/usages?project_id at 1.37), ``rp-usages`` (GET
/resource_providers/{uuid}/usages), ``candidates`` (GET
/allocation_candidates for the claim's resources, no limit: every
provider is a candidate), ``avx2`` (the same, ``required=HW_CPU_X86_AVX2``),
``root`` (GET /), ``subtree`` (the ``same_subtree`` request of
same_subtree.py over its ``--trees`` NUMA trees, which replace the
compute providers). The providers are laid out as the shared harness
lays them out (traits, aggregates of ten); ``--sharing N`` adds its
sharing DISK_GB providers.
"""

import argparse
import cProfile
import json
import os
import pstats
import random
import sys
import tempfile
import time
import uuid

import webob

from resobj.api import service
import same_subtree

HEADERS = {'X-Auth-Token': 'admin', 'Accept': 'application/json',
           'OpenStack-API-Version': 'placement 1.39'}
PROJECTS = ['project-%d' % i for i in range(10)]


def call(app, method, path, body=None, version=None, expect=(200, 204)):
    req = webob.Request.blank(path, method=method)
    req.headers.update(HEADERS)
    if version:
        req.headers['OpenStack-API-Version'] = 'placement ' + version
    if body is not None:
        req.body = json.dumps(body).encode()
        req.content_type = 'application/json'
    resp = req.get_response(app)
    if resp.status_int not in expect:
        raise RuntimeError('%s %s: %s %s' % (method, path, resp.status,
                                             resp.body[:300]))
    return resp


def _provider(app, name, inventories, traits, aggregates):
    rp = str(uuid.uuid4())
    call(app, 'POST', '/resource_providers', {'name': name, 'uuid': rp})
    call(app, 'PUT', '/resource_providers/%s/inventories' % rp, {
        'resource_provider_generation': 0, 'inventories': inventories})
    generation = 1
    if traits:
        call(app, 'PUT', '/resource_providers/%s/traits' % rp, {
            'resource_provider_generation': generation, 'traits': traits})
        generation += 1
    if aggregates:
        call(app, 'PUT', '/resource_providers/%s/aggregates' % rp, {
            'resource_provider_generation': generation,
            'aggregates': aggregates}, version='1.19')
    return rp


def setup(app, providers, sharing):
    """The shared harness's layout (placement_bench.py phase a)."""
    aggregates = [str(uuid.uuid4()) for _ in range((providers + 9) // 10)]
    for j in range(sharing):
        _provider(app, 'share%d' % j, {'DISK_GB': {'total': 100000}},
                  ['MISC_SHARES_VIA_AGGREGATE'],
                  [a for k, a in enumerate(aggregates) if k % 10 == j])
    rps = []
    for i in range(providers):
        traits = ['HW_CPU_X86_SSE42']
        if i % 2 == 0:
            traits.append('HW_CPU_X86_AVX2')
        if i % 3 == 0:
            traits.append('STORAGE_DISK_SSD')
        rps.append(_provider(app, 'cn%d' % i, {
            'VCPU': {'total': 32, 'allocation_ratio': 16.0,
                     'max_unit': 32},
            'MEMORY_MB': {'total': 131072, 'allocation_ratio': 1.5,
                          'max_unit': 131072},
            'DISK_GB': {'total': 2000, 'max_unit': 2000}},
            traits, [aggregates[i // 10]]))
    return rps


class InProcessClient:
    """same_subtree.Client's ``request``, through the application."""

    def __init__(self, app):
        self.app = app

    def request(self, method, path, body=None, expect=(200,)):
        resp = call(self.app, method, path, body,
                    version=same_subtree.MICROVERSION, expect=expect)
        return resp.json if resp.body else None


def claim(app, rp, rng):
    call(app, 'PUT', '/allocations/%s' % uuid.uuid4(), {
        'allocations': {rp: {'resources': {
            'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}}},
        'project_id': rng.choice(PROJECTS), 'user_id': 'user',
        'consumer_generation': None, 'consumer_type': 'INSTANCE'})


def make_request(kind, app, rps, rng):
    if kind == 'claim':
        return lambda: claim(app, rng.choice(rps), rng)
    if kind == 'usages':
        return lambda: call(app, 'GET', '/usages?project_id=%s'
                            % rng.choice(PROJECTS), version='1.37')
    if kind == 'candidates':
        return lambda: call(app, 'GET', '/allocation_candidates?resources='
                            'VCPU:2,MEMORY_MB:4096,DISK_GB:20')
    if kind == 'avx2':
        return lambda: call(app, 'GET', '/allocation_candidates?resources='
                            'VCPU:2,MEMORY_MB:4096,DISK_GB:20'
                            '&required=HW_CPU_X86_AVX2')
    if kind == 'subtree':
        return lambda: call(app, 'GET', '/allocation_candidates?'
                            + same_subtree.QUERY,
                            version=same_subtree.MICROVERSION)
    if kind == 'rp-usages':
        return lambda: call(app, 'GET', '/resource_providers/%s/usages'
                            % rng.choice(rps))
    return lambda: call(app, 'GET', '/')


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('kind', choices=('claim', 'usages', 'rp-usages',
                                    'candidates', 'avx2', 'root',
                                    'subtree'))
    p.add_argument('--url', help='database URL (default: a temporary '
                   'SQLite file)')
    p.add_argument('--providers', type=int, default=1000)
    p.add_argument('--sharing', type=int, default=0,
                   help='sharing DISK_GB providers, as the shared harness '
                   'makes them (at most 10)')
    p.add_argument('--trees', type=int, default=1000,
                   help='NUMA trees of the subtree kind')
    p.add_argument('--claims', type=int, default=2000,
                   help='claims made before the profiled requests')
    p.add_argument('--requests', type=int, default=2000)
    p.add_argument('--top', type=int, default=25)
    p.add_argument('--no-profile', action='store_true')
    p.add_argument('--save', metavar='FILE',
                   help='also write the raw profile (pstats) to FILE')
    args = p.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix='resobj-profile-')
    url = args.url or 'sqlite:///' + os.path.join(workdir, 'db.sqlite')
    conf_file = os.path.join(workdir, 'resobj.conf')
    with open(conf_file, 'w') as f:
        f.write('[api]\nauth_strategy = noauth2\n\n'
                '[database]\nconnection = %s\n' % url)
    app = service.load_app([conf_file])
    service.before_serving()
    service.warm_up()
    rng = random.Random(1)
    if args.kind == 'subtree':
        same_subtree.build(InProcessClient(app), args.trees)
        rps = []
    else:
        rps = setup(app, args.providers, args.sharing)
        for _ in range(args.claims):
            claim(app, rng.choice(rps), rng)
    request = make_request(args.kind, app, rps, rng)
    for _ in range(50):
        request()
    profiler = None if args.no_profile else cProfile.Profile()
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    for _ in range(args.requests):
        request()
    if profiler:
        profiler.disable()
    wall = time.perf_counter() - start
    print('%s: %d requests, %.3f ms per request (%s)' % (
        args.kind, args.requests, 1000 * wall / args.requests,
        'under cProfile' if profiler else 'no profiler'))
    if profiler:
        if args.save:
            profiler.dump_stats(args.save)
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats('tottime').print_stats(args.top)
        stats.sort_stats('cumulative').print_stats(args.top)


if __name__ == '__main__':
    main()
