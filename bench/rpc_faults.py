"""Claims through a compute host while conductors restart or the broker goes.

Starts, on a new PostgreSQL database and topics of their own, two
``resobj-conductor`` processes and one ``resobj-compute`` without a
database (``[conductor] use_local = false``), every option at its
default. Client threads in this process play the scheduler: each builds
one new instance after another on the compute host (``build_instance``
over the compute RPC API; the compute's tracker claims through the
conductors). Then one fault:

* ``graceful``: ``--restarts`` times, SIGTERM one conductor (taking
  turns), wait for it to exit, start it again;
* ``broker``: every service and the clients reach RabbitMQ through the
  test suite's TCP proxy (``resobj/tests/tcp_proxy.py``), which is cut
  for ``--seconds`` and restored. The shared broker itself is never
  touched.

Prints the calls per outcome, the builds whose caller got an error but
that were carried out, instances claimed more than once, the longest
call, and how soon claims completed again after each fault.

    python bench/rpc_faults.py graceful --restarts 8
    python bench/rpc_faults.py broker --seconds 20

``--code DIR`` runs the resobj of another checkout, services and client
alike (for a before/after comparison on one machine; its dependencies
must be the same).
"""

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
TRANSPORT_URL = os.environ.get('RESOBJ_TEST_TRANSPORT_URL',
                               'rabbit://guest:guest@127.0.0.1:5672/')
# The start line a service prints once it serves (its log says 'serving
# topic' too, without the colon).
READY = '): serving topic'


class Service:
    """One resobj service process of ``code``, its log in ``tmp``."""

    def __init__(self, name, module, conf_files, code, tmp):
        self.name = name
        self.module = module
        self.conf_files = conf_files
        self.code = code
        self.log_path = os.path.join(tmp, '%s.log' % name)
        self.process = None
        self.starts = 0

    def start(self):
        self.starts += 1
        env = dict(os.environ, PYTHONPATH=self.code)
        command = [sys.executable, '-m', self.module]
        for path in self.conf_files:
            command += ['--config-file', path]
        log = open(self.log_path, 'a')
        self.process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env,
            cwd=self.code, start_new_session=True)
        deadline = time.monotonic() + 60
        while self.log().count(READY) < self.starts:
            if self.process.poll() is not None or \
                    time.monotonic() > deadline:
                raise SystemExit('%s did not start; see %s'
                                 % (self.name, self.log_path))
            time.sleep(0.1)

    def log(self):
        with open(self.log_path, errors='replace') as f:
            return f.read()

    def terminate(self, timeout=120):
        """SIGTERM; seconds until it exited (SIGKILL after ``timeout``)."""
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('fault', choices=('graceful', 'broker'))
    parser.add_argument('--restarts', type=int, default=8,
                        help='graceful: conductor restarts (default 8)')
    parser.add_argument('--seconds', type=float, default=20,
                        help='broker: how long the link is cut (default 20)')
    parser.add_argument('--clients', type=int, default=4,
                        help='client threads building (default 4)')
    parser.add_argument('--code', help='checkout whose resobj to run')
    parser.add_argument('--debug', action='store_true',
                        help='the services log at debug level')
    args = parser.parse_args()
    code = os.path.abspath(args.code or HERE)
    # The client side is the same release as the services.
    sys.path.insert(0, code)

    from oslo_db.sqlalchemy import provision
    from oslo_utils import uuidutils

    backend = provision.Backend.backend_for_database_type('postgresql')
    ident = 'rpcfaults_' + uuidutils.generate_uuid(dashed=False)[:10]
    backend.create_named_database(ident)
    tmp = tempfile.mkdtemp(prefix='resobj-rpc-faults-')
    services = []
    proxy = None
    try:
        db_url = backend.provisioned_database_url(ident).render_as_string(
            hide_password=False)
        transport_url = TRANSPORT_URL
        if args.fault == 'broker':
            from resobj.tests import tcp_proxy
            proxy = tcp_proxy.TCPProxy('127.0.0.1', 5672)
            transport_url = TRANSPORT_URL.replace(
                '127.0.0.1:5672', '127.0.0.1:%d' % proxy.port)
        suffix = uuidutils.generate_uuid()
        debug = ('[DEFAULT]\ndebug = true\ndefault_log_levels = '
                 'oslo.messaging=DEBUG,oslo_messaging=DEBUG,amqp=DEBUG\n'
                 if args.debug else '')
        topics = debug + (
            '[conductor]\ntopic = rpcfaults-conductor-%s\n'
            '[compute]\ntopic = rpcfaults-compute-%s\n' % (suffix, suffix))

        def write(name, text):
            path = os.path.join(tmp, name)
            with open(path, 'w') as f:
                f.write(text)
            return path

        conductor_conf = write('conductor.conf', (
            '[DEFAULT]\ntransport_url = %s\n[database]\nconnection = %s\n'
            % (transport_url, db_url)) + topics)
        sync = subprocess.run(
            [sys.executable, '-m', 'resobj.cmd.manage', '--config-file',
             conductor_conf, 'db', 'sync'], capture_output=True, text=True,
            env=dict(os.environ, PYTHONPATH=code), cwd=code)
        if sync.returncode:
            raise SystemExit('db sync failed: %s' % sync.stderr)
        for i in range(2):
            host = write('conductor-%d.conf' % i,
                         '[DEFAULT]\nhost = conductor-%d\n' % i)
            services.append(Service('conductor-%d' % i,
                                    'resobj.cmd.conductor',
                                    [conductor_conf, host], code, tmp))
        compute_conf = write('compute.conf', (
            '[DEFAULT]\nhost = cmp1\ntransport_url = %s\n' % transport_url)
            + topics.replace('[conductor]\n',
                             '[conductor]\nuse_local = false\n') +
            '[fake_driver]\nvcpus = 100000\nmemory_mb = 100000000\n'
            'local_gb = 10000000\n')
        client_conf = write('client.conf', (
            '[DEFAULT]\ntransport_url = %s\n[database]\nconnection = %s\n'
            % (transport_url, db_url)) + topics)
        for service in services:
            service.start()
        compute = Service('cmp1', 'resobj.cmd.compute', [compute_conf],
                          code, tmp)
        services.append(compute)
        compute.start()
        _run(args, client_conf, services, proxy, db_url)
        stopped_in = compute.terminate()
        print('  compute stopped %.1f s after SIGTERM' % stopped_in)
    finally:
        for service in services:
            if service.process is not None and \
                    service.process.poll() is None:
                os.killpg(service.process.pid, signal.SIGKILL)
                service.process.wait()
        if proxy is not None:
            proxy.close()
        backend.drop_named_database(ident)
    print('  logs: %s' % tmp)


def _client(conf_file):
    """(conf, context, compute RPC API, flavor) of the scheduler here."""
    from oslo_config import cfg

    from resobj.cmd import options
    from resobj.compute import rpcapi as compute_rpcapi
    from resobj import context as resobj_context
    from resobj.db import facade
    from resobj import objects
    from resobj import rpc

    conf = cfg.ConfigOpts()
    options.register_all(conf)
    conf(['--config-file', conf_file], project='resobj')
    objects.register_all()
    objects.configure(conf)
    facade.configure(conf)
    context = resobj_context.get_admin_context()
    flavor = objects.Flavor(context, flavorid='tiny', name='tiny', vcpus=1,
                            memory_mb=1, root_gb=1, ephemeral_gb=0, swap=0)
    flavor.create()
    computes = compute_rpcapi.ComputeAPI(conf, rpc.get_transport(conf),
                                         context)
    return context, computes, flavor


def _run(args, conf_file, services, proxy, db_url):
    from oslo_utils import uuidutils

    from resobj import objects

    context, computes, flavor = _client(conf_file)
    stop = threading.Event()
    calls = []

    def build():
        while not stop.is_set():
            instance = objects.Instance(
                context, uuid=uuidutils.generate_uuid(), project_id='p',
                user_id='u', vm_state='building', vcpus=1, memory_mb=1,
                root_gb=1, ephemeral_gb=0, flavor=flavor)
            instance.create()
            started = time.monotonic()
            try:
                computes.build_instance(context, 'cmp1', instance, 'cmp1')
                outcome = 'ok'
            except Exception as exc:  # noqa: B902 - counted by class
                outcome = type(exc).__name__
            calls.append((started, time.monotonic(), outcome,
                          instance.uuid))
            if outcome != 'ok':
                time.sleep(0.2)

    probes = []

    def probe():
        # A new build every second, whatever the others wait for: what a
        # caller meets during the fault.
        while not stop.is_set():
            started = time.monotonic()
            instance = objects.Instance(
                context, uuid=uuidutils.generate_uuid(), project_id='p',
                user_id='u', vm_state='building', vcpus=1, memory_mb=1,
                root_gb=1, ephemeral_gb=0, flavor=flavor)
            instance.create()
            try:
                computes.build_instance(context, 'cmp1', instance, 'cmp1')
                outcome = 'ok'
            except Exception as exc:  # noqa: B902 - counted by class
                outcome = type(exc).__name__
            probes.append((started, time.monotonic(), outcome))
            calls.append((started, time.monotonic(), outcome,
                          instance.uuid))
            stop.wait(max(0, 1 - (time.monotonic() - started)))

    threads = [threading.Thread(target=build, daemon=True)
               for _ in range(args.clients)]
    threads.append(threading.Thread(target=probe, daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(3)
    faults = []
    if args.fault == 'graceful':
        conductors = services[:2]
        for i in range(args.restarts):
            conductor = conductors[i % 2]
            at = time.monotonic()
            stopped_in = conductor.terminate()
            conductor.start()
            faults.append((at, stopped_in))
            time.sleep(1)
    else:
        cut_at = time.monotonic()
        proxy.cut()
        time.sleep(args.seconds)
        proxy.restore()
        faults.append((time.monotonic(), args.seconds))
    time.sleep(20)
    stop.set()
    for thread in threads:
        thread.join(200)
    end_at = time.monotonic()
    _report(args, calls, faults, end_at, db_url)
    if args.fault == 'broker':
        during = [(end - start, outcome) for start, end, outcome in probes
                  if cut_at <= start < faults[0][0]]
        print('  builds sent during the cut (one a second): %d, outcomes %s, '
              'longest %.1f s' % (
                  len(during), dict(collections.Counter(o for _, o in during)),
                  max((d for d, _ in during), default=0)))


def _report(args, calls, faults, end_at, db_url):
    import sqlalchemy as sa

    print('%s: %s, %d clients, code %s' % (
        args.fault, '%d conductor restarts' % args.restarts
        if args.fault == 'graceful' else 'broker link cut for %.0f s'
        % args.seconds, args.clients, args.code or 'this checkout'))
    outcomes = collections.Counter(outcome for _, _, outcome, _ in calls)
    print('  calls: %d, outcomes %s' % (len(calls), dict(outcomes)))
    failed = {uuid for _, _, outcome, uuid in calls if outcome != 'ok'}
    engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        claimed = dict(conn.execute(sa.text(
            "SELECT c.uuid, sum(a.used) FROM allocations a JOIN consumers "
            "c ON c.id = a.consumer_id JOIN resource_classes rc ON rc.id = "
            "a.resource_class_id WHERE rc.name = 'VCPU' GROUP BY c.uuid"))
            .all())
        used = conn.execute(sa.text(
            "SELECT i.used FROM inventories i JOIN resource_classes rc ON "
            "rc.id = i.resource_class_id WHERE rc.name = 'VCPU'")).scalar()
    engine.dispose()
    print('  failed calls carried out anyway (outcome unknown to the '
          'caller): %d of %d' % (len(failed & set(claimed)), len(failed)))
    print('  instances claimed more than once: %d; VCPU used %s for %d '
          'claimed instances' % (sum(1 for v in claimed.values() if v > 1),
                                 used, len(claimed)))
    slowest = max(calls, key=lambda c: c[1] - c[0])
    print('  longest call: %.2f s (%s)' % (slowest[1] - slowest[0],
                                           slowest[2]))
    for i, (at, seconds) in enumerate(faults):
        nxt = faults[i + 1][0] if i + 1 < len(faults) else end_at
        # The first call to complete after this fault (or its end).
        done = min((end for start, end, outcome, _ in calls
                    if outcome == 'ok' and end > at), default=None)
        gap = max((b - a for a, b in _gaps(calls, at, nxt)), default=0)
        if args.fault == 'graceful':
            print('  restart %d: stopped in %.1f s; first completed claim '
                  '%s after SIGTERM; longest gap between completions %.1f s'
                  % (i + 1, seconds, '%.2f s' % (done - at) if done
                     else 'never', gap))
        else:
            print('  first completed claim %s after the link returned; '
                  'longest gap between completions after it %.1f s'
                  % ('%.2f s' % (done - at) if done else 'never', gap))


def _gaps(calls, since, until):
    ends = sorted(end for _, end, outcome, _ in calls
                  if outcome == 'ok' and since <= end <= until)
    points = [since] + ends + [until]
    return zip(points, points[1:])


if __name__ == '__main__':
    main()
