"""A TCP proxy a test can cut or stall, between a service and its database.

``TCPProxy(host, port)`` listens on a free loopback port and forwards
each connection to ``host:port``, one thread per direction. The test can

* :meth:`cut`: close every connection and refuse new ones (a server or
  link that went away) until :meth:`restore`;
* :meth:`stall`: stop forwarding, and leave new connections unanswered,
  without closing anything (a server or link that hangs) until
  :meth:`restore`, which forwards what was held back.
"""

import select
import socket
import threading
import typing

import sqlalchemy as sa

from resobj.tests.api import fixtures as api_fixtures

_UP, _CUT, _STALLED = 'up', 'cut', 'stalled'
# The servers' ports when a database URL names none.
DEFAULT_PORTS = {'postgresql': 5432, 'mysql': 3306}


class ProxiedDatabase(typing.NamedTuple):
    # The new database's own URL, and through the proxy.
    url: sa.engine.URL
    proxy: 'TCPProxy'
    proxied_url: sa.engine.URL


def proxied_database(test, backend):
    """A new database of ``backend`` behind a proxy of ``test``'s own.

    Both go at the test's clean-up: the proxy closed, the database
    dropped.
    """
    database = api_fixtures._Database(backend)
    url = sa.engine.make_url(database.create())
    test.addCleanup(database.drop)
    proxy = TCPProxy(url.host or '127.0.0.1',
                     url.port or DEFAULT_PORTS[backend])
    test.addCleanup(proxy.close)
    return ProxiedDatabase(url, proxy,
                           url.set(host='127.0.0.1', port=proxy.port))


class TCPProxy:
    def __init__(self, host, port):
        self._target = (host, port)
        self._state = _UP
        self._changed = threading.Condition()
        self._pairs = []
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(('127.0.0.1', 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True,
                         name='proxy-accept').start()

    def cut(self):
        with self._changed:
            self._state = _CUT
            pairs, self._pairs = self._pairs, []
            self._changed.notify_all()
        for pair in pairs:
            _close(*pair)

    def stall(self):
        with self._changed:
            self._state = _STALLED
            self._changed.notify_all()

    def restore(self):
        with self._changed:
            self._state = _UP
            self._changed.notify_all()

    def close(self):
        self._closed = True
        self.cut()
        self._listener.close()

    def _wait_unstalled(self):
        """Wait while stalled; False if the proxy is cut or closed."""
        with self._changed:
            while self._state == _STALLED and not self._closed:
                self._changed.wait(0.1)
            return self._state == _UP and not self._closed

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._open, args=(client,),
                             daemon=True, name='proxy-open').start()

    def _open(self, client):
        if not self._wait_unstalled():
            client.close()
            return
        try:
            upstream = socket.create_connection(self._target, timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        with self._changed:
            if self._state != _UP:
                _close(client, upstream)
                return
            self._pairs.append((client, upstream))
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(source, sink),
                             daemon=True, name='proxy-pump').start()

    def _pump(self, source, sink):
        try:
            while True:
                readable, _, _ = select.select([source], [], [], 0.1)
                if not readable:
                    if self._state == _CUT or self._closed:
                        break
                    continue
                # Stalled: hold the data back (it stays in the socket
                # buffers) until restored; cut meanwhile: drop it.
                if not self._wait_unstalled():
                    break
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except (OSError, ValueError):
            # Closed by cut() meanwhile (ValueError: select() on it).
            pass
        _close(source, sink)


def _close(*sockets):
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
