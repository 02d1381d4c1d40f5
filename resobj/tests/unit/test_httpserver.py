"""resobj.api.httpserver in process, on real sockets, with small limits.

The real resobj-api with its default limits is tested in
``resobj/tests/api/test_slow_clients.py`` and ``test_http_limits.py``.
"""

import json
import socket
import threading
import time

import fixtures

from resobj.api import httpconnection
from resobj.api import httpserver
from resobj.tests.api import rawhttp
from resobj.tests import base

LIMITS = {'threads': 2, 'keepalive': 30, 'client_timeout': 1,
          'connection_limit': 6, 'connection_limit_per_client': 3,
          'max_request_body_size': 1024, 'max_request_header_size': 2048}


class _App:
    """A WSGI application; requests to /stall wait for ``release``."""

    def __init__(self):
        self.release = threading.Event()
        self.stalled = threading.Semaphore(0)

    def __call__(self, environ, start_response):
        path = environ['PATH_INFO']
        if path == '/stall':
            self.stalled.release()
            self.release.wait(10)
        if path == '/environ':
            body = json.dumps({
                key: value for key, value in environ.items()
                if isinstance(value, str)}).encode()
        elif path == '/waited':
            body = b'%.3f' % (
                time.monotonic() - environ[httpconnection.ARRIVED])
        elif path == '/fail':
            raise RuntimeError('the application failed')
        else:
            body = b'hello ' + environ['wsgi.input'].read()
        start_response('200 OK', [('Content-Type', 'text/plain'),
                                  ('Content-Length', str(len(body)))])
        return [body]


def _connect(port, source='127.0.0.1'):
    sock = socket.socket()
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(('127.0.0.1', port))
    return sock


def _get(path, close=False):
    return (b'GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n'
            % (path.encode(), b'Connection: close\r\n' if close else b''))


def _read_answer(sock, head_only=False):
    """One answer with a Content-Length, read from a kept-alive socket."""
    data = b''
    while b'\r\n\r\n' not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError('closed; received %r' % data)
        data += chunk
    head, _, body = data.partition(b'\r\n\r\n')
    answer = rawhttp.Answer(head + b'\r\n\r\n')
    length = 0 if head_only else int(
        answer.headers.get('content-length', 0))
    while len(body) < length:
        body += sock.recv(65536)
    answer.body = body
    return answer


def _closed_by_server(sock, timeout=5):
    """Whether the server closes ``sock`` within ``timeout`` seconds."""
    try:
        rawhttp.read_until_closed(sock, timeout)
    except TimeoutError:
        return False
    return True


class TestServer(base.TestCase):
    """A Server on a real socket, its loop in a thread."""

    limits = LIMITS

    def setUp(self):
        super().setUp()
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        sock.listen(64)
        self.port = sock.getsockname()[1]
        self.app = _App()
        self.addCleanup(self.app.release.set)
        self.server = httpserver.Server(self.app, [sock], self.limits)
        self._running = True
        self.ticks = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        self.addCleanup(self.thread.join, 10)
        self.addCleanup(setattr, self, '_running', False)
        # Serving once the listener is up.
        rawhttp.exchange(self.port, _get('/', close=True))

    def _serve(self):
        self.server.serve(lambda: self._running, self._tick, 1)

    def _tick(self):
        self.ticks += 1

    def _stall_threads(self, source='127.0.0.1', count=None):
        """Hold every thread of the pool on /stall; the sockets."""
        socks = []
        for _ in range(count or self.limits['threads']):
            sock = _connect(self.port, source)
            self.addCleanup(sock.close)
            sock.sendall(_get('/stall'))
            socks.append(sock)
        for _ in range(self.limits['threads']):
            self.assertTrue(self.app.stalled.acquire(timeout=10))
        return socks


class TestRequests(TestServer):

    def test_serves_whole_requests(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n'
            b'Connection: close\r\n\r\nworld'))
        self.assertEqual(200, answer.status)
        self.assertEqual(b'hello world', answer.body)
        self.assertIn('date', answer.headers)

    def test_a_body_of_the_limit_is_served(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\n'
            b'Connection: close\r\n\r\n' + b'a' * 1024))
        self.assertEqual(200, answer.status)
        self.assertEqual(1030, len(answer.body))

    def test_chunked_body_is_handed_over_whole(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n'
            b'Connection: close\r\n\r\n3\r\nwor\r\n2\r\nld\r\n0\r\n\r\n'))
        self.assertEqual(b'hello world', answer.body)

    def test_errors_are_json_with_the_limit(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n'))
        self.assertEqual(413, answer.status)
        error = answer.error()
        self.assertEqual('resobj.request.too_large', error['code'])
        self.assertIn('1024 bytes', error['detail'])
        self.assertEqual(answer.headers['x-openstack-request-id'],
                         error['request_id'])

    def test_headers_of_the_limit_are_served_and_one_more_byte_is_431(self):
        request = _get('/', close=True)[:-2] + b'X-Fill: %s\r\n\r\n'
        padding = LIMITS['max_request_header_size'] - len(request % b'')
        at_limit = request % (b'a' * padding)
        self.assertEqual(LIMITS['max_request_header_size'], len(at_limit))
        self.assertEqual(200, rawhttp.exchange(self.port, at_limit).status)
        over = request % (b'a' * (padding + 1))
        answer = rawhttp.exchange(self.port, over)
        self.assertEqual(431, answer.status)
        self.assertEqual('resobj.request.headers_too_large',
                         answer.error()['code'])

    def test_both_framings_is_400(self):
        answer = rawhttp.exchange(self.port, (
            b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n'
            b'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n'))
        self.assertEqual(400, answer.status)
        self.assertEqual('resobj.request.malformed', answer.error()['code'])

    def test_http_1_1_without_host_is_400(self):
        answer = rawhttp.exchange(self.port, b'GET / HTTP/1.1\r\n\r\n')
        self.assertEqual(400, answer.status)
        self.assertEqual('resobj.request.malformed', answer.error()['code'])

    def test_pipelined_requests_are_answered_in_order(self):
        with rawhttp.connect(self.port) as sock:
            sock.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3'
                         b'\r\n\r\none' + b'POST / HTTP/1.1\r\nHost: x\r\n'
                         b'Content-Length: 3\r\nConnection: close\r\n\r\n'
                         b'two')
            data = rawhttp.read_until_closed(sock, 10)
        first, second = data.split(b'HTTP/1.1 200 OK')[1:]
        self.assertTrue(first.endswith(b'\r\n\r\nhello one'), first)
        self.assertTrue(second.endswith(b'\r\n\r\nhello two'), second)

    def test_head_has_no_body(self):
        with rawhttp.connect(self.port) as sock:
            sock.sendall(b'HEAD / HTTP/1.1\r\nHost: x\r\n\r\n')
            answer = _read_answer(sock, head_only=True)
            self.assertEqual(b'', answer.body)
            self.assertEqual('6', answer.headers['content-length'])
            # Kept alive, and the next answer is the next bytes.
            sock.sendall(_get('/'))
            self.assertEqual(b'hello ', _read_answer(sock).body)

    def test_expect_100_continue(self):
        with rawhttp.connect(self.port) as sock:
            sock.sendall(b'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2'
                         b'\r\nExpect: 100-continue\r\n\r\n')
            self.assertTrue(sock.recv(64).startswith(b'HTTP/1.1 100 '))
            sock.sendall(b'hi')
            self.assertEqual(b'hello hi', _read_answer(sock).body)

    def test_environ(self):
        answer = rawhttp.exchange(self.port, (
            b'GET //environ?a=%20b HTTP/1.1\r\nHost: h\r\nX-Auth-Token: t\r\n'
            b'X_Auth_Token: spoofed\r\nX-Two: 1\r\nX-Two: 2\r\n'
            b'Content-Type: text/plain\r\nConnection: close\r\n\r\n'))
        environ = json.loads(answer.body)
        self.assertEqual('/environ', environ['PATH_INFO'])
        self.assertEqual('a=%20b', environ['QUERY_STRING'])
        self.assertEqual('//environ?a=%20b', environ['REQUEST_URI'])
        self.assertEqual('t', environ['HTTP_X_AUTH_TOKEN'])
        self.assertEqual('1,2', environ['HTTP_X_TWO'])
        self.assertEqual('text/plain', environ['CONTENT_TYPE'])
        self.assertEqual('127.0.0.1', environ['REMOTE_ADDR'])
        self.assertEqual('HTTP/1.1', environ['SERVER_PROTOCOL'])

    def test_percent_encoded_path_is_decoded_as_latin_1(self):
        answer = rawhttp.exchange(self.port, (
            b'GET /%EF%BC%90/environ HTTP/1.1\r\nHost: h\r\n'
            b'Connection: close\r\n\r\n'))
        self.assertEqual(200, answer.status)
        answer = rawhttp.exchange(self.port, (
            b'GET /env%69ronment/../environ HTTP/1.1\r\nHost: h\r\n'
            b'Connection: close\r\n\r\n'))
        self.assertEqual(b'hello ', answer.body)

    def test_application_failure_is_500_json(self):
        answer = rawhttp.exchange(self.port, _get('/fail', close=True))
        self.assertEqual(500, answer.status)
        self.assertEqual('placement.undefined_code', answer.error()['code'])

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
        # One second of timeout, at most one more for the pass that
        # notices it.
        self.assertLess(time.monotonic() - start, 3.5)

    def test_silent_connection_is_closed_after_client_timeout(self):
        with rawhttp.connect(self.port) as sock:
            start = time.monotonic()
            self.assertTrue(_closed_by_server(sock))
            self.assertLess(time.monotonic() - start, 3.5)

    def test_root_is_answered_while_every_thread_waits(self):
        self._stall_threads()
        for _ in range(3):
            start = time.monotonic()
            answer = rawhttp.exchange(self.port, _get('/', close=True))
            self.assertEqual(200, answer.status)
            self.assertLess(time.monotonic() - start, 2)
        # Any other path waits for a thread of the pool.
        with rawhttp.connect(self.port) as sock:
            sock.settimeout(0.5)
            sock.sendall(_get('/other'))
            self.assertRaises(socket.timeout, sock.recv, 1)

    def test_arrival_is_before_the_wait_for_a_thread(self):
        self._stall_threads()
        with rawhttp.connect(self.port) as sock:
            sock.sendall(_get('/waited'))
            time.sleep(0.5)
            self.app.release.set()
            waited = float(_read_answer(sock).body)
        self.assertGreaterEqual(waited, 0.5)

    def test_waits_for_a_thread_make_one_metrics_line(self):
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.api.httpserver.METRICS_INTERVAL', 1))
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.api.httpserver.SLOW_QUEUE', 0.2))
        log = self.useFixture(fixtures.FakeLogger(
            name='resobj.api.httpserver'))
        self._stall_threads()
        waiting = []
        for n in range(3):
            sock = rawhttp.connect(self.port, source='127.0.0.%d' % (n + 2))
            self.addCleanup(sock.close)
            sock.sendall(_get('/other'))
            waiting.append(sock)
        time.sleep(0.5)
        self.app.release.set()
        for sock in waiting:
            self.assertEqual(200, _read_answer(sock).status)
        deadline = time.monotonic() + 5
        while 'HTTP server, last' not in log.output:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.1)
        [line] = log.output.splitlines()
        self.assertIn('3 requests waited over 0 s for a thread', line)
        self.assertIn('at most 3 waiting at once', line)

    def test_ticks_while_idle(self):
        time.sleep(2.5)
        self.assertGreaterEqual(self.ticks, 2)


class TestConnectionLimits(TestServer):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.api.httpserver.SETTLED', 0.2))

    def _idle_connections(self, sources):
        """A kept-alive connection per source, each answered once."""
        socks = []
        for source in sources:
            sock = _connect(self.port, source)
            self.addCleanup(sock.close)
            sock.sendall(_get('/'))
            self.assertEqual(200, _read_answer(sock).status)
            socks.append(sock)
        # Settled: idle long enough to be closed for a newcomer.
        time.sleep(0.3)
        return socks

    def test_a_connection_just_opened_is_not_closed_for_another(self):
        # Its request may be on its way: the newcomer goes to the
        # reserve instead.
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.api.httpserver.SETTLED', 5))
        fresh = []
        for _ in range(LIMITS['connection_limit_per_client']):
            fresh.append(_connect(self.port, '127.0.0.2'))
            self.addCleanup(fresh[-1].close)
        answer = rawhttp.exchange_from(self.port, '127.0.0.2',
                                       _get('/other'))
        self.assertEqual(503, answer.status)
        for sock in fresh:
            sock.sendall(_get('/'))
            self.assertEqual(200, _read_answer(sock).status)

    def test_per_client_limit_closes_that_clients_oldest_idle(self):
        other = self._idle_connections(['127.0.0.3'])
        mine = self._idle_connections(['127.0.0.2'] * 3)
        newest = _connect(self.port, '127.0.0.2')
        self.addCleanup(newest.close)
        newest.sendall(_get('/'))
        self.assertEqual(200, _read_answer(newest).status)
        self.assertTrue(_closed_by_server(mine[0]))
        for sock in mine[1:] + other:
            self.assertFalse(_closed_by_server(sock, 0.2))

    def test_connection_limit_closes_the_oldest_idle(self):
        socks = self._idle_connections(
            ['127.0.0.%d' % n for n in range(2, 8)])
        newest = self._idle_connections(['127.0.0.8'])
        self.assertTrue(_closed_by_server(socks[0]))
        for sock in socks[1:] + newest:
            self.assertFalse(_closed_by_server(sock, 0.2))

    def test_reserve_answers_root_only_when_nothing_is_idle(self):
        # Three connections of one client, none idle: two served, one
        # waiting for a thread.
        self._stall_threads('127.0.0.2', count=3)
        start = time.monotonic()
        answer = rawhttp.exchange_from(self.port, '127.0.0.2',
                                       _get('/'))
        self.assertEqual(200, answer.status)
        self.assertLess(time.monotonic() - start, 2)
        answer = rawhttp.exchange_from(self.port, '127.0.0.2',
                                       _get('/other'))
        self.assertEqual(503, answer.status)
        error = answer.error()
        self.assertEqual('resobj.server.busy', error['code'])
        self.assertIn('connection_limit_per_client', error['detail'])
        self.assertEqual('1', answer.headers['retry-after'])
        # Another client is served as usual.
        self.app.release.set()
        answer = rawhttp.exchange_from(self.port, '127.0.0.3',
                                       _get('/other', close=True))
        self.assertEqual(200, answer.status)

    def test_reserve_closes_its_oldest_to_let_a_newcomer_in(self):
        self._stall_threads('127.0.0.2', count=3)
        silent = []
        for _ in range(httpserver.RESERVE):
            silent.append(_connect(self.port, '127.0.0.2'))
            self.addCleanup(silent[-1].close)
        time.sleep(0.3)
        answer = rawhttp.exchange_from(self.port, '127.0.0.2', _get('/'))
        self.assertEqual(200, answer.status)
        self.assertTrue(_closed_by_server(silent[0]))

    def test_a_client_flooding_the_reserve_displaces_its_own(self):
        self.useFixture(fixtures.MonkeyPatch(
            'resobj.api.httpserver.SETTLED', 5))
        # The worker full (connection_limit), nothing idle.
        self._stall_threads('127.0.0.2', count=3)
        for _ in range(3):
            sock = _connect(self.port, '127.0.0.4')
            self.addCleanup(sock.close)
            sock.sendall(_get('/stall'))
        flood = []
        for _ in range(httpserver.RESERVE):
            flood.append(_connect(self.port, '127.0.0.2'))
            self.addCleanup(flood[-1].close)
        # Another client's health check, while nothing there has settled.
        answer = rawhttp.exchange_from(self.port, '127.0.0.3', _get('/'))
        self.assertEqual(200, answer.status)
        self.assertTrue(_closed_by_server(flood[0]))

    def test_reserved_connection_must_ask_at_once(self):
        self._stall_threads('127.0.0.2', count=3)
        sock = _connect(self.port, '127.0.0.2')
        self.addCleanup(sock.close)
        start = time.monotonic()
        # LIMITS' client_timeout (1 s) is below RESERVE_SECONDS.
        self.assertTrue(_closed_by_server(sock))
        self.assertLess(time.monotonic() - start, 3.5)


class TestStop(base.TestCase):

    def test_requests_being_served_finish_and_the_rest_is_dropped(self):
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        sock.listen(16)
        port = sock.getsockname()[1]
        app = _App()
        self.addCleanup(app.release.set)
        # Longer than the test: what ends the partial request is the stop.
        server = httpserver.Server(app, [sock],
                                   dict(LIMITS, client_timeout=30))
        running = threading.Event()
        running.set()
        thread = threading.Thread(
            target=server.serve, args=(running.is_set, lambda: None, 5),
            daemon=True)
        thread.start()
        rawhttp.exchange(port, _get('/', close=True))
        served = rawhttp.connect(port)
        self.addCleanup(served.close)
        served.sendall(_get('/stall'))
        self.assertTrue(app.stalled.acquire(timeout=10))
        arriving = rawhttp.connect(port)
        self.addCleanup(arriving.close)
        arriving.sendall(b'GET / HTTP/1.1\r\n')
        time.sleep(0.2)
        running.clear()
        # The partial request is dropped at once, unanswered; the one
        # being served finishes, is answered, and its connection closed.
        self.assertEqual(b'', rawhttp.read_until_closed(arriving, 3))
        app.release.set()
        answer = rawhttp.Answer(rawhttp.read_until_closed(served, 5))
        self.assertEqual(200, answer.status)
        self.assertEqual('close', answer.headers['connection'])
        thread.join(5)
        self.assertFalse(thread.is_alive())
        self.assertRaises(OSError, rawhttp.connect, port, 1)


class TestMetrics(base.TestCase):

    def test_nothing_to_say_says_nothing(self):
        self.assertIsNone(httpserver.Stats().take_line(60))

    def test_line_counts_and_starts_afresh(self):
        stats = httpserver.Stats()
        stats.slow_waits, stats.longest_wait, stats.most_waiting = 3, 2.5, 7
        stats.evicted = 4
        stats.reserved, stats.refused_busy, stats.dropped = 5, 2, 1
        self.assertEqual(
            'HTTP server, last 60 s: 3 requests waited over 1 s for a '
            'thread (longest 2.5 s, at most 7 waiting at once); 4 idle '
            'connections closed to make room for new ones; 5 connections '
            'over the connection limits taken in the reserve (2 answered '
            '503), 1 closed to make room there.', stats.take_line(60))
        self.assertIsNone(stats.take_line(60))
