"""How many slow clients it takes to stop resobj-api, and its speed.

Starts ``resobj-api`` from a checkout (default: this one) on a new
SQLite database with the default settings (2 workers, 4 threads), then:

* ``slow``: opens slow connections in steps of ``--step`` (a third each
  trickling headers, trickling a body announced by Content-Length, and
  idle) from ``--sources`` addresses (as ``idle`` below), and after
  each step sends ``--probes`` probes from 127.0.0.1 (``GET /`` and an
  authenticated ``GET /resource_providers``, 5 s timeout each). Prints
  the number of slow connections at which a probe first took more than
  2 s or failed, or that none did up to ``--max``.
* ``idle``: opens ``--count`` connections that send nothing, from
  ``--sources`` loopback addresses (127.0.0.2, or 127.0.1.1, 127.0.1.2
  ...), as fast as it can, then sends ``--probes`` probe pairs (``GET
  /`` and an authenticated ``GET /resource_providers``, 60 s timeout
  each) from 127.0.0.1 while they are open, the first at once. Prints
  how long the connections took to open and each probe's time.
* ``speed``: 100 providers, then ``--clients`` threads for ``--seconds``
  each alternating an allocation candidate search and a claim (PUT
  /allocations); prints requests per second and latency percentiles.

    python bench/slowclients.py slow --sources 100
    python bench/slowclients.py slow --checkout /path/to/older/checkout
    python bench/slowclients.py idle --count 3000 --sources 1
    python bench/slowclients.py idle --count 3000 --sources 100
    python bench/slowclients.py speed --checkout /path/to/older/checkout

The checkout's ``resobj`` is imported from the running interpreter's
environment (PYTHONPATH), so one environment serves both checkouts.
"""

import argparse
import concurrent.futures
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import requests

AUTH = {'X-Auth-Token': 'admin', 'OpenStack-API-Version': 'placement 1.39'}
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(checkout, workdir, database_url=None):
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    conf = os.path.join(workdir, 'resobj.conf')
    with open(conf, 'w') as f:
        f.write('[DEFAULT]\nstate_dir = %s\n[api]\naccess_log =\n'
                % os.path.join(workdir, 'state'))
        if database_url:
            f.write('[database]\nconnection = %s\n' % database_url)
    env = dict(os.environ, PYTHONPATH=checkout)
    log = open(os.path.join(workdir, 'server.log'), 'wb')
    proc = subprocess.Popen(
        [sys.executable, '-m', 'resobj.cmd.api', '--config-file', conf,
         '--port', str(port)], cwd=checkout, env=env, stdout=log,
        stderr=subprocess.STDOUT)
    url = 'http://127.0.0.1:%d' % port
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(url + '/', timeout=2)
            return proc, port, url
        except requests.RequestException:
            time.sleep(0.2)
    proc.kill()
    sys.exit('resobj-api did not start; see %s' % log.name)


def slow_socket(port, kind, source='127.0.0.2'):
    sock = socket.create_connection(('127.0.0.1', port),
                                    source_address=(source, 0))
    if kind == 'header':
        sock.sendall(b'GET /resource_providers HTTP/1.1\r\nHost: x\r\n')
    elif kind == 'body':
        sock.sendall(b'PUT /traits/CUSTOM_SLOW HTTP/1.1\r\nHost: x\r\n'
                     b'X-Auth-Token: admin\r\nContent-Type: application/json'
                     b'\r\nContent-Length: 100000\r\n\r\n{')
    return sock


def probe(url, probes):
    """The slowest of ``probes`` probe pairs, in seconds (inf: failed)."""
    slowest = 0.0
    for _ in range(probes):
        for path, headers in (('/', {}), ('/resource_providers', AUTH)):
            begin = time.monotonic()
            try:
                resp = requests.get(url + path, headers=headers, timeout=5)
                if resp.status_code != 200:
                    return float('inf')
            except requests.RequestException:
                return float('inf')
            slowest = max(slowest, time.monotonic() - begin)
    return slowest


def run_slow(url, port, args):
    sockets = []
    stop = threading.Event()

    def trickle():
        while not stop.wait(0.5):
            for sock, kind in list(sockets):
                if kind != 'idle':
                    try:
                        sock.send(b'X-Slow: 1\r\n' [:1] if kind == 'header'
                                  else b' ')
                    except OSError:
                        pass
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    kinds = ('header', 'body', 'idle')
    try:
        while len(sockets) < args.max:
            for _ in range(args.step):
                kind = kinds[len(sockets) % 3]
                source = _source(len(sockets), args.sources)
                sockets.append((slow_socket(port, kind, source), kind))
            time.sleep(0.5)
            slowest = probe(url, args.probes)
            print('%4d slow connections: slowest probe %s' % (
                len(sockets), 'failed' if slowest == float('inf')
                else '%.3f s' % slowest), flush=True)
            if slowest > 2:
                print('stopped at %d slow connections' % len(sockets))
                return
        print('not stopped by %d slow connections' % len(sockets))
    finally:
        stop.set()
        thread.join()
        for sock, _ in sockets:
            sock.close()


def _source(n, sources):
    """The loopback address the ``n``-th idle connection comes from."""
    if sources == 1:
        return '127.0.0.2'
    index = n % sources
    return '127.0.%d.%d' % (1 + index // 250, 1 + index % 250)


def run_idle(url, port, args):
    sockets = []
    opened = threading.Event()

    def open_all():
        try:
            for n in range(args.count):
                sock = socket.socket()
                sock.bind((_source(n, args.sources), 0))
                sock.setblocking(False)
                # Connected (or queued by the kernel) without waiting for
                # the server to accept it: a flood does not wait either.
                sock.connect_ex(('127.0.0.1', port))
                sockets.append(sock)
        finally:
            opened.set()
    begin = time.monotonic()
    thread = threading.Thread(target=open_all, daemon=True)
    thread.start()
    try:
        opened.wait()
        print('%d idle connections from %d address(es) opened in %.2f s'
              % (len(sockets), args.sources, time.monotonic() - begin),
              flush=True)
        times = []
        for n in range(args.probes):
            for path, headers in (('/', {}), ('/resource_providers', AUTH)):
                start = time.monotonic()
                try:
                    status = requests.get(url + path, headers=headers,
                                          timeout=60).status_code
                except requests.RequestException as exc:
                    status = type(exc).__name__
                took = time.monotonic() - start
                times.append(took)
                print('  probe %d %-20s %s in %.3f s' % (
                    n, path, status, took), flush=True)
            time.sleep(0.5)
        print('slowest probe %.3f s, median %.3f s' % (
            max(times), statistics.median(times)))
    finally:
        thread.join()
        for sock in sockets:
            sock.close()


def run_speed(url, args):
    session = requests.Session()
    session.headers.update(AUTH)
    for i in range(100):
        rp = str(uuid.uuid4())
        session.post(url + '/resource_providers',
                     json={'name': 'bench-%d' % i, 'uuid': rp}
                     ).raise_for_status()
        session.put(url + '/resource_providers/%s/inventories' % rp, json={
            'resource_provider_generation': 0, 'inventories': {
                'VCPU': {'total': 1000}, 'MEMORY_MB': {'total': 10 ** 6}}}
        ).raise_for_status()
    deadline = time.monotonic() + args.seconds

    def client(n):
        latencies = []
        with requests.Session() as s:
            s.headers.update(AUTH)
            while time.monotonic() < deadline:
                begin = time.monotonic()
                resp = s.get(url + '/allocation_candidates?resources='
                             'VCPU:1,MEMORY_MB:512&limit=10')
                latencies.append(time.monotonic() - begin)
                resp.raise_for_status()
                rp = random.choice(list(resp.json()['provider_summaries']))
                begin = time.monotonic()
                resp = s.put(url + '/allocations/%s' % uuid.uuid4(), json={
                    'allocations': {rp: {'resources': {
                        'VCPU': 1, 'MEMORY_MB': 512}}},
                    'project_id': 'p', 'user_id': 'u',
                    'consumer_generation': None,
                    'consumer_type': 'INSTANCE'})
                latencies.append(time.monotonic() - begin)
                # Two clients claiming on one provider at once: one may
                # lose the generation race; it counts as served.
                if resp.status_code != 409:
                    resp.raise_for_status()
        return latencies

    with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
        latencies = sorted(x for r in pool.map(client, range(args.clients))
                           for x in r)
    print('%d requests in %d s: %.1f requests/s; latency median %.1f ms, '
          'p90 %.1f ms, p99 %.1f ms' % (
              len(latencies), args.seconds, len(latencies) / args.seconds,
              statistics.median(latencies) * 1000,
              latencies[int(len(latencies) * 0.9)] * 1000,
              latencies[int(len(latencies) * 0.99)] * 1000))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('mode', choices=('slow', 'idle', 'speed'))
    parser.add_argument('--checkout', default=HERE)
    parser.add_argument('--step', type=int, default=3)
    parser.add_argument('--max', type=int, default=300)
    parser.add_argument('--probes', type=int, default=3)
    parser.add_argument('--count', type=int, default=3000,
                        help='idle: connections to open')
    parser.add_argument('--sources', type=int, default=1,
                        help='idle: loopback addresses they come from')
    parser.add_argument('--clients', type=int, default=4)
    parser.add_argument('--seconds', type=int, default=20)
    parser.add_argument('--database-url',
                        help='an empty database (default: a new SQLite '
                             'file)')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix='resobj-slow-') as workdir:
        proc, port, url = start(os.path.abspath(args.checkout), workdir,
                                args.database_url)
        try:
            if args.mode == 'slow':
                run_slow(url, port, args)
            elif args.mode == 'idle':
                run_idle(url, port, args)
            else:
                run_speed(url, args)
        finally:
            proc.terminate()
            proc.wait(60)


if __name__ == '__main__':
    main()
