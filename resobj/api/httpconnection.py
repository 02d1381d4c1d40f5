"""One client connection of resobj-api's HTTP server.

:class:`Connection` is an asyncio protocol: the event loop feeds it the
bytes a client sends, h11 (the HTTP/1.1 protocol library, through its
public API) turns them into a request, and only once the request has
arrived whole, headers and body, is it handed to a thread
(:meth:`resobj.api.httpserver.Server.dispatch`). The thread runs the
application (:func:`run_application`) and gives the answer back to the
loop, which writes it.

What the connection refuses itself, before any thread is involved, is
answered in the API's error format (:data:`_ERRORS`), with a stable
code and a request id, and the connection is closed.

A connection is in one of five states (:class:`State`); the server
reads it to time connections out and to choose which idle connection
to close when it must make room.
"""

import asyncio
import email.utils
import enum
import io
import sys
import threading
import time
import urllib.parse
import uuid

import h11
from oslo_log import log as logging

from resobj.api import errors
from resobj.api import util

LOG = logging.getLogger(__name__)

# The WSGI environ key holding when the request arrived whole: the
# application counts the request's bounds from it, the wait for a thread
# included.
ARRIVED = util.ARRIVED

# How long the thread that served a request waits for the loop to write
# its answer before releasing it anyway (the loop writes within
# milliseconds; it only fails to when the worker is stopping).
_WRITE_WAIT = 5.0


class State(enum.Enum):
    WAITING = 'waiting for a request'
    RECEIVING = 'receiving a request'
    SERVING = 'serving a request'
    SENDING = 'sending an answer'
    CLOSED = 'closed'


# status -> (code, detail). The detail names the option that sets a
# limit, so an operator knows what to raise.
_ERRORS = {
    400: (errors.REQUEST_MALFORMED,
          'The request is not well-formed HTTP/1.1: %(why)s.'),
    408: (errors.REQUEST_TIMEOUT,
          'The request did not arrive whole within %(client_timeout)d '
          'seconds ([api] client_timeout).'),
    413: (errors.REQUEST_TOO_LARGE,
          'The request body is larger than %(max_request_body_size)d bytes '
          '([api] max_request_body_size).'),
    431: (errors.REQUEST_HEADERS_TOO_LARGE,
          'The request line and headers are larger than '
          '%(max_request_header_size)d bytes ([api] '
          'max_request_header_size).'),
    501: (errors.REQUEST_UNSUPPORTED_ENCODING,
          'The request uses a transfer coding this server does not '
          'implement: %(why)s.'),
    503: (errors.SERVER_BUSY,
          'This worker holds as many client connections as it may '
          '([api] connection_limit, connection_limit_per_client); this '
          'one may only ask for GET /. Try again shortly.'),
}

_ROOT_METHODS = (b'GET', b'HEAD')


def _reason(status):
    return errors.HTTPError(status, '').title


class _Date:
    """The Date header's value, formatted once a second."""

    def __init__(self):
        self._second = None
        self._value = None

    def __call__(self):
        second = int(time.time())
        if second != self._second:
            self._value = email.utils.formatdate(
                second, usegmt=True).encode('ascii')
            self._second = second
        return self._value


_date = _Date()


class Connection(asyncio.Protocol):
    """One client connection; ``server`` is its :class:`Server`."""

    def __init__(self, server):
        self.server = server
        limits = server.limits
        self._limits = limits
        self._h11 = h11.Connection(
            h11.SERVER,
            max_incomplete_event_size=limits.max_request_header_size)
        self.transport = None
        self.addr = ''
        self.port = 0
        self.state = State.WAITING
        # When the state's clock started: the connection's opening for a
        # first request, a request's first byte, an answer's writing.
        self.since = time.monotonic()
        # Requests answered on this connection.
        self.served = 0
        # Taken in beyond the connection limits: GET / only, then closed.
        self.reserved = False
        self._writing_paused = False
        # Bytes fed to h11, and how many of them came before the current
        # request: the request's head size is the difference.
        self._received = 0
        self._mark = 0
        self._request = None
        self._body = []
        self._body_size = 0

    # asyncio's protocol callbacks, in the loop's thread -----------------

    def connection_made(self, transport):
        self.transport = transport
        peer = transport.get_extra_info('peername')
        if isinstance(peer, tuple):
            self.addr, self.port = peer[0], peer[1]
        # pause_writing() as soon as anything is left unsent, and
        # resume_writing() once everything is: an answer is sent when the
        # transport's buffer is empty.
        transport.set_write_buffer_limits(high=0)
        self.server.admit(self)

    def data_received(self, data):
        if self.state is State.CLOSED:
            return
        self._received += len(data)
        self._h11.receive_data(data)
        if self.state is State.WAITING:
            self._start_receiving()
        if self.state is State.RECEIVING:
            self._read_events()

    def eof_received(self):
        # The client will send nothing more; an answer it waits for may
        # still be written (keep the transport open for it).
        self._h11.receive_data(b'')
        if self.state is State.WAITING:
            self.close()
        elif self.state is State.RECEIVING:
            self._read_events()
        return True

    def connection_lost(self, exc):
        if self.state is State.RECEIVING:
            self._log_left()
        self._set_closed()

    def _log_left(self):
        """One line for a client gone before its request was whole."""
        if self._request is None:
            length = 'unknown'
        else:
            length = dict(self._request.headers).get(
                b'content-length', b'unknown').decode('ascii')
        LOG.info('Client %s disconnected before sending its whole '
                 'request (%s of %s body bytes received).', self.addr,
                 self._body_size, length)

    def pause_writing(self):
        self._writing_paused = True

    def resume_writing(self):
        self._writing_paused = False
        if self.state is State.SENDING:
            self._next_request()

    # Reading a request ----------------------------------------------------

    def _start_receiving(self):
        self.state = State.RECEIVING
        if self.served:
            # A first request's clock runs from the connection's opening.
            self.since = time.monotonic()
        self.server.left_idle(self)

    def _read_events(self):
        while self.state is State.RECEIVING:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                if self._client_closed():
                    # Gone before its request was whole: nobody to answer.
                    self._log_left()
                    self.close()
                else:
                    self.refuse(exc.error_status_hint, str(exc))
                return
            kind = type(event)
            if kind is h11.Data:
                self._body_size += len(event.data)
                if self._body_size > self._limits.max_request_body_size:
                    self.refuse(413, 'chunked body over the limit')
                    return
                self._body.append(event.data)
            elif kind is h11.Request:
                self._begin(event)
            elif kind is h11.EndOfMessage:
                self._dispatch()
            elif kind is h11.ConnectionClosed:
                self.close()
            else:
                # NEED_DATA or PAUSED: wait for more bytes.
                return

    def _client_closed(self):
        return self._h11.trailing_data[1]

    def _unread(self):
        """Bytes fed to h11 that it has not turned into events yet."""
        return len(self._h11.trailing_data[0])

    def _begin(self, request):
        head = self._received - self._unread() - self._mark
        if head > self._limits.max_request_header_size:
            self.refuse(431, 'headers over the limit')
            return
        self._request = request
        self._body = []
        self._body_size = 0
        # h11 has checked both headers' syntax.
        headers = dict(request.headers)
        if b'transfer-encoding' in headers and b'content-length' in headers:
            # Two framings that a proxy in front may read differently.
            self.refuse(400, 'both Content-Length and Transfer-Encoding')
            return
        length = int(headers.get(b'content-length', 0))
        if length > self._limits.max_request_body_size:
            self.refuse(413, 'announced body over the limit')
            return
        if self.reserved and not is_root(request):
            self.server.stats.refused_busy += 1
            self.refuse(503, 'over the connection limits', log=False)
            return
        if self._h11.they_are_waiting_for_100_continue:
            self.transport.write(self._h11.send(h11.InformationalResponse(
                status_code=100, headers=[])))

    def _dispatch(self):
        arrived = time.monotonic()
        request, body = self._request, b''.join(self._body)
        self._request, self._body = None, []
        self._mark = self._received - self._unread()
        self.state = State.SERVING
        self.since = arrived
        # Pipelined requests wait in the socket until this one is
        # answered.
        self.transport.pause_reading()
        self.server.dispatch(self, request, body, arrived)

    # Answering ----------------------------------------------------------

    def respond(self, payload, close, written):
        """Write an answer built by :func:`run_application` (loop thread).

        ``written`` is set once the answer is handed to the transport, so
        that the thread which built it releases it after it was sent.
        """
        try:
            if self.state is not State.SERVING:
                # The client left meanwhile, or the worker stopped.
                return
            if payload is None:
                self.transport.abort()
                self._set_closed()
                return
            self.transport.write(payload)
            self.served += 1
            if close or self._h11.our_state is h11.MUST_CLOSE:
                self.close()
                return
            self._h11.start_next_cycle()
            self.state = State.SENDING
            self.since = time.monotonic()
            if not self._writing_paused:
                self._next_request()
        finally:
            written.set()

    def wants_close(self):
        """Whether the answer being built should close the connection."""
        return (self.reserved or self.server.stopping
                or not self._limits.keepalive)

    def _next_request(self):
        self.state = State.WAITING
        self.since = time.monotonic()
        self.server.became_idle(self)
        self.transport.resume_reading()
        if self._h11.trailing_data[0] or self._client_closed():
            # A pipelined request (or the client's end) already read.
            self._start_receiving()
            self._read_events()

    def refuse(self, status, why, log=True):
        """Answer ``status`` in the API's error format, then close."""
        code, detail = _ERRORS.get(
            status, (errors.UNDEFINED, 'The server failed: %(why)s.'))
        detail = detail % dict(self._limits._asdict(), why=why)
        request_id = 'req-%s' % uuid.uuid4()
        body = errors.HTTPError(status, detail, code).body(request_id)
        if log:
            LOG.info('Answered %(status)d to %(client)s before any handler '
                     'ran (%(request_id)s): %(detail)s',
                     {'status': status, 'client': self.addr,
                      'request_id': request_id, 'detail': detail})
        head = [b'HTTP/1.1 %d %s' % (status, _reason(status).encode()),
                b'Content-Type: application/json',
                b'Content-Length: %d' % len(body),
                b'Date: ' + _date(),
                b'x-openstack-request-id: ' + request_id.encode(),
                b'Connection: close']
        if status == 503:
            head.append(b'Retry-After: 1')
        self.transport.write(b'\r\n'.join(head) + b'\r\n\r\n' + body)
        self.close()

    def time_out(self):
        """End a request that did not arrive in time: 408, then close."""
        if self.state is not State.RECEIVING or self.reserved:
            # Nothing sent at all (nobody to answer), or a connection in
            # the reserve, which has no claim to an answer.
            self.close()
            return
        LOG.info('Client %s did not send its request within %d s; '
                 'disconnecting it.', self.addr,
                 self._limits.client_timeout)
        self.refuse(408, 'timed out', log=False)

    def close(self):
        """Close once what was written is sent; forget the connection."""
        if self.transport is not None:
            self.transport.close()
        self._set_closed()

    def abort(self):
        """Close at once, dropping what is unsent."""
        if self.transport is not None:
            self.transport.abort()
        self._set_closed()

    def _set_closed(self):
        if self.state is not State.CLOSED:
            self.state = State.CLOSED
            self.server.forget(self)

    # For the thread that serves the request -----------------------------

    def build_answer(self, request, status, headers, body, close):
        """The bytes of an answer, through this connection's h11 state.

        Called by the serving thread while the connection is SERVING:
        the loop does not touch the h11 state then. None when the
        application's answer cannot be sent (its headers or length are
        not valid HTTP): the connection is then dropped.
        """
        code = int(status[:3])
        response_headers = [(name.encode('latin-1'), value.encode('latin-1'))
                            for name, value in headers]
        names = {name.lower() for name, _ in response_headers}
        if b'content-length' not in names and code not in (204, 304):
            response_headers.append((b'Content-Length', b'%d' % len(body)))
        response_headers.append((b'Date', _date()))
        if close:
            response_headers.append((b'Connection', b'close'))
        try:
            payload = self._h11.send(h11.Response(
                status_code=code, headers=response_headers,
                reason=status[4:].encode('latin-1')))
            if body and request.method != b'HEAD':
                payload += self._h11.send(h11.Data(data=body))
            return payload + self._h11.send(h11.EndOfMessage())
        except h11.LocalProtocolError:
            LOG.exception('The answer to %s %s cannot be sent',
                          request.method.decode('ascii'),
                          request.target.decode('latin-1'))
            return None


def is_root(request):
    """Whether the h11 ``request`` is GET or HEAD of ``/``."""
    return (request.method in _ROOT_METHODS
            and request.target.partition(b'?')[0] == b'/')


def environ(connection, request, body, arrived, server_name, server_port):
    """The WSGI environ of the h11 ``request`` (PEP 3333)."""
    target = request.target
    if target.startswith(b'/'):
        path, _, query = target.partition(b'?')
    else:
        # The absolute form (http://host/path), which proxies may send.
        parts = urllib.parse.urlsplit(target)
        path, query = parts.path or b'/', parts.query
    if path.startswith(b'/'):
        # Extra slashes in front name the same path.
        path = b'/' + path.lstrip(b'/')
    env = {
        'REQUEST_METHOD': request.method.decode('ascii'),
        'SCRIPT_NAME': '',
        'PATH_INFO': urllib.parse.unquote_to_bytes(path).decode('latin-1'),
        'QUERY_STRING': query.decode('latin-1'),
        'REQUEST_URI': target.decode('latin-1'),
        'SERVER_NAME': server_name,
        'SERVER_PORT': server_port,
        'SERVER_PROTOCOL': 'HTTP/' + request.http_version.decode('ascii'),
        'SERVER_SOFTWARE': 'resobj-api',
        'REMOTE_ADDR': connection.addr,
        'REMOTE_PORT': str(connection.port),
        'wsgi.version': (1, 0),
        'wsgi.url_scheme': 'http',
        'wsgi.input': io.BytesIO(body),
        'wsgi.input_terminated': True,
        'wsgi.errors': sys.stderr,
        'wsgi.multithread': True,
        'wsgi.multiprocess': True,
        'wsgi.run_once': False,
        ARRIVED: arrived,
    }
    chunked = False
    for name, value in request.headers:
        if b'_' in name:
            # HTTP_X_AUTH_TOKEN must come from X-Auth-Token only, never
            # from an X_Auth_Token a proxy in front let through.
            continue
        key = name.decode('ascii').upper().replace('-', '_')
        if key == 'TRANSFER_ENCODING':
            # The body is handed over whole, its chunks undone.
            chunked = True
            continue
        if key not in ('CONTENT_TYPE', 'CONTENT_LENGTH'):
            key = 'HTTP_' + key
        value = value.decode('latin-1')
        if key in env:
            value = env[key] + ',' + value
        env[key] = value
    if chunked:
        env['CONTENT_LENGTH'] = str(len(body))
    return env


def run_application(app, env):
    """Call the WSGI ``app``; (status, headers, body bytes, iterable).

    The iterable is the application's, to close once the answer is sent
    (PEP 3333). An application that raises is answered 500 in the API's
    error format.
    """
    answer = {}
    written = []

    def start_response(status, headers, exc_info=None):
        # Nothing is sent before the application returns: a later call
        # (with exc_info) simply replaces the answer.
        answer['status'] = status
        answer['headers'] = headers
        return written.append

    result = None
    try:
        result = app(env, start_response)
        for chunk in result:
            if chunk:
                written.append(chunk)
        status, headers = answer['status'], answer['headers']
    except Exception:  # noqa: B902
        LOG.exception('Unexpected error on %s %s', env['REQUEST_METHOD'],
                      env['PATH_INFO'])
        request_id = 'req-%s' % uuid.uuid4()
        written = [errors.HTTPError(
            500, 'An unexpected error occurred; see the server log.'
        ).body(request_id)]
        status = '500 Internal Server Error'
        headers = [('Content-Type', 'application/json'),
                   ('x-openstack-request-id', request_id)]
    return status, headers, b''.join(written), result


def serve(app, connection, request, body, arrived, server_name,
          server_port, loop):
    """Serve one request in a thread of the pool; hand the answer back."""
    env = environ(connection, request, body, arrived, server_name,
                  server_port)
    status, headers, data, result = run_application(app, env)
    close = connection.wants_close()
    payload = connection.build_answer(request, status, headers, data, close)
    written = threading.Event()
    try:
        loop.call_soon_threadsafe(connection.respond, payload, close,
                                  written)
        # Released (result.close()) only once written: the client need not
        # wait for the clean-up (see resobj.api.collector).
        written.wait(_WRITE_WAIT)
    except RuntimeError:
        # The loop is closed: the worker has stopped.
        pass
    finally:
        if hasattr(result, 'close'):
            result.close()
