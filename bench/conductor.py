r"""Tracker claims and audits on the local database and through a conductor.

One process, one database, two paths taking turns in rounds:

* local: the tracker's objects call the database themselves;
* conductor: the same tracker code with ``[conductor] use_local =
  false``; every remotable object call crosses RabbitMQ to a
  ``resobj-conductor`` process on the same database and back.

Prints claims per second and audit time for each path, the number of
remotable calls a claim makes, and the latency each call adds.

    createdb resobj_bench
    python bench/conductor.py \
        --url postgresql+psycopg://USER:PW@127.0.0.1/resobj_bench \
        --transport-url rabbit://guest:guest@127.0.0.1:5672/

The database at --url is synced to the current schema; the script adds
its own hosts, flavors and instances.
"""

import argparse
import sys
import tempfile
import time

import benchdb

from oslo_config import cfg
from oslo_utils import uuidutils

from resobj.compute import fake_driver
from resobj.compute import report_local
from resobj.compute import tracker as rt
from resobj.conductor import api as conductor_api
from resobj import conf as resobj_conf
from resobj import context
from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj import rpc
from resobj.tests import service_process


class CountingAPI:
    """The indirection API, counting the calls that cross the broker."""

    def __init__(self, api):
        self.api = api
        self.calls = 0

    def __getattr__(self, name):
        method = getattr(self.api, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return method(*args, **kwargs)
        return counted


def start_conductor(url, transport_url, topic):
    """A resobj-conductor process on ``url``; cleanUp() stops it."""
    conf_file = tempfile.NamedTemporaryFile('w', suffix='.conf',
                                            delete=False)
    conf_file.write('[DEFAULT]\ntransport_url = %s\n[database]\n'
                    'connection = %s\n[conductor]\ntopic = %s\n'
                    % (transport_url, url, topic))
    conf_file.close()
    conductor = service_process.ServiceProcess('resobj.cmd.conductor',
                                               conf_file.name)
    try:
        conductor.setUp()
    except RuntimeError as exc:
        sys.exit(str(exc))
    return conductor


class Node:
    """One compute host with its tracker and a flavor to claim."""

    def __init__(self, ctx, name):
        objects.Service(ctx, host=name, binary=cn_obj.COMPUTE_BINARY).create()
        self.tracker = rt.ResourceTracker(
            name, name, fake_driver.FakeDriver(
                name, vcpus=100000, memory_mb=10 ** 8, local_gb=10 ** 6),
            report_local.LocalReportClient(ctx))
        self.tracker.update_available_resource(ctx)
        self.flavor = objects.Flavor(ctx, flavorid=name, name=name, vcpus=1,
                                     memory_mb=512, root_gb=1,
                                     ephemeral_gb=0, swap=0)
        self.flavor.create()

    def claims(self, ctx, count, counter=None):
        """Seconds for ``count`` claims (the instances exist already).

        ``counter`` (a CountingAPI) counts only the claims' calls.
        """
        instances = []
        for _ in range(count):
            instance = objects.Instance(
                ctx, uuid=uuidutils.generate_uuid(), project_id='p',
                user_id='u', vm_state='building', vcpus=1, memory_mb=512,
                root_gb=1, ephemeral_gb=0, flavor=self.flavor)
            instance.create()
            instances.append(instance)
        if counter is not None:
            counter.calls = 0
        start = time.perf_counter()
        for instance in instances:
            self.tracker.instance_claim(ctx, instance)
        return time.perf_counter() - start

    def audit(self, ctx):
        start = time.perf_counter()
        self.tracker.update_available_resource(ctx)
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True, help='database URL '
                        '(PostgreSQL or MariaDB: the conductor is another '
                        'process)')
    parser.add_argument('--transport-url',
                        default='rabbit://guest:guest@127.0.0.1:5672/')
    parser.add_argument('--claims', type=int, default=200,
                        help='claims per path and round')
    parser.add_argument('--rounds', type=int, default=5)
    args = parser.parse_args()

    benchdb.configure(args.url)
    ctx = context.get_admin_context()
    rc_db.ensure_sync(ctx)
    trait_db.ensure_sync(ctx)
    objects.register_all()
    topic = 'resobj-bench-' + uuidutils.generate_uuid()
    conductor = start_conductor(args.url, args.transport_url, topic)
    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    rpc.register_opts(conf)
    conf([], default_config_files=[], default_config_dirs=[])
    conf.set_override('transport_url', args.transport_url)
    conf.set_override('topic', topic, group='conductor')
    transport = rpc.get_transport(conf)

    run = uuidutils.generate_uuid()[:8]
    local_node = Node(ctx, 'bench-local-' + run)
    undo = conductor_api.use_conductor(conf, transport)
    counting = CountingAPI(objects.base.ResobjObject.indirection_api)
    objects.base.ResobjObject.indirection_api = counting
    remote_node = Node(ctx, 'bench-remote-' + run)
    undo()

    times = {'local': [0.0, 0.0], 'conductor': [0.0, 0.0]}
    claim_calls = audit_calls = 0
    try:
        for _ in range(args.rounds):
            times['local'][0] += local_node.claims(ctx, args.claims)
            times['local'][1] += local_node.audit(ctx)
            undo = conductor_api.use_conductor(conf, transport)
            objects.base.ResobjObject.indirection_api = counting
            try:
                times['conductor'][0] += remote_node.claims(
                    ctx, args.claims, counting)
                claim_calls += counting.calls
                counting.calls = 0
                times['conductor'][1] += remote_node.audit(ctx)
                audit_calls += counting.calls
            finally:
                undo()
    finally:
        conductor.cleanUp()
        transport.cleanup()

    total = args.claims * args.rounds
    rates = {path: total / t[0] for path, t in times.items()}
    per_claim_calls = claim_calls / total
    added_ms = 1000.0 * (times['conductor'][0] - times['local'][0]) / \
        claim_calls
    print('backend:                    %s' % args.url.split(':')[0])
    print('claims per path:            %d (%d rounds)' % (total,
                                                          args.rounds))
    print('local claims:               %8.1f claims/s' % rates['local'])
    print('conductor claims:           %8.1f claims/s' % rates['conductor'])
    print('ratio:                      %8.0f %%'
          % (100.0 * rates['conductor'] / rates['local']))
    print('remotable calls per claim:  %8.1f' % per_claim_calls)
    print('added latency per call:     %8.2f ms' % added_ms)
    print('audit, local:               %8.1f ms'
          % (1000.0 * times['local'][1] / args.rounds))
    print('audit, conductor:           %8.1f ms (%d remotable calls)'
          % (1000.0 * times['conductor'][1] / args.rounds,
             audit_calls / args.rounds))


if __name__ == '__main__':
    main()
