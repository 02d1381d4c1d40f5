"""Every log line of a request names that request and its user.

A server's pool thread serves one request after another; the context a
request stores for its thread's log lines must be its own from its first
line, and gone when it ends.
"""

import functools

import fixtures
from oslo_context import context as oslo_context
from oslo_log import formatters
from oslo_log import log as logging
import webob

from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import base


class TestLogContext(base.TestCase):

    def setUp(self):
        super().setUp()
        self.api = self.useFixture(api_fixtures.AppFixture('sqlite'))
        conf = self.api.conf
        conf.set_override('logging_context_format_string',
                          '%(request_id)s|%(user_identity)s|%(message)s')
        conf.set_override('logging_default_format_string',
                          'no-context|%(message)s')
        self.addCleanup(conf.clear_override, 'logging_context_format_string')
        self.addCleanup(conf.clear_override, 'logging_default_format_string')
        self.log = self.useFixture(fixtures.FakeLogger(
            # The format is the configuration's (ContextFormatter reads
            # it there); fixtures sets a formatter only if given one.
            name='resobj', format='%(message)s', formatter=functools.partial(
                formatters.ContextFormatter, config=conf, project='resobj')))

    def _cut_short(self, user):
        """A POST whose body ends early: the app logs one line for it."""
        req = webob.Request.blank(
            '/resource_providers', method='POST',
            headers={'X-Auth-Token': user, 'X-Roles': 'admin',
                     'OpenStack-API-Version': 'placement latest',
                     'Content-Type': 'application/json'}, body=b'{}')
        req.environ['CONTENT_LENGTH'] = '100'
        # As a server's input stream, read once: not a seekable copy.
        req.environ['webob.is_body_seekable'] = False
        resp = req.get_response(self.api.app)
        self.assertEqual(400, resp.status_int)
        self.assertEqual('resobj.request.incomplete',
                         resp.json['errors'][0]['code'])
        return resp.headers['x-openstack-request-id']

    def test_each_line_names_its_own_request_and_user(self):
        # One thread, as a server's pool thread: alice, then bob.
        alice = self._cut_short('alice')
        self.assertIsNone(oslo_context.get_current())
        bob = self._cut_short('bob')
        self.assertIsNone(oslo_context.get_current())
        lines = self.log.output.splitlines()
        self.assertEqual(2, len(lines), lines)
        for line, request_id, user in ((lines[0], alice, 'alice'),
                                       (lines[1], bob, 'bob')):
            self.assertTrue(line.startswith('%s|%s %s ' % (
                request_id, user, user)), line)
            self.assertIn('client disconnected', line)
        self.assertNotEqual(alice, bob)

    def test_the_thread_logs_nothing_of_the_request_afterwards(self):
        self._cut_short('alice')
        logging.getLogger('resobj.tests').info('after the request')
        self.assertEqual('no-context|after the request',
                         self.log.output.splitlines()[-1])
