r"""A conductor SIGKILLed under claims and reports: lost, doubled, stalled.

Two ``resobj-conductor`` processes serve one topic on one database. This
process plays DB-less compute nodes (``[conductor] use_local = false``):
``--threads`` threads each create instances and claim them on a host of
their own, one more sends Service heartbeats, all without pause. After
``--kill-after`` seconds the first conductor is SIGKILLed (with whatever
calls it holds); ``--restart-after`` seconds later a new one starts.
After ``--duration`` seconds from the kill the callers stop, and the
database is read back:

* lost calls: calls whose caller got an error (ConductorTimeout...);
* claims carried out without their caller knowing: instances with
  allocations whose claim raised;
* doubled heartbeats: ``report_count`` beyond the heartbeats answered
  (a heartbeat carried out twice), or short of it (one lost after it
  was answered -- never expected);
* how long after the kill the slowest caller got its first answer
  again, and the longest a single call took.

    createdb resobj_bench_kill
    python bench/conductor_kill.py \
        --url postgresql+psycopg://USER:PW@127.0.0.1/resobj_bench_kill \
        --transport-url rabbit://guest:guest@127.0.0.1:5672/

The conductors run the code this script imports (PYTHONPATH), so an
export of another commit measures that commit. Options the measured
code lacks (``[conductor] call_timeout`` before it existed) are left
out, and said so.
"""

import argparse
import os
import sys
import tempfile
import threading
import time

import benchdb

from oslo_config import cfg
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.compute import fake_driver
from resobj.compute import report_local
from resobj.compute import tracker as rt
from resobj.conductor import api as conductor_api
from resobj import conf as resobj_conf
from resobj import context
from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj.db import facade
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj import rpc
from resobj.tests import service_process


class Conductors:
    """resobj-conductor processes on one database and topic."""

    def __init__(self, url, transport_url, topic):
        self.dir = tempfile.mkdtemp(prefix='resobj-bench-kill-')
        self.conf_file = os.path.join(self.dir, 'conductor.conf')
        with open(self.conf_file, 'w') as f:
            f.write('[DEFAULT]\ntransport_url = %s\n[database]\n'
                    'connection = %s\n[conductor]\ntopic = %s\n'
                    % (transport_url, url, topic))
        self.processes = []

    def start(self):
        host_file = os.path.join(self.dir, 'host-%d.conf'
                                 % len(self.processes))
        with open(host_file, 'w') as f:
            f.write('[DEFAULT]\nhost = bench-conductor-%d\n'
                    % len(self.processes))
        process = service_process.ServiceProcess(
            'resobj.cmd.conductor', self.conf_file, host_file,
            graceful=False)
        try:
            process.setUp()
        except RuntimeError as exc:
            self.stop()
            sys.exit(str(exc))
        self.processes.append(process)
        return process

    def stop(self):
        for process in self.processes:
            process.cleanUp()


class Caller(threading.Thread):
    """Calls ``operation`` until told to stop; times each call."""

    def __init__(self, operation):
        super().__init__(daemon=True)
        self.operation = operation
        self.stopping = threading.Event()
        # (started, ended, error or None, what the call was about)
        self.calls = []

    def run(self):
        while not self.stopping.is_set():
            started = time.monotonic()
            about = error = None
            try:
                about = self.operation()
            except Exception as exc:  # noqa: B902 - counted, reported
                error = exc
                about = getattr(exc, 'about', None)
            self.calls.append((started, time.monotonic(), error, about))


def claimer(ctx, name):
    objects.Service(ctx, host=name, binary=cn_obj.COMPUTE_BINARY).create()
    tracker = rt.ResourceTracker(
        name, name, fake_driver.FakeDriver(
            name, vcpus=100000, memory_mb=10 ** 8, local_gb=10 ** 6),
        report_local.LocalReportClient(ctx))
    tracker.update_available_resource(ctx)
    flavor = objects.Flavor(ctx, flavorid=name, name=name, vcpus=1,
                            memory_mb=64, root_gb=1, ephemeral_gb=0,
                            swap=0)
    flavor.create()

    def claim():
        uuid = uuidutils.generate_uuid()
        try:
            instance = objects.Instance(
                ctx, uuid=uuid, project_id='p', user_id='u',
                vm_state='building', vcpus=1, memory_mb=64, root_gb=1,
                ephemeral_gb=0, flavor=flavor)
            instance.create()
            tracker.instance_claim(ctx, instance)
        except Exception as exc:  # noqa: B902 - the caller counts it
            exc.about = uuid
            raise
        return uuid
    return claim


def client_conf(transport_url, topic, rpc_timeout, call_timeout):
    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    rpc.register_opts(conf)
    conf([], default_config_files=[], default_config_dirs=[])
    conf.set_override('transport_url', transport_url)
    conf.set_override('rpc_response_timeout', rpc_timeout)
    conf.set_override('topic', topic, group='conductor')
    conf.set_override('use_local', False, group='conductor')
    if 'call_timeout' in conf.conductor:
        conf.set_override('call_timeout', call_timeout, group='conductor')
    else:
        print('this code has no [conductor] call_timeout: calls wait '
              '[DEFAULT] rpc_response_timeout, [conductor] call_retries '
              '= %d' % conf.conductor.call_retries)
    return conf


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True,
                        help='database URL (PostgreSQL or MariaDB)')
    parser.add_argument('--transport-url',
                        default='rabbit://guest:guest@127.0.0.1:5672/')
    parser.add_argument('--threads', type=int, default=2,
                        help='claiming threads, one host each')
    parser.add_argument('--kill-after', type=float, default=3.0)
    parser.add_argument('--restart-after', type=float, default=5.0)
    parser.add_argument('--duration', type=float, default=20.0,
                        help='seconds the callers go on after the kill '
                             '(a call in progress then still ends)')
    parser.add_argument('--rpc-timeout', type=int, default=60,
                        help='[DEFAULT] rpc_response_timeout of the node')
    parser.add_argument('--call-timeout', type=int, default=10,
                        help='[conductor] call_timeout of the node, where '
                             'the code has it')
    args = parser.parse_args()

    benchdb.configure(args.url)
    ctx = context.get_admin_context()
    rc_db.ensure_sync(ctx)
    trait_db.ensure_sync(ctx)
    objects.register_all()
    engine = facade.get_engine()
    topic = 'resobj-bench-kill-' + uuidutils.generate_uuid()
    conductors = Conductors(args.url, args.transport_url, topic)
    conf = client_conf(args.transport_url, topic, args.rpc_timeout,
                       args.call_timeout)
    transport = rpc.get_transport(conf)
    try:
        conductors.start()
        conductors.start()
        undo = conductor_api.use_conductor(conf, transport)
        run = uuidutils.generate_uuid()[:8]
        claimers = [Caller(claimer(ctx, 'bench-kill-%s-%d' % (run, n)))
                    for n in range(args.threads)]
        service = objects.Service.register(
            ctx, 'bench-kill-%s-reporter' % run, cn_obj.COMPUTE_BINARY)
        reports_before = service.report_count

        def heartbeat():
            service.heartbeat()
        reporter = Caller(heartbeat)
        callers = claimers + [reporter]
        for caller in callers:
            caller.start()
        time.sleep(args.kill_after)
        killed_at = time.monotonic()
        conductors.processes[0].kill()
        time.sleep(args.restart_after)
        conductors.start()
        time.sleep(max(0, args.duration - args.restart_after))
        for caller in callers:
            caller.stopping.set()
        for caller in callers:
            caller.join()
        undo()
    finally:
        conductors.stop()
        transport.cleanup()

    facade.forget_inherited_connections()
    claims = [call for caller in claimers for call in caller.calls]
    failed = [call for call in claims if call[2] is not None]
    with engine.connect() as conn:
        allocated = {row[0] for row in conn.execute(sa.text(
            'SELECT DISTINCT c.uuid FROM consumers c JOIN allocations a '
            'ON a.consumer_id = c.id'))}
        report_count = conn.execute(sa.text(
            'SELECT report_count FROM services WHERE host = :host'),
            {'host': 'bench-kill-%s-reporter' % run}).scalar()
    done_unknown = [call for call in failed if call[3] in allocated]
    heartbeats_ok = sum(1 for call in reporter.calls if call[2] is None)
    heartbeats_failed = len(reporter.calls) - heartbeats_ok
    # Per caller: from the kill to its first call answered after it.
    back = []
    for caller in callers:
        ends = [call[1] for call in caller.calls
                if call[2] is None and call[1] > killed_at]
        back.append(min(ends) - killed_at if ends else float('inf'))
    longest = max(call[1] - call[0] for caller in callers
                  for call in caller.calls)
    errors = sorted({type(call[2]).__name__ for caller in callers
                     for call in caller.calls if call[2] is not None})
    print('claims answered / failed:        %d / %d'
          % (len(claims) - len(failed), len(failed)))
    print('failed claims carried out:       %d' % len(done_unknown))
    print('heartbeats answered / failed:    %d / %d'
          % (heartbeats_ok, heartbeats_failed))
    print('heartbeats counted - answered:   %+d'
          % (report_count - reports_before - heartbeats_ok))
    if max(back) == float('inf'):
        print('slowest caller answered again:   not before the end')
    else:
        print('slowest caller answered again:   %.1f s after the kill'
              % max(back))
    print('longest call:                    %.1f s' % longest)
    print('errors:                          %s'
          % (', '.join(errors) or 'none'))


if __name__ == '__main__':
    main()
