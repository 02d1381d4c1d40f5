"""Drive openstack-placement and resobj-api with the same requests.

    .tox/py3/bin/python -m tools.difftest.run --backend sqlite \\
        --sequences 50 --length 60 --seed 1 [--ref-venv /work/refvenv]

Without ``--ref-venv`` the reference is installed from PyPI into
``.difftest-venv`` (with psycopg2 for ``--backend postgresql``). Prints
each kind of difference once (the request and both answers), then how
many sequences, requests and differences it saw. Exits 1 if any.
"""

import argparse
import collections
import http.client
import itertools
import json
import os
import sys
import time

from tools.difftest import compare
from tools.difftest import deviations
from tools.difftest import generate
from tools.difftest import servers

PG_URL = 'postgresql+psycopg2://openstack_citest:openstack_citest@127.0.0.1'


class Client:
    def __init__(self, url):
        host, port = url.split('//')[1].split(':')
        self._conn = http.client.HTTPConnection(host, int(port), timeout=60)

    def send(self, req):
        # The reference lets only a service reshape.
        headers = {'X-Auth-Token': 'admin', 'X-Roles': 'admin,service',
                   'Accept': 'application/json'}
        if req['version'] is not None:
            headers['OpenStack-API-Version'] = 'placement %s' % req['version']
        headers.update(req['headers'])
        # A header the request names as None is not sent.
        headers = {k: v for k, v in headers.items() if v is not None}
        for attempt in (1, 2):
            try:
                self._conn.request(req['method'], req['path'],
                                   body=req.get('body'), headers=headers)
                resp = self._conn.getresponse()
                return compare.Answer(resp.status, resp.getheaders(),
                                      resp.read())
            except (http.client.HTTPException, ConnectionError):
                self._conn.close()
                if attempt == 2:
                    raise


def describe(req):
    body = req.get('body')
    text = '%s %s (version %s)' % (req['method'], req['path'],
                                   req['version'])
    extra = {k: v for k, v in req['headers'].items()
             if k != 'Content-Type' or v != 'application/json'}
    if body is None and req['method'] in ('PUT', 'POST'):
        text += ' without a body'
    if extra:
        text += ' headers %s' % extra
    if body is not None:
        text += '\n    body %s' % body.decode('utf-8', 'replace')[:600]
    return text


def translate(req, same):
    """``req`` for resobj, with resobj's uuids for the reference's.

    The uuids the reference generated are replaced by the ones resobj
    generated for the same request.
    """
    if not same:
        return req
    req = dict(req)

    def replace(match):
        return same.get(match.group(0), match.group(0))
    req['path'] = compare.UUID_RE.sub(replace, req['path'])
    if req.get('body') is not None:
        req['body'] = compare.UUID_RE.sub(
            replace, req['body'].decode('utf-8', 'surrogatepass')).encode(
                'utf-8', 'surrogatepass')
    return req


def run(args, ref, res):
    kinds = collections.OrderedDict()
    totals = collections.Counter()
    documented = collections.Counter()
    # Every uuid any sequence chose (a later sequence meets an earlier
    # one's leftovers), and {reference's uuid: resobj's} for what the
    # servers named themselves.
    chosen, same, previous = set(), {}, ()
    for seed in range(args.seed, args.seed + args.sequences):
        seq = generate.Sequence(seed, args.length, chosen, previous,
                                forest=args.forest)
        previous = seq.consumers
        ref_names = compare.UuidNames(chosen)
        res_names = compare.UuidNames(chosen)
        steps = seq.steps()
        req = next(steps)
        while True:
            ref_answer = ref.send(req)
            res_answer = res.send(translate(req, same))
            totals['requests'] += 1
            if 'same_subtree=' in req['path']:
                totals['same_subtree'] += 1
                totals['same_subtree_found'] += _has_candidates(ref_answer)
            _bind_created(req, ref_answer, ref_names, res_answer, res_names,
                          same)
            a = compare.normalise(ref_answer, ref_names)
            b = compare.normalise(res_answer, res_names)
            if args.trace:
                print('%d %d %s' % (ref_answer.status, res_answer.status,
                                    describe(req)))
            replayed = _replay_leftover(req, a, b, ref_answer, ref, res,
                                        ref_names, res_names, same)
            if replayed is not None:
                a, b, ref_answer = replayed
            diffs = compare.differences(a, b)
            known, diffs = deviations.classify(req, a, b, diffs)
            if replayed is not None and not diffs:
                known.setdefault(deviations.LEFTOVER_CONSUMER, [])
            if (deviations.is_empty_name_refused(req, b)
                    and req['method'] == 'PUT' and a['status'] == 200):
                _rename_back(req, ref, res, same)
            if (deviations.is_allocation_write(req)
                    and 200 <= a['status'] < 300
                    and 200 <= b['status'] < 300):
                bumped = _follow_old_providers(req, ref, res, same)
                documented[deviations.OLD_PROVIDERS_BUMPED] += bumped
            for name in known:
                documented[name] += 1
            if diffs:
                totals['differences'] += 1
                key = compare.signature(req, diffs)
                if key not in kinds:
                    kinds[key] = [0, seed, req, a, b, diffs, []]
                    if args.verbose:
                        report(key, kinds[key])
                kinds[key][0] += 1
                kinds[key][6].append((seed, req))
            try:
                req = steps.send(ref_answer)
            except StopIteration:
                break
        totals['sequences'] += 1
    return kinds, totals, documented


def _has_candidates(answer):
    """Whether ``answer`` is a 200 with at least one allocation request."""
    if answer.status != 200:
        return False
    return bool((answer.json() or {}).get('allocation_requests'))


def _replay_leftover(req, a, b, ref_answer, ref, res, ref_names,
                     res_names, same):
    """Make both servers agree again after a left-over consumer.

    Sends the write once more to the server that refused it, with the
    consumer generation the other one took (see
    ``deviations.leftover_consumer_replay``), then to the other if it
    too refused for that reason; returns the normalised answers to
    compare and the reference's answer for the sequence, or None when
    the difference is no such case.
    """
    replayed = None
    for _ in range(2):
        server = deviations.leftover_consumer_replay(req, a, b)
        if server is None:
            break
        if server == 'resobj':
            again = deviations.with_generations(
                req, dict.fromkeys(deviations.generations(req, 0)))
            b = compare.normalise(res.send(translate(again, same)),
                                  res_names)
        else:
            a, ref_answer = _zero_for_leftovers(req, ref, ref_names)
        replayed = a, b, ref_answer
    return replayed


def _zero_for_leftovers(req, ref, ref_names):
    """Placement's answer once its left-over consumers are given 0.

    Which of the consumers with a null generation placement left behind
    shows only in its answers: each subset is tried, smallest first,
    until placement answers neither "expected 0" nor "expected null".
    """
    nulls = deviations.generations(req, None)
    for size in range(1, len(nulls) + 1):
        for subset in itertools.combinations(nulls, size):
            answer = ref.send(deviations.with_generations(
                req, dict.fromkeys(subset, 0)))
            a = compare.normalise(answer, ref_names)
            if not (deviations.is_expected_0(a)
                    or deviations.is_expected_null(a)):
                return a, answer
    return a, answer


def _rename_back(req, ref, res, same):
    """Give the reference's provider resobj's name again.

    Placement took a PUT of the name '' that resobj refused.
    """
    path = req['path'].split('?')[0]
    data = res.send(translate(generate.request('GET', path, '1.0'),
                              same)).json() or {}
    if 'name' in data:
        ref.send(generate.request('PUT', path, '1.0', {'name': data['name']}))


def _generations(client):
    answer = client.send(generate.request('GET', '/resource_providers',
                                          '1.14'))
    data = answer.json() or {}
    return {rp['uuid']: rp['generation']
            for rp in data.get('resource_providers', [])}


def _follow_old_providers(req, ref, res, same):
    """Bump on the reference what resobj bumped after a moved allocation.

    resobj bumps the generation of a provider a write takes allocations
    off (a documented deviation); placement bumps only the providers the
    write names. For each provider the write does not name whose
    generation is one more on resobj, a write that changes nothing (its
    aggregates, again) bumps the reference's, so that the sequence's later
    writes, which read the reference's generations, stay comparable.
    Returns how many were bumped.
    """
    named = set(compare.UUID_RE.findall(req.get('body', b'').decode(
        'utf-8', 'replace')))
    theirs = _generations(res)
    bumped = 0
    for uuid, generation in _generations(ref).items():
        if uuid in named or theirs.get(same.get(uuid, uuid)) != \
                generation + 1:
            continue
        # Placement bumps a provider whose aggregates are set, even to
        # the ones it has (not one whose traits are).
        path = '/resource_providers/%s/aggregates' % uuid
        aggregates = (ref.send(generate.request('GET', path, '1.19')).json()
                      or {}).get('aggregates', [])
        answer = ref.send(generate.request('PUT', path, '1.19', {
            'aggregates': aggregates,
            'resource_provider_generation': generation}))
        bumped += (answer.json() or {}).get(
            'resource_provider_generation') == generation + 1
    return bumped


def _bind_created(req, ref_answer, ref_names, res_answer, res_names, same):
    """Name the providers both servers created for one request alike.

    A request without a uuid in the body; remembers which of resobj's
    uuids stands for which of the reference's.
    """
    if req['method'] != 'POST' or req['path'] != '/resource_providers':
        return
    found = [compare.UUID_RE.search(answer.headers.get('location', ''))
             for answer in (ref_answer, res_answer)]
    if all(found) and found[0].group(0) not in ref_names.known:
        ref_names.bind(found[0].group(0))
        res_names.bind(found[1].group(0))
        same[found[0].group(0)] = found[1].group(0)


def report(key, kind):
    count, seed, req, a, b, diffs, seen = kind
    print('=' * 72)
    print('%d x [seed %d] %s' % (count, seed, describe(req)))
    for path, x, y in diffs[:6]:
        print('  %s\n    reference: %s\n    resobj:    %s' % (
            path, json.dumps(x)[:800], json.dumps(y)[:800]))
    # Every occurrence, each reproducible on its own with
    # --seed SEED --sequences 1 (a sequence starts from a clean cloud).
    for where, other in seen[1:]:
        print('  also [seed %d] %s %s'
              % (where, other['method'], other['path']))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--backend', choices=['sqlite', 'postgresql'],
                        default='sqlite')
    parser.add_argument('--sequences', type=int, default=20)
    parser.add_argument('--length', type=int, default=50,
                        help='operations per sequence')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--ref-venv', default=None,
                        help='a venv with openstack-placement 16.0.0 and '
                             'waitress (psycopg2 for PostgreSQL)')
    parser.add_argument('--pg-url', default=PG_URL)
    parser.add_argument('--forest', action='store_true',
                        help='start each sequence from nested trees and '
                             'ask for candidates (same_subtree) more often')
    parser.add_argument('--keep', action='store_true',
                        help='keep the temporary directory (logs)')
    parser.add_argument('--trace', action='store_true',
                        help='print every request and both statuses')
    parser.add_argument('--verbose', '-v', action='store_true',
                        help='print each kind as it is found')
    args = parser.parse_args(argv)
    venv = args.ref_venv or servers.ensure_reference_venv(
        os.path.abspath('.difftest-venv'), args.backend == 'postgresql')
    start = time.monotonic()
    pair = servers.Pair(args.backend, venv, args.pg_url, keep=args.keep)
    try:
        kinds, totals, documented = run(args, Client(pair.reference.url),
                                        Client(pair.resobj.url))
    finally:
        pair.stop()
    if not args.verbose:
        for key, kind in kinds.items():
            report(key, kind)
    print('=' * 72)
    for name in deviations.ALL:
        print('documented: %-28s %6d answers' % (name, documented[name]))
    print('%s, seeds %d-%d, length %d: %d sequences, %d requests, %d '
          'unexplained differing answers of %d kinds, %d answers '
          'differing only as documented, in %.0f s'
          % (args.backend, args.seed, args.seed + args.sequences - 1,
             args.length, totals['sequences'], totals['requests'],
             totals['differences'], len(kinds), sum(documented.values()),
             time.monotonic() - start))
    print('same_subtree: %d requests, %d of them with candidates on the '
          'reference' % (totals['same_subtree'],
                         totals['same_subtree_found']))
    return 1 if kinds else 0


if __name__ == '__main__':
    sys.exit(main())
