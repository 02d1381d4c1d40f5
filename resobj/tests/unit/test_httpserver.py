"""resobj.api.httpserver in process: the waitress classes it extends.

httpserver subclasses waitress's channel, error task and server and
runs its event loop, none of which waitress documents; these tests fail
if a waitress release changes what httpserver relies on.
"""

import socket
import threading
import time

from waitress import channel as waitress_channel
from waitress import parser as waitress_parser
from waitress import server as waitress_server
from waitress import task as waitress_task
from waitress import utilities

from resobj.api import httpserver
from resobj.tests.api import rawhttp
from resobj.tests import base

LIMITS = {'threads': 2, 'keepalive': 30, 'client_timeout': 1,
          'connection_limit': 100, 'max_request_body_size': 1024,
          'max_request_header_size': 2048}


# Requests to /stall wait for it: as a request on a stalled database.
_STALL = threading.Event()


def _hello(environ, start_response):
    if environ['PATH_INFO'] == '/stall':
        _STALL.wait(10)
    body = environ['wsgi.input'].read()
    start_response('200 OK', [('Content-Type', 'text/plain'),
                              ('Content-Length', str(len(body) + 6))])
    return [b'hello ' + body]


class TestWaitressHooks(base.TestCase):
    """What httpserver takes from waitress is still there."""

    def test_names_httpserver_uses(self):
        self.assertIs(waitress_task.ErrorTask,
                      waitress_channel.HTTPChannel.error_task_class)
        self.assertIs(waitress_channel.HTTPChannel,
                      waitress_server.TcpWSGIServer.channel_class)
        for name in ('received', 'handle_close', 'service', 'write_soon'):
            self.assertTrue(callable(getattr(
                waitress_channel.HTTPChannel, name)))
        self.assertTrue(callable(
            waitress_server.BaseWSGIServer.maintenance))
        self.assertTrue(callable(waitress_server.BaseWSGIServer.add_task))
        parsed = waitress_parser.HTTPRequestParser(
            httpserver.adjustments.Adjustments())
        for name in ('error', 'completed', 'headers_finished',
                     'body_bytes_received', 'content_length', 'version'):
            self.assertTrue(hasattr(parsed, name), name)
        # What the root lane reads of a whole request.
        parsed.received(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        self.assertEqual((True, 'GET', '/'),
                         (parsed.completed, parsed.command, parsed.path))
        error = utilities.RequestEntityTooLarge('why')
        self.assertEqual((413, 'why'), (error.code, error.body))


class TestServer(base.TestCase):
    """A Server on a real socket, its loop in a thread."""

    def setUp(self):
        super().setUp()
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        sock.listen(16)
        self.port = sock.getsockname()[1]
        self.server = httpserver.Server(_hello, [sock], LIMITS)
        self._running = True
        self.ticks = 0
        thread = threading.Thread(target=self._serve, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 10)
        self.addCleanup(setattr, self, '_running', False)

    def _serve(self):
        try:
            self.server.serve(lambda: self._running, self._tick)
        finally:
            self.server.stop(1)

    def _tick(self):
        self.ticks += 1

    def test_serves_whole_requests(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n'
            b'Connection: close\r\n\r\nworld'))
        self.assertEqual(200, answer.status)
        self.assertEqual(b'hello world', answer.body)

    def test_a_body_of_the_limit_is_served(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\n'
            b'Connection: close\r\n\r\n' + b'a' * 1024))
        self.assertEqual(200, answer.status)
        self.assertEqual(1030, len(answer.body))

    def test_errors_are_json_with_the_limit(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n'))
        self.assertEqual(413, answer.status)
        error = answer.error()
        self.assertEqual('resobj.request.too_large', error['code'])
        self.assertIn('1024 bytes', error['detail'])

    def test_trickler_gets_408_after_client_timeout(self):
        with rawhttp.connect(self.port) as sock:
            start = time.monotonic()
            sock.sendall(b'GET / HTTP/1.1\r\n')
            data = b''
            sock.settimeout(0.2)
            while time.monotonic() - start < 5:
                try:
                    sock.sendall(b'X')
                    data += sock.recv(4096)
                except (socket.timeout, BlockingIOError):
                    continue
                except OSError:
                    break
                if data.endswith(b'}]}'):
                    break
        answer = rawhttp.Answer(data)
        self.assertEqual(408, answer.status)
        self.assertEqual('resobj.request.timeout', answer.error()['code'])
        # One second of timeout, at most one more for the maintenance
        # pass that notices it.
        self.assertLess(time.monotonic() - start, 3.5)

    def test_root_is_answered_while_every_thread_waits(self):
        _STALL.clear()
        self.addCleanup(_STALL.set)
        stalled = []
        for _ in range(LIMITS['threads'] + 1):
            sock = rawhttp.connect(self.port)
            self.addCleanup(sock.close)
            sock.sendall(b'GET /stall HTTP/1.1\r\nHost: x\r\n\r\n')
            stalled.append(sock)
        time.sleep(0.3)
        for _ in range(3):
            start = time.monotonic()
            answer = rawhttp.exchange(self.port, (
                b'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
            self.assertEqual(200, answer.status)
            self.assertLess(time.monotonic() - start, 2)
        # Any other path waits for a thread of the pool.
        with rawhttp.connect(self.port) as sock:
            sock.settimeout(0.5)
            sock.sendall(b'GET /other HTTP/1.1\r\nHost: x\r\n\r\n')
            self.assertRaises(socket.timeout, sock.recv, 1)

    def test_ticks_while_idle(self):
        time.sleep(2.5)
        self.assertGreaterEqual(self.ticks, 2)
