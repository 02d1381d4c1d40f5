"""What a service logs while its database or its broker is away.

Real outages, through TCP proxies the tests own and cut (never the
shared servers): each failure is one WARNING line that says what failed
and what the service does, with no traceback and no ERROR; each line
names the request it is about, and a line about no request names none
(never a request served before, nor another service's).

* resobj-api's application, in this process, on PostgreSQL or MariaDB:
  claims answered 503 while the link is cut, and the API's heartbeat;
* a resobj-conductor process, whose database link and then broker link
  are cut, called by this process as a compute node would.
"""

import functools
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

import fixtures
from oslo_log import formatters
from oslo_utils import uuidutils
import testscenarios
import webob

from resobj.compute import service as compute_service
from resobj import context as resobj_context
from resobj import exception
from resobj import heartbeat
from resobj import objects
from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import backends
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests import service_process
from resobj.tests import tcp_proxy

load_tests = testscenarios.load_tests_apply_scenarios

# A line as the test formats it: level|logger|request id|message, the
# request id '-' for a line about no request.
LINE = re.compile(r'^(?P<level>[A-Z]+)\|(?P<logger>[^|]*)\|'
                  r'(?P<request>[^|]*)\|(?P<message>.*)$')


def _lines(output):
    """(level, logger, request id, message) of each line; all must parse."""
    found = []
    for text in output.splitlines():
        match = LINE.match(text)
        if match is None:
            # A traceback's lines, or anything else out of format.
            found.append(('UNPARSED', '', '', text))
        else:
            found.append(match.groups())
    return found


class TestAPIOutageLogs(base.TestCase):
    scenarios = [('postgresql', {'backend': 'postgresql'}),
                 ('mysql', {'backend': 'mysql'})]

    CLAIMS = 4

    def setUp(self):
        backends.provisioning_backend(self.backend)
        super().setUp()
        _, self.proxy, proxied = tcp_proxy.proxied_database(
            self, self.backend)
        api = self.useFixture(api_fixtures.AppFixture(
            self.backend, url=proxied, options={
                'database': {'connect_timeout': 1, 'statement_timeout': 2},
                None: {
                    'report_interval': 1, 'host': 'outage-host',
                    'logging_context_format_string': (
                        '%(levelname)s|%(name)s|%(request_id)s|'
                        '%(message)s'),
                    'logging_default_format_string': (
                        '%(levelname)s|%(name)s|-|%(message)s')}}))
        self.conf, self.app = api.conf, api.app
        self.rp = uuidutils.generate_uuid()
        resp = self._request('POST', '/resource_providers',
                             {'name': 'rp', 'uuid': self.rp})
        self.assertEqual(200, resp.status_int, resp.text)
        resp = self._request(
            'PUT', '/resource_providers/%s/inventories' % self.rp,
            {'resource_provider_generation': 0,
             'inventories': {'VCPU': {'total': 1000}}})
        self.assertEqual(200, resp.status_int, resp.text)
        # The API process's heartbeat, as each worker runs it.
        self.beat = heartbeat.Heartbeat(self.conf, 'resobj-api')
        self.beat.start()
        self.addCleanup(self.beat.stop)
        # From here on, every line of every logger.
        self.log = self.useFixture(fixtures.FakeLogger(
            name='', format='%(message)s', formatter=functools.partial(
                formatters.ContextFormatter, config=self.conf,
                project='resobj')))

    def _request(self, method, path, body=None):
        req = webob.Request.blank(path, method=method)
        req.headers['x-auth-token'] = 'admin'
        req.headers['openstack-api-version'] = 'placement latest'
        if body is not None:
            req.json_body = body
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def _claims(self):
        """CLAIMS claims at once; [(request id, status, consumer)]."""
        answers = []

        def claim():
            consumer = uuidutils.generate_uuid()
            resp = self._request('PUT', '/allocations/%s' % consumer, {
                'allocations': {self.rp: {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'})
            answers.append((resp.headers['x-openstack-request-id'],
                            resp.status_int, consumer))

        threads = [threading.Thread(target=claim)
                   for _ in range(self.CLAIMS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        return answers

    def _wait_for(self, text, timeout=30):
        deadline = time.monotonic() + timeout
        while text not in self.log.output:
            self.assertLess(time.monotonic(), deadline,
                            '%r never logged:\n%s' % (text, self.log.output))
            time.sleep(0.1)

    def test_a_cut_link_is_one_warning_per_failure(self):
        self.proxy.cut()
        answers = self._claims()
        self._wait_for('could not report itself alive')
        self.proxy.restore()
        self._wait_for('reported itself alive again')
        self.assertEqual({503}, {status for _, status, _ in answers})
        # Claims succeed again (on a loaded machine a claim caught
        # reconnecting may still get a 503, which is logged as any).
        deadline = time.monotonic() + 30
        while not any(status == 204 for _, status, _ in answers):
            self.assertLess(time.monotonic(), deadline, answers)
            answers += self._claims()

        lines = _lines(self.log.output)
        self.assertEqual([], [line for line in lines
                              if line[0] not in ('WARNING', 'INFO')])
        self.assertNotIn('Traceback', self.log.output)
        self.assertEqual({204, 503}, {status for _, status, _ in answers})
        failed = {request: consumer for request, status, consumer in answers
                  if status == 503}
        warnings = [line for line in lines if line[0] == 'WARNING']
        for request, consumer in failed.items():
            about = [line for line in warnings if line[2] == request]
            # One line, naming the request, saying what failed.
            self.assertEqual(1, len(about), warnings)
            self.assertIn('PUT /allocations/%s' % consumer, about[0][3])
            self.assertIn('The database is unavailable', about[0][3])
        # Every other warning is the heartbeat's, which is about no
        # request, and says what it does next.
        others = [line for line in warnings if line[2] not in failed]
        self.assertTrue(others)
        for level, logger, request, message in others:
            self.assertEqual(('resobj.heartbeat', '-'), (logger, request))
            self.assertIn('resobj-api on outage-host could not report '
                          'itself alive: The database is unavailable',
                          message)
            self.assertIn('trying again in 1 s', message)
        # No line names a request but the one it is about.
        known = {request for request, _, _ in answers}
        self.assertEqual(set(), {line[2] for line in lines} - known - {'-'})


class TestConductorOutageLogs(base.TestCase):
    """A resobj-conductor process, its database and broker links cut."""

    # Not a DB scenario run: named so that CI counts it as a PostgreSQL
    # test, which must run, never skip.
    scenarios = [('postgresql', {})]

    def setUp(self):
        super().setUp()
        backends.require('rabbitmq')
        backend = backends.provisioning_backend('postgresql')
        name = 'resobj_outlog_' + uuidutils.generate_uuid(dashed=False)[:10]
        backend.create_named_database(name)
        self.addCleanup(backend.drop_named_database, name)
        url = backend.provisioned_database_url(name)
        self.db_proxy = tcp_proxy.TCPProxy(url.host or '127.0.0.1',
                                           url.port or 5432)
        self.addCleanup(self.db_proxy.close)
        broker = urllib.parse.urlsplit(backends.transport_url())
        self.broker_proxy = tcp_proxy.TCPProxy(broker.hostname,
                                               broker.port or 5672)
        self.addCleanup(self.broker_proxy.close)
        self.topic = 'resobj-test-' + uuidutils.generate_uuid()
        directory = self.useFixture(fixtures.TempDir()).path
        conf_file = os.path.join(directory, 'conductor.conf')
        with open(conf_file, 'w') as f:
            f.write(
                '[DEFAULT]\nhost = outage-conductor\nreport_interval = 1\n'
                'transport_url = %s\n'
                'logging_context_format_string = '
                '%%(levelname)s|%%(name)s|%%(request_id)s|%%(message)s\n'
                'logging_default_format_string = '
                '%%(levelname)s|%%(name)s|-|%%(message)s\n'
                '[database]\nconnection = %s\nconnect_timeout = 1\n'
                'statement_timeout = 2\n[conductor]\ntopic = %s\n'
                % (broker._replace(netloc='%s@127.0.0.1:%d' % (
                    broker.netloc.rpartition('@')[0],
                    self.broker_proxy.port)).geturl(),
                   url.set(host='127.0.0.1', port=self.db_proxy.port)
                   .render_as_string(hide_password=False).replace('%',
                                                                  '%%'),
                   self.topic))
        sync = subprocess.run(
            [sys.executable, '-m', 'resobj.cmd.manage', '--config-file',
             conf_file, 'db', 'sync'], capture_output=True, text=True,
            timeout=120)
        self.assertEqual(0, sync.returncode, sync.stdout + sync.stderr)
        self.conductor = self.useFixture(service_process.ServiceProcess(
            'resobj.cmd.conductor', conf_file, graceful=False))
        # This process: a compute node's side of the calls, on the broker
        # directly.
        self.client = self.useFixture(resobj_fixtures.ConductorClient(
            backends.transport_url(), self.topic, timeout=10))

    def _get(self, request_id):
        """A provider lookup as request ``request_id``; what it raised."""
        ctx = resobj_context.RequestContext(
            request_id=request_id, user_id='compute', project_id='service',
            is_admin=True)
        try:
            objects.ResourceProvider.get_by_uuid(ctx,
                                                 uuidutils.generate_uuid())
        except exception.ResobjException as exc:
            return type(exc).__name__
        return None

    def _wait_for(self, text, timeout=60):
        deadline = time.monotonic() + timeout
        while text not in self.conductor.log():
            self.assertLess(time.monotonic(), deadline,
                            '%r never logged:\n%s'
                            % (text, self.conductor.log()))
            time.sleep(0.1)

    def test_cut_links_are_warnings_naming_their_requests(self):
        # This process is a compute node too: its audit reports through
        # the conductor.
        self.client.conf_fixture.config(host='outage-compute')
        compute = compute_service.ComputeService(self.client.conf,
                                                 self.client.transport)
        compute.audit()
        # A call served normally: this thread of the conductor's pool
        # has served a request before those of the outage.
        self.assertEqual('ResourceProviderNotFound',
                         self._get('req-before-the-outage'))
        self.db_proxy.cut()
        failed = ['req-during-the-outage-%d' % n for n in range(3)]
        for request in failed:
            self.assertEqual('DatabaseUnavailable', self._get(request))
        # The compute's audit fails: one warning, saying what comes next.
        compute_log = self.useFixture(fixtures.FakeLogger(
            name='resobj', format='%(levelname)s|%(name)s|%(message)s'))
        compute.audit()
        self.assertEqual(
            ['WARNING|resobj.compute.service|Audit of node '
             'outage-compute failed: The database is unavailable: '
             'cannot connect to the database; the next audit, in 60 s, '
             'tries again'], compute_log.output.splitlines())
        self._wait_for('could not report itself alive')
        self.db_proxy.restore()
        self._wait_for('reported itself alive again')
        self.broker_proxy.cut()
        self._wait_for('Trying again')
        self.broker_proxy.restore()
        self._wait_for('Reconnected to AMQP server')
        self.assertEqual('ResourceProviderNotFound',
                         self._get('req-after-the-outage'))

        log = self.conductor.log()
        lines = [line for line in _lines(log)
                 # The line resobj-conductor prints, not logs, once ready.
                 if not (line[0] == 'UNPARSED' and
                         service_process.READY in line[3])]
        self.assertNotIn('Traceback', log)
        self.assertEqual([], [line for line in lines
                              if line[0] not in ('WARNING', 'INFO')])
        warnings = [line for line in lines if line[0] == 'WARNING']
        # One line per failed call, naming its request, in order: the
        # lookups, then the compute's audit (its service's heartbeat).
        failed.append(compute.context.request_id)
        calls = [line for line in warnings if line[2] != '-']
        self.assertEqual(failed, [line[2] for line in calls], calls)
        for (level, logger, request, message), method in zip(
                calls, ['object_class_action_versions'] * 3 +
                ['object_action']):
            self.assertIn('%s: The database is unavailable' % method,
                          message)
            self.assertIn('the caller gets the error', message)
        # The rest is about no request: the heartbeat's misses and the
        # broker's reconnection attempts.
        others = {(line[1], line[2]) for line in warnings
                  if line[2] == '-'}
        self.assertIn(('resobj.heartbeat', '-'), others)
        self.assertIn(('oslo.messaging._drivers.impl_rabbit', '-'), others)
        self.assertEqual(
            set(), {line[2] for line in lines} - set(failed) - {'-'})
