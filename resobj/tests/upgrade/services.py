"""The services of a mixed-version cloud, each a real process of its release.

``Cloud`` holds one scenario's database (cloud.CloudDatabase), its own
RabbitMQ topics, and starts ``resobj-conductor``, ``resobj-api`` and
``resobj-compute`` processes of either release: today's (N) from this
tree, or the N-1 release's from the baseline commit
(resobj.tests.upgrade.n_minus_1). A compute host has no database access
(``[conductor] use_local = false``), as the upgrade guide deploys it.
The test process plays the scheduler: the helpers here give it today's
objects through the conductors and today's compute RPC client.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import fixtures
from oslo_utils import uuidutils
import requests

from resobj.compute import rpcapi as compute_rpcapi
from resobj.conductor import manager as conductor_manager
from resobj import objects
from resobj.tests import backends
from resobj.tests import base as test_base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests import service_process
from resobj.tests.upgrade import cloud
from resobj.tests.upgrade import n_minus_1

# The conductor's debug line for each object it backports for a caller.
BACKPORTED = re.compile(
    re.escape(conductor_manager.BACKPORT_LOG).replace('%s', r'\S+'))
# Callers of the conductors (compute hosts, clients). An N-1 conductor
# stopped for its upgrade can leave a call it had taken from the queue but
# not started unanswered (today's hands it back: rpc.stop_server); the
# caller then waits out its timeout and sends it again, as the upgrade
# guide describes: a keyed call (N's conductor RPC 1.1) after TRY_TIMEOUT
# ([conductor] call_timeout), until CALL_TIMEOUT ([DEFAULT]
# rpc_response_timeout) has passed; an unkeyed one (1.0, and N-1's) after
# CALL_TIMEOUT, CALL_RETRIES more times. Short, so that such a call costs
# the run little.
CALL_TIMEOUT = 10
TRY_TIMEOUT = 4
CALL_RETRIES = 2
# The fake driver's node, on every compute host.
NODE = {'vcpus': 16, 'memory_mb': 16384, 'local_gb': 400}


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class ApiProcess(fixtures.Fixture):
    """``resobj-api`` of one release on the cloud's database."""

    def __init__(self, conf_files, old=False):
        super().__init__()
        self.conf_files = conf_files
        self.old = old

    def _setUp(self):
        self.port = _free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.output = tempfile.TemporaryFile()
        self.addCleanup(self.output.close)
        args = ['-m', 'resobj.cmd.api', '--port', str(self.port),
                '--workers', '1']
        for path in self.conf_files:
            args += ['--config-file', path]
        if self.old:
            command, env, cwd = (n_minus_1.command(*args),
                                 n_minus_1.environ(), n_minus_1.tree())
        else:
            command, env, cwd = [sys.executable] + args, None, None
        self.process = subprocess.Popen(
            command, stdout=self.output, stderr=subprocess.STDOUT,
            start_new_session=True, env=env, cwd=cwd)
        self.addCleanup(self.stop)
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None or \
                    time.monotonic() > deadline:
                raise RuntimeError('resobj-api did not start:\n%s'
                                   % self.log())
            try:
                requests.get(self.url + '/', timeout=5)
                return
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.1)

    def get(self, path):
        response = requests.get(self.url + path, timeout=30, headers={
            'x-auth-token': 'admin', 'openstack-api-version':
            'placement latest'})
        response.raise_for_status()
        return response.json()

    def log(self):
        self.output.seek(0)
        return self.output.read().decode('utf-8', 'replace')

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def cloud_for(test):
    """A Cloud of ``test`` on PostgreSQL and RabbitMQ, the N-1 tree at hand.

    Skips ``test`` without them (each with its reason).
    """
    backends.require('rabbitmq')
    backend = backends.provisioning_backend('postgresql')
    n_minus_1.tree()
    return test.useFixture(Cloud(backend))


class ConductorTestCase(test_base.TestCase):
    """A test on a Cloud at today's schema with today's conductor."""

    # Named so that CI counts it as a PostgreSQL test, which must run.
    scenarios = [('postgresql', {})]

    def setUp(self):
        super().setUp()
        self.cloud = cloud_for(self)
        self.cloud.sync(self)
        self.cloud.start_conductor()


class Cloud(fixtures.Fixture):
    """A database, topics of its own, and services started on demand."""

    def __init__(self, backend):
        super().__init__()
        self.backend = backend

    def _setUp(self):
        suffix = uuidutils.generate_uuid()
        self.conductor_topic = 'resobj-upgrade-conductor-' + suffix
        self.compute_topic = 'resobj-upgrade-compute-' + suffix
        topics = ('[conductor]\ntopic = %s\n[compute]\ntopic = %s\n'
                  % (self.conductor_topic, self.compute_topic))
        self.db = self.useFixture(cloud.CloudDatabase(
            self.backend, extra_conf=topics))
        self.topics = topics
        # Every conductor process started, stopped ones included (their
        # logs count), and the running one of each host.
        self.conductors, self.conductor_of, self.computes = [], {}, {}
        self.api = None
        self.all_computes = []

    def manage(self, *args, old=False):
        return self.db.command('resobj.cmd.manage', *args, old=old)

    def sync(self, test, old=False):
        """``resobj-manage db sync`` of either release; fails ``test``."""
        synced = self.manage('db', 'sync', old=old)
        test.assertEqual(0, synced.returncode, synced.stderr)

    def status(self, old=False, conf_files=None):
        return self.db.command('resobj.cmd.status', 'upgrade', 'check',
                               '--json', old=old, conf_files=conf_files)

    def _service(self, module, conf_files, old, graceful=False,
                 wait=True):
        if old:
            return n_minus_1.service(module, *conf_files, graceful=graceful,
                                     wait=wait)
        return service_process.ServiceProcess(module, *conf_files,
                                              graceful=graceful, wait=wait)

    def start_conductor(self, host='conductor-0', old=False,
                        extra_files=(), wait=True):
        """resobj-conductor on ``host`` (replacing a running one).

        Debug logs on, to count its backports. ``wait=False``: the caller
        calls the process's wait_ready().
        """
        if host in self.conductor_of:
            self.conductor_of[host].stop()
        path = self.db.write('%s.conf' % host,
                             '[DEFAULT]\nhost = %s\ndebug = true\n' % host)
        process = self.useFixture(self._service(
            'resobj.cmd.conductor', [self.db.conf_file, path] +
            list(extra_files), old, wait=wait))
        self.conductors.append(process)
        self.conductor_of[host] = process
        return process

    def compute_conf(self, host, old=False):
        """A compute host's only configuration file: no [database].

        ``old``: for N-1 code, which refuses options it does not know
        (``[conductor] call_timeout``, new at N).
        """
        tries = '' if old else 'call_timeout = %d\n' % TRY_TIMEOUT
        return self.db.write('%s.conf' % host, (
            '[DEFAULT]\nhost = %s\ntransport_url = %s\n'
            'rpc_response_timeout = %d\n'
            '[conductor]\nuse_local = false\ntopic = %s\n'
            'call_retries = %d\n%s'
            '[compute]\ntopic = %s\naudit_interval = 1\n'
            'reserved_host_memory_mb = 0\n'
            '[fake_driver]\nvcpus = %d\nmemory_mb = %d\nlocal_gb = %d\n'
            % (host, backends.transport_url(), CALL_TIMEOUT,
               self.conductor_topic, CALL_RETRIES, tries,
               self.compute_topic, NODE['vcpus'], NODE['memory_mb'],
               NODE['local_gb'])))

    def start_computes(self, hosts, old=False, extra_files=()):
        """resobj-compute for each of ``hosts`` (replacing running ones).

        Started side by side; returns once all of them serve.
        """
        for host in hosts:
            if host in self.computes:
                self.computes[host].stop()
        started = []
        for host in hosts:
            process = self.useFixture(self._service(
                'resobj.cmd.compute', [self.compute_conf(host, old)] +
                list(extra_files), old, graceful=True, wait=False))
            self.computes[host] = process
            self.all_computes.append(process)
            started.append(process)
        for process in started:
            process.wait_ready()

    def start_compute(self, host, old=False, extra_files=()):
        """resobj-compute for ``host`` (replacing a running one)."""
        self.start_computes([host], old=old, extra_files=extra_files)
        return self.computes[host]

    def start_api(self, old=False, extra_files=()):
        """resobj-api (replacing a running one)."""
        if self.api is not None:
            self.api.stop()
        self.api = self.useFixture(ApiProcess(
            [self.db.conf_file] + list(extra_files), old=old))
        return self.api

    def backports(self):
        """How many objects the conductors backported for their callers."""
        return sum(len(BACKPORTED.findall(p.log())) for p in self.conductors)

    def assert_backports_and_no_failures(self, test):
        """Backports counted for the N-1 side; no compute logged a failure.

        None while both releases agree on every object version, some as
        soon as they differ.
        """
        old_manifest = n_minus_1.manifest()
        differ = any(
            old_manifest.get(name) != classes[0].VERSION
            for name, classes in objects.base.ResobjObjectRegistry
            .obj_classes().items() if name in old_manifest)
        if differ:
            test.assertGreater(self.backports(), 0)
        else:
            test.assertEqual(0, self.backports())
        for process in self.all_computes:
            test.assertNotIn('Traceback', process.log())

    def audited_since(self, hosts, since, timeout=30):
        """Wait until every host in ``hosts`` reported after ``since``."""
        deadline = time.monotonic() + timeout
        while True:
            seen = {row['host']: row['last_seen_up'] for row in self.db.rows(
                'SELECT host, last_seen_up FROM services WHERE deleted = 0')}
            if all(seen.get(h) is not None and
                   (since is None or seen[h] > since) for h in hosts):
                return max(seen[h] for h in hosts)
            if time.monotonic() > deadline:
                raise AssertionError('no audit of %s since %s: %s'
                                     % (hosts, since, seen))
            time.sleep(0.2)

    def last_seen(self):
        return self.db.scalar('SELECT max(last_seen_up) FROM services '
                              'WHERE deleted = 0')


class Scheduler(fixtures.Fixture):
    """Today's objects (through the conductors) and compute RPC client."""

    def __init__(self, the_cloud, levels=None):
        super().__init__()
        self.cloud = the_cloud
        # [upgrade_levels] of this client, as the procedure's step sets
        # them on every service.
        self.levels = levels or {}

    def _setUp(self):
        client = self.useFixture(resobj_fixtures.ConductorClient(
            backends.transport_url(), self.cloud.conductor_topic,
            CALL_TIMEOUT, call_retries=CALL_RETRIES,
            call_timeout=TRY_TIMEOUT, levels=self.levels))
        client.conf_fixture.config(group='compute',
                                   topic=self.cloud.compute_topic)
        self.conf = client.conf
        self.transport = client.transport
        self.context = client.context
        self.computes = compute_rpcapi.ComputeAPI(self.conf, self.transport,
                                                  self.context)

    def flavor(self, name, vcpus, memory_mb, root_gb):
        flavor = objects.Flavor(self.context, flavorid=name, name=name,
                                vcpus=vcpus, memory_mb=memory_mb,
                                root_gb=root_gb, ephemeral_gb=0, swap=0)
        flavor.create()
        return flavor

    def boot(self, flavor, host):
        instance = objects.Instance(
            self.context, uuid=uuidutils.generate_uuid(),
            project_id='project-u', user_id='user-u', vm_state='building',
            vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
            root_gb=flavor.root_gb, ephemeral_gb=0, flavor=flavor)
        instance.create()
        return self.computes.build_instance(self.context, host, instance,
                                            host)

    def resize(self, instance, flavor, dest, confirm=True):
        """Resize ``instance`` to ``dest``; confirm (or revert) it."""
        source = instance.host
        migration = self.computes.prep_resize(self.context, dest, instance,
                                              flavor, dest)
        instance = objects.Instance.get_by_uuid(self.context, instance.uuid)
        if confirm:
            self.computes.confirm_resize(self.context, source, instance,
                                         migration)
        else:
            self.computes.revert_resize(self.context, dest, instance,
                                        migration)
        return objects.Instance.get_by_uuid(self.context, instance.uuid)
