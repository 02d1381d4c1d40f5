"""Answer codes and times of a real resobj-api while its database link fails.

Starts ``resobj-api`` (default options, one worker) on a new PostgreSQL
or MariaDB database reached through the test suite's TCP proxy
(``resobj/tests/tcp_proxy.py``); client threads claim one VCPU each for
new consumers, and a prober sends ``GET /`` every half second. After a
few seconds the proxy is stalled or cut for ``--seconds``, then
restored. Prints the answers per phase, how long after the fault began
the first 503 came, the longest ``GET /`` and how long after the
database's return the first claim succeeded.

    python bench/db_outage.py --fault stall --seconds 45
    python bench/db_outage.py --fault stall --seconds 40 --clients 8
    python bench/db_outage.py --fault cut --seconds 10 --backend mysql

``--code DIR`` runs the resobj of another checkout (for a before/after
comparison on one machine; its dependencies must be the same).
"""

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import threading
import time

from oslo_db.sqlalchemy import provision
from oslo_utils import uuidutils
import requests

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))

from resobj.tests.api import server  # noqa: E402
from resobj.tests import tcp_proxy  # noqa: E402

HEADERS = {'openstack-api-version': 'placement 1.12',
           'x-auth-token': 'admin', 'accept': 'application/json'}
PORTS = {'postgresql': 5432, 'mysql': 3306}


def start_api(url, code, tmp, workers=1):
    """A resobj-api on ``url`` (None: SQLite in ``tmp``); (process, URL).

    ``code``: the checkout whose resobj it runs (None: this one's).
    """
    port = server.free_port()
    conf = os.path.join(tmp, 'resobj.conf')
    with open(conf, 'w') as f:
        f.write('[DEFAULT]\nstate_dir = %s\n' % tmp)
        if url:
            f.write('[database]\nconnection = %s\n' % url)
    env = dict(os.environ)
    if code:
        env['PYTHONPATH'] = code
    proc = subprocess.Popen(
        [sys.executable, '-m', 'resobj.cmd.api', '--config-file', conf,
         '--port', str(port), '--workers', str(workers)],
        stdout=open(os.path.join(tmp, 'api.log'), 'w'),
        stderr=subprocess.STDOUT, env=env, cwd=code or None)
    base = 'http://127.0.0.1:%d' % port
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(base + '/', timeout=2)
            return proc, base
        except requests.RequestException:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit('resobj-api did not start; see %s/api.log' % tmp)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--backend', choices=sorted(PORTS),
                        default='postgresql')
    parser.add_argument('--fault', choices=('stall', 'cut', 'terminate'),
                        default='stall',
                        help='terminate: the server ends the service\'s '
                             'connections every 0.2 s for --seconds')
    parser.add_argument('--seconds', type=float, default=45)
    parser.add_argument('--clients', type=int, default=4)
    parser.add_argument('--code', help='checkout whose resobj to run')
    args = parser.parse_args()

    backend = provision.Backend.backend_for_database_type(args.backend)
    ident = 'outage_' + uuidutils.generate_uuid(dashed=False)[:10]
    backend.create_named_database(ident)
    tmp = tempfile.mkdtemp(prefix='resobj-outage-')
    proc = None
    try:
        url = backend.provisioned_database_url(ident)
        proxy = tcp_proxy.TCPProxy(url.host or '127.0.0.1',
                                   url.port or PORTS[args.backend])
        proxied = url.set(host='127.0.0.1', port=proxy.port)
        proc, base = start_api(
            proxied.render_as_string(hide_password=False), args.code, tmp)
        rp = uuidutils.generate_uuid()
        requests.post(base + '/resource_providers', headers=HEADERS,
                      json={'name': 'rp', 'uuid': rp}, timeout=30)
        requests.put(base + '/resource_providers/%s/inventories' % rp,
                     headers=HEADERS, timeout=30,
                     json={'resource_provider_generation': 0,
                           'inventories': {'VCPU': {'total': 10 ** 6,
                                                    'max_unit': 10 ** 6}}})
        if args.fault == 'terminate':
            fault, restore = _terminator(url, args.seconds), lambda: None
        else:
            fault, restore = getattr(proxy, args.fault), proxy.restore
        _run(args, base, rp, fault, restore)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(60)
        backend.drop_named_database(ident)
    print('resobj-api log: %s/api.log' % tmp)


def _terminator(url, seconds):
    """A fault that ends the database's other connections, repeatedly."""
    import sqlalchemy as sa
    admin = sa.create_engine(url, poolclass=sa.pool.NullPool)
    if url.get_backend_name() == 'postgresql':
        statements = ['SELECT pg_terminate_backend(pid) FROM '
                      'pg_stat_activity WHERE datname = current_database() '
                      'AND pid <> pg_backend_pid()']
    else:
        statements = None

    def end_all():
        with admin.connect() as conn:
            if statements:
                for statement in statements:
                    conn.execute(sa.text(statement))
                return
            ids = conn.execute(sa.text(
                'SELECT id FROM information_schema.processlist WHERE '
                'db = DATABASE() AND id <> CONNECTION_ID()')).scalars()
            for thread_id in list(ids):
                try:
                    conn.execute(sa.text('KILL %d' % thread_id))
                except sa.exc.DBAPIError:
                    pass

    def fault():
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            end_all()
            time.sleep(0.2)
        admin.dispose()
    return fault


def _run(args, base, rp, fault, restore):
    stop = threading.Event()
    claims = []
    roots = []

    def claim():
        session = requests.Session()
        session.headers.update(HEADERS)
        while not stop.is_set():
            started = time.monotonic()
            try:
                status = session.put(
                    '%s/allocations/%s' % (base, uuidutils.generate_uuid()),
                    json={'allocations': {rp: {'resources': {'VCPU': 1}}},
                          'project_id': 'p', 'user_id': 'u'},
                    timeout=120).status_code
            except requests.RequestException as exc:
                status = type(exc).__name__
            claims.append((started, time.monotonic(), status))
            if status == 503:
                time.sleep(0.05)

    def probe():
        while not stop.is_set():
            started = time.monotonic()
            try:
                status = requests.get(base + '/', timeout=60).status_code
            except requests.RequestException as exc:
                status = type(exc).__name__
            roots.append((started, time.monotonic(), status))
            time.sleep(0.5)

    threads = [threading.Thread(target=claim) for _ in range(args.clients)]
    threads.append(threading.Thread(target=probe))
    for thread in threads:
        thread.start()
    time.sleep(3)
    fault_at = time.monotonic()
    fault()
    if args.fault != 'terminate':
        time.sleep(args.seconds)
    restore()
    back_at = time.monotonic()
    time.sleep(5)
    stop.set()
    for thread in threads:
        thread.join(180)

    def phase(end):
        if end < fault_at:
            return 'before'
        return 'during' if end < back_at else 'after'

    counts = collections.Counter((phase(end), status)
                                 for _, end, status in claims)
    print('%s %s for %.0f s, %d claim clients, code %s'
          % (args.backend, args.fault, args.seconds, args.clients,
             args.code or 'this checkout'))
    for name in ('before', 'during', 'after'):
        print('  claims ending %-6s the fault: %s' % (name, dict(sorted(
            ((s, n) for (p, s), n in counts.items() if p == name),
            key=str))))
    first_503 = min((end for _, end, s in claims
                     if s == 503 and end >= fault_at), default=None)
    print('  first 503 after the fault began: %s'
          % ('%.1f s' % (first_503 - fault_at) if first_503 else 'none'))
    recovered = min((end for start, end, s in claims
                     if s == 204 and start >= back_at), default=None)
    print('  first claim succeeding after the return: %s'
          % ('%.2f s' % (recovered - back_at) if recovered else 'none'))
    during = [end - start for start, end, _ in roots
              if fault_at <= start < back_at]
    print('  GET / during the fault: %d probes, longest %.2f s, answers %s'
          % (len(during), max(during, default=0),
             dict(collections.Counter(
                 s for start, _, s in roots
                 if fault_at <= start < back_at))))
    refused = [end - start for start, end, s in claims if s == 503]
    print('  longest wait for a 503: %s' % (
        '%.2f s' % max(refused) if refused else 'none'))
    slowest = max(claims, key=lambda claim: claim[1] - claim[0])
    print('  longest claim: %.2f s (%s)' % (slowest[1] - slowest[0],
                                            slowest[2]))
    hung = sum(1 for start, end, _ in claims
               if start < fault_at and end >= back_at)
    print('  claims begun before the fault that ended only after the '
          'return: %d' % hung)


if __name__ == '__main__':
    main()
