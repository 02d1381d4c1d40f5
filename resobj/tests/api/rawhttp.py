"""Raw HTTP/1.1 over a socket, for requests no HTTP client library sends.

Slow, malformed, oversized: what the server layer must answer itself.
"""

import json
import socket
import time


def connect(port, timeout=10, source='127.0.0.1'):
    """A connection to ``port``, from the loopback address ``source``."""
    sock = socket.create_connection(('127.0.0.1', port), timeout=timeout,
                                    source_address=(source, 0))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_until_closed(sock, timeout):
    """Everything the server sends until it closes (or ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    data = b''
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError('the server did not close within %s s; '
                               'received %r' % (timeout, data[:200]))
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


class Answer:
    """A parsed response: ``status``, ``headers`` (lower-case), ``body``."""

    def __init__(self, data):
        head, _, self.body = data.partition(b'\r\n\r\n')
        lines = head.decode('latin-1').split('\r\n')
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(':')
            self.headers[name.strip().lower()] = value.strip()

    def error(self):
        """The one error of a body in the API's format."""
        document = json.loads(self.body)
        [error] = document['errors']
        return error


def exchange(port, data, timeout=10):
    """Send ``data``, read until the server closes, parse the answer."""
    with connect(port, timeout) as sock:
        sock.sendall(data)
        return Answer(read_until_closed(sock, timeout))


def exchange_from(port, source, data, timeout=10):
    """:func:`exchange` from the loopback address ``source``."""
    with connect(port, timeout, source) as sock:
        sock.sendall(data)
        return Answer(read_until_closed(sock, timeout))
