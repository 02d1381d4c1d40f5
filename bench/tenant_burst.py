"""Answers of a real resobj-api to bursts of boots for new tenants.

Starts ``resobj-api`` (default options, ``--workers`` worker processes)
on a new SQLite, PostgreSQL or MariaDB database and sends, in rounds,
the same request from ``--threads`` threads at once (a barrier starts
each round):

* ``project``: ``PUT /allocations/{new consumer}`` naming a project and
  user new to the service (one pair per round, shared by the round's
  threads) on a provider with no room left, so every claim is refused
  after its transaction created the project and user;
* ``type``: the same with a known project and user and a consumer type
  new to the service (microversion 1.38);
* ``delete``: ``DELETE /allocations/{consumer}`` of one consumer that
  holds allocations, by every thread.

Prints the count of each answer per kind, and for ``delete`` how many
rounds answered other than exactly one 204.

    python bench/tenant_burst.py --backend mysql
    python bench/tenant_burst.py --backend mysql --code /path/to/checkout

``--code DIR`` runs the resobj of another checkout (a before/after
comparison on one machine; its dependencies must be the same).
"""

import argparse
import collections
import os
import sys
import tempfile
import threading
import time

from oslo_db.sqlalchemy import provision
from oslo_utils import uuidutils
import requests

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))

from bench import db_outage  # noqa: E402

HEADERS = {'openstack-api-version': 'placement 1.38',
           'x-auth-token': 'admin', 'accept': 'application/json'}


def _provider(base, total):
    rp = uuidutils.generate_uuid()
    resp = requests.post(base + '/resource_providers', headers=HEADERS,
                         json={'name': rp, 'uuid': rp}, timeout=60)
    resp.raise_for_status()
    resp = requests.put(
        base + '/resource_providers/%s/inventories' % rp, headers=HEADERS,
        timeout=60, json={'resource_provider_generation': 0,
                          'inventories': {'VCPU': {'total': total}}})
    resp.raise_for_status()
    return rp


def _claim(session, base, rp, project, user, consumer_type, amount=1):
    return session.put(
        '%s/allocations/%s' % (base, uuidutils.generate_uuid()),
        timeout=120, json={
            'allocations': {rp: {'resources': {'VCPU': amount}}},
            'project_id': project, 'user_id': user,
            'consumer_generation': None, 'consumer_type': consumer_type})


def _rounds(threads, rounds, prepare, act):
    """``act(session, round's value)`` from every thread, round by round.

    ``prepare(round)`` gives the round's value before it starts. Returns
    [(round, status, code or text)].
    """
    barrier = threading.Barrier(threads)
    values = {}
    answers = []
    lock = threading.Lock()

    def client(n):
        session = requests.Session()
        session.headers.update(HEADERS)
        for r in range(rounds):
            if n == 0:
                values[r] = prepare(r)
            barrier.wait()
            try:
                resp = act(session, values[r])
                try:
                    said = resp.json()['errors'][0].get('code', '')
                except (ValueError, KeyError, IndexError):
                    said = ''
                if resp.status_code >= 500:
                    said = resp.text[:200]
                answer = (r, resp.status_code, said)
            except requests.RequestException as exc:
                answer = (r, type(exc).__name__, '')
            with lock:
                answers.append(answer)
            barrier.wait()

    workers = [threading.Thread(target=client, args=(n,))
               for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return answers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--backend', default='mysql',
                        choices=('sqlite', 'postgresql', 'mysql'))
    parser.add_argument('--threads', type=int, default=16)
    parser.add_argument('--rounds', type=int, default=20)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--kinds', default='project,type,delete')
    parser.add_argument('--code', help='checkout whose resobj to run')
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix='resobj-burst-')
    backend = ident = None
    url = None
    if args.backend != 'sqlite':
        backend = provision.Backend.backend_for_database_type(args.backend)
        ident = 'burst_' + uuidutils.generate_uuid(dashed=False)[:10]
        backend.create_named_database(ident)
        url = backend.provisioned_database_url(ident).render_as_string(
            hide_password=False)
    proc = None
    try:
        proc, base = db_outage.start_api(url, args.code, tmp, args.workers)
        full = _provider(base, 1)
        room = _provider(base, 10 ** 6)
        filler = requests.Session()
        filler.headers.update(HEADERS)
        resp = _claim(filler, base, full, 'p', 'u', 'INSTANCE')
        resp.raise_for_status()
        run = uuidutils.generate_uuid(dashed=False)[:8]

        def new_owner(r):
            return 'p-%s-%d' % (run, r), 'u-%s-%d' % (run, r)

        def new_consumer(r):
            consumer = uuidutils.generate_uuid()
            resp = requests.put(
                '%s/allocations/%s' % (base, consumer), headers=HEADERS,
                timeout=120, json={
                    'allocations': {room: {'resources': {'VCPU': 1}}},
                    'project_id': 'p', 'user_id': 'u',
                    'consumer_generation': None,
                    'consumer_type': 'INSTANCE'})
            resp.raise_for_status()
            return consumer

        kinds = {
            'project': (new_owner, lambda s, v: _claim(
                s, base, full, v[0], v[1], 'INSTANCE')),
            'type': (lambda r: 'TYPE_%s_%d' % (run.upper(), r),
                     lambda s, v: _claim(s, base, full, 'p', 'u', v)),
            'delete': (new_consumer, lambda s, v: s.delete(
                '%s/allocations/%s' % (base, v), timeout=120)),
        }
        for kind in args.kinds.split(','):
            prepare, act = kinds[kind]
            started = time.monotonic()
            answers = _rounds(args.threads, args.rounds, prepare, act)
            took = time.monotonic() - started
            counts = collections.Counter(
                (status, code if status < 500 else '')
                if isinstance(status, int) else (status, '')
                for _, status, code in answers)
            print('%s %s: %d requests in %.1f s: %s' % (
                args.backend, kind, len(answers), took, ', '.join(
                    '%s%s x%d' % (status, ' ' + code if code else '', n)
                    for (status, code), n in sorted(
                        counts.items(), key=str))))
            errors = [text for _, status, text in answers
                      if not isinstance(status, int) or status >= 500]
            for text in sorted(set(errors))[:3]:
                print('  5xx: %s' % text.replace('\n', ' '))
            if kind == 'delete':
                per_round = collections.Counter(
                    r for r, status, _ in answers if status == 204)
                wrong = {r: per_round.get(r, 0) for r in range(args.rounds)
                         if per_round.get(r, 0) != 1}
                print('  rounds not answered exactly one 204: %d %s'
                      % (len(wrong), sorted(wrong.values())))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(120)
        if backend is not None:
            backend.drop_named_database(ident)
    print('resobj-api log: %s/api.log' % tmp)


if __name__ == '__main__':
    main()
