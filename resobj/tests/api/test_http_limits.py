"""What the server layer refuses, in the API's JSON error format.

Against the real resobj-api (its HTTP server answers these before any
handler runs), then the application alone, as another WSGI server
would run it.
"""

import json
import time

import webob

from resobj.api import app as api_app
from resobj.api import service
from resobj.tests.api import rawhttp
from resobj.tests.api import server
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures

LIMIT = 64 * 1024
HEADER_LIMIT = 16 * 1024


class TestServerRefuses(base.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = server.ServerFixture(
            workers=1, extra_conf='max_request_body_size = %d\n'
            'max_request_header_size = %d\n' % (LIMIT, HEADER_LIMIT))
        cls.server.setUp()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanUp()
        super().tearDownClass()

    def _error(self, answer, status, code):
        self.assertEqual(status, answer.status, answer.body)
        self.assertEqual('application/json', answer.headers['content-type'])
        error = answer.error()
        self.assertEqual(status, error['status'])
        self.assertEqual(code, error['code'])
        self.assertEqual(answer.headers['x-openstack-request-id'],
                         error['request_id'])
        return error

    def test_announced_body_over_the_limit_is_413_before_it_is_read(self):
        start = time.monotonic()
        # Only the first bytes of the announced body are ever sent: the
        # answer cannot wait for the rest.
        answer = rawhttp.exchange(self.server.port, (
            b'PUT /traits/CUSTOM_BIG HTTP/1.1\r\nHost: x\r\n'
            b'X-Auth-Token: admin\r\nContent-Type: application/json\r\n'
            b'Content-Length: 50000000\r\n\r\n{"a": '), timeout=10)
        self.assertLess(time.monotonic() - start, 5)
        error = self._error(answer, 413, 'resobj.request.too_large')
        self.assertIn('larger than %d bytes' % LIMIT, error['detail'])
        self.assertIn('max_request_body_size', error['detail'])

    def test_chunked_body_over_the_limit_is_413(self):
        chunk = b'x' * 4096
        body = b''.join(b'%x\r\n%s\r\n' % (len(chunk), chunk)
                        for _ in range(LIMIT // len(chunk) + 2))
        answer = rawhttp.exchange(self.server.port, (
            b'PUT /traits/CUSTOM_BIG HTTP/1.1\r\nHost: x\r\n'
            b'X-Auth-Token: admin\r\nContent-Type: application/json\r\n'
            b'Transfer-Encoding: chunked\r\n\r\n' + body + b'0\r\n\r\n'))
        self._error(answer, 413, 'resobj.request.too_large')

    def test_chunked_body_under_the_limit_is_served(self):
        body = b'{}'
        answer = rawhttp.exchange(self.server.port, (
            b'PUT /traits/CUSTOM_CHUNKED HTTP/1.1\r\nHost: x\r\n'
            b'X-Auth-Token: admin\r\nContent-Type: application/json\r\n'
            b'OpenStack-API-Version: placement 1.6\r\nConnection: close\r\n'
            b'Transfer-Encoding: chunked\r\n\r\n2\r\n' + body +
            b'\r\n0\r\n\r\n'))
        self.assertEqual(201, answer.status, answer.body)

    def test_long_header_is_431(self):
        error = self._error(rawhttp.exchange(self.server.port, (
            b'GET / HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n'
            % (b'a' * HEADER_LIMIT))), 431,
            'resobj.request.headers_too_large')
        self.assertIn('max_request_header_size', error['detail'])

    def test_long_url_is_431(self):
        self._error(rawhttp.exchange(self.server.port, (
            b'GET /resource_providers?name=%s HTTP/1.1\r\nHost: x\r\n\r\n'
            % (b'a' * HEADER_LIMIT))), 431,
            'resobj.request.headers_too_large')

    def test_bad_framing_is_400(self):
        for request in (
                b'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n',
                b'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n'
                b'Content-Length: 2\r\n\r\nab',
                b'GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n',
                b'GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n',
                b'GARBAGE\r\n\r\n'):
            self._error(rawhttp.exchange(self.server.port, request), 400,
                        'resobj.request.malformed')

    def test_unknown_transfer_coding_is_501(self):
        self._error(rawhttp.exchange(self.server.port, (
            b'PUT /traits/CUSTOM_X HTTP/1.1\r\nHost: x\r\n'
            b'Transfer-Encoding: gzip\r\n\r\n')), 501,
            'resobj.request.unsupported_encoding')

    def test_refusals_are_logged_in_one_line(self):
        rawhttp.exchange(self.server.port, (
            b'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n'))
        deadline = time.monotonic() + 5
        while 'Answered 400' not in self.server.log():
            self.assertLess(time.monotonic(), deadline, self.server.log())
            time.sleep(0.1)
        self.assertNotIn('Traceback', self.server.log())


class TestApplicationRefuses(base.TestCase):
    """The application's own check, for servers other than resobj-api."""

    def setUp(self):
        super().setUp()
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        conf.config(group='api', max_request_body_size=4096)
        self.app = api_app.Application(conf.conf)

    def _put(self, content_length):
        req = webob.Request.blank(
            '/traits/CUSTOM_X', method='PUT',
            headers={'X-Auth-Token': 'admin',
                     'OpenStack-API-Version': 'placement latest',
                     'Content-Type': 'application/json'})
        req.environ['CONTENT_LENGTH'] = content_length
        return req.get_response(self.app)

    def test_announced_body_over_the_limit_is_413(self):
        resp = self._put('4097')
        self.assertEqual(413, resp.status_int)
        error = json.loads(resp.body)['errors'][0]
        self.assertEqual('resobj.request.too_large', error['code'])
        self.assertEqual(resp.headers['x-openstack-request-id'],
                         error['request_id'])

    def test_content_length_not_a_number_is_400(self):
        resp = self._put('12a')
        self.assertEqual(400, resp.status_int)
        error = json.loads(resp.body)['errors'][0]
        self.assertEqual('resobj.request.malformed', error['code'])
