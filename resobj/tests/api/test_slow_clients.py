"""Slow clients against the real resobj-api: no thread is theirs to hold.

Fifty connections that send their requests slowly, or nothing at all,
must not delay anyone else's answers; and a client still sending when
``[api] client_timeout`` has passed is answered 408 and disconnected.
Thousands of idle connections, from one address or from many, must not
either: the connection limits close idle connections to make room.
"""

import socket
import threading
import time

import requests
from requests import adapters

from resobj.tests.api import rawhttp
from resobj.tests.api import server
from resobj.tests import base

AUTH = {'X-Auth-Token': 'admin'}
# More idle connections than the default limits let the two workers
# hold (connection_limit of each, connection_limit_per_client from one
# address).
IDLE = 3000


class _Tricklers:
    """Sockets that each send one more byte every ``interval`` seconds."""

    def __init__(self, interval=0.5):
        self.sockets = []
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)

    def add(self, sock, data):
        self.sockets.append((sock, data))

    def start(self):
        self._thread.start()

    def _trickle(self):
        offset = 0
        while not self._stop.wait(self._interval):
            for sock, data in self.sockets:
                try:
                    sock.send(data[offset % len(data):][:1])
                except OSError:
                    # Dropped by the server: what the timeout test wants.
                    pass
            offset += 1

    def stop(self):
        self._stop.set()
        self._thread.join()
        for sock, _ in self.sockets:
            sock.close()


def _header_trickler(port):
    """A request whose headers never end."""
    sock = rawhttp.connect(port)
    sock.sendall(b'GET /resource_providers HTTP/1.1\r\nHost: x\r\n')
    return sock, b'X-Slow: a\r\n'


def _body_trickler(port):
    """A request announcing a large body it sends a byte at a time."""
    sock = rawhttp.connect(port)
    sock.sendall(b'PUT /traits/CUSTOM_SLOW HTTP/1.1\r\nHost: x\r\n'
                 b'X-Auth-Token: admin\r\nContent-Type: application/json\r\n'
                 b'Content-Length: 100000\r\n\r\n{')
    return sock, b' '


class TestSlowClients(base.TestCase):

    def _open_slow_clients(self, port, headers=20, bodies=15, idle=15):
        tricklers = _Tricklers()
        for _ in range(headers):
            tricklers.add(*_header_trickler(port))
        for _ in range(bodies):
            tricklers.add(*_body_trickler(port))
        idlers = [rawhttp.connect(port) for _ in range(idle)]
        tricklers.start()
        self.addCleanup(tricklers.stop)
        for sock in idlers:
            self.addCleanup(sock.close)
        return tricklers, idlers

    def test_fifty_slow_clients_do_not_delay_others(self):
        # The shipped defaults: 2 workers of 4 threads.
        srv = self.useFixture(server.ServerFixture(workers=2))
        self._open_slow_clients(srv.port)
        # Let every slow client be accepted and start trickling.
        time.sleep(1)
        slowest = 0
        with requests.Session() as session:
            for _ in range(10):
                for path, headers in (('/', {}),
                                      ('/resource_providers', AUTH)):
                    start = time.monotonic()
                    resp = session.get(srv.url + path, headers=headers,
                                       timeout=5)
                    slowest = max(slowest, time.monotonic() - start)
                    self.assertEqual(200, resp.status_code, resp.text)
                time.sleep(0.1)
        # Answers take milliseconds; a probe queued behind the slow
        # clients would wait for their client_timeout (30 s).
        self.assertLess(slowest, 2.0, srv.log())

    def test_slow_clients_are_dropped_after_client_timeout(self):
        srv = self.useFixture(server.ServerFixture(
            workers=1, extra_conf='client_timeout = 2\n'))
        tricklers, idlers = self._open_slow_clients(
            srv.port, headers=2, bodies=2, idle=2)
        start = time.monotonic()
        for sock, _ in tricklers.sockets:
            answer = rawhttp.Answer(rawhttp.read_until_closed(sock, 15))
            self.assertEqual(408, answer.status)
            error = answer.error()
            self.assertEqual('resobj.request.timeout', error['code'])
            self.assertEqual(answer.headers['x-openstack-request-id'],
                             error['request_id'])
        for sock in idlers:
            # Nothing was asked: the connection just closes.
            self.assertEqual(b'', rawhttp.read_until_closed(sock, 15))
        # Bound by the timeout plus one maintenance pass, not by the
        # trickle, which would go on for 100,000 s.
        self.assertLess(time.monotonic() - start, 10)
        # The service still answers, and nothing was logged as failing.
        self.assertEqual(200, requests.get(srv.url + '/', timeout=5)
                         .status_code)
        self.assertIn('did not send its request within 2 s', srv.log())
        self.assertNotIn('Traceback', srv.log())

    def test_client_disconnecting_mid_body_is_one_line(self):
        srv = self.useFixture(server.ServerFixture(workers=1))
        sock, _ = _body_trickler(srv.port)
        sock.sendall(b'"a": 1')
        time.sleep(0.3)
        # RST rather than FIN: the abrupt kind of disconnection.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        b'\x01\x00\x00\x00\x00\x00\x00\x00')
        sock.close()
        deadline = time.monotonic() + 10
        while 'disconnected before sending' not in srv.log():
            self.assertLess(time.monotonic(), deadline, srv.log())
            time.sleep(0.1)
        self.assertIn('(7 of 100000 body bytes received)', srv.log())
        self.assertNotIn('Traceback', srv.log())
        self.assertNotIn('ERROR', srv.log())


class TestIdleConnections(base.TestCase):
    """Idle sockets piling up, against the default settings."""

    def _open_idle(self, port, sources):
        """IDLE connections that send nothing, from ``sources`` in turn."""
        socks = []
        for n in range(IDLE):
            sock = socket.socket()
            self.addCleanup(sock.close)
            sock.bind((sources[n % len(sources)], 0))
            sock.setblocking(False)
            # Without waiting for the server to accept: a flood does
            # not wait either.
            sock.connect_ex(('127.0.0.1', port))
            socks.append(sock)
        return socks

    def _probe(self, url, source):
        """The slowest of a few GET / and GET /resource_providers."""
        slowest = 0
        for _ in range(3):
            for path, headers in (('/', {}), ('/resource_providers', AUTH)):
                start = time.monotonic()
                resp = self._get(url + path, headers, source)
                if resp.status_code == 503 and 'Retry-After' in resp.headers:
                    # A connection that arrived while the flood was still
                    # too fresh to close is told when to come back, as a
                    # client that honours Retry-After does; the wait
                    # counts towards the bound.
                    time.sleep(int(resp.headers['Retry-After']))
                    resp = self._get(url + path, headers, source)
                slowest = max(slowest, time.monotonic() - start)
                self.assertEqual(200, resp.status_code, resp.text)
        return slowest

    @staticmethod
    def _get(url, headers, source):
        with requests.Session() as session:
            session.mount('http://', _SourceAdapter(source))
            return session.get(url, headers=headers, timeout=30)

    def _check(self, sources):
        srv = self.useFixture(server.ServerFixture(workers=2))
        self._open_idle(srv.port, sources)
        # Let the workers take them in.
        time.sleep(1)
        # Before the limits closed idle connections, a probe waited for
        # the idle ones to time out (client_timeout, 30 s).
        self.assertLess(self._probe(srv.url, '127.0.0.1'), 5.0, srv.log())
        # The flooding address itself still gets the health check.
        with requests.Session() as session:
            session.mount('http://', _SourceAdapter(sources[0]))
            self.assertEqual(200, session.get(srv.url + '/',
                                              timeout=30).status_code)
        self.assertNotIn('Traceback', srv.log())

    def test_idle_connections_from_one_address(self):
        self._check(['127.0.0.2'])

    def test_idle_connections_from_many_addresses(self):
        self._check(['127.0.1.%d' % n for n in range(1, 101)])


class _SourceAdapter(adapters.HTTPAdapter):
    """Connections from the loopback address ``source``."""

    def __init__(self, source):
        self._source = source
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs['source_address'] = (self._source, 0)
        super().init_poolmanager(*args, **kwargs)
