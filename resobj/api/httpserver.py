"""The HTTP server of resobj-api's workers: waitress, with resobj's limits.

waitress reads every request, headers and body, in one event loop per
worker, and hands it to a thread of its pool only once it has arrived
whole: a slow client holds a connection (a file descriptor), never a
thread that other clients wait for. What it adds to waitress:

* a bound on the time one request may take to arrive (``[api]
  client_timeout``): waitress only drops connections that have sent
  nothing for a while, which a client sending one byte a second never
  is. A client still sending when the bound passes gets a 408; one that
  has sent nothing is disconnected;
* the errors waitress answers itself (400 on bad framing, 408, 413, 431,
  501 on an unknown transfer coding) in the API's JSON error format, with
  a stable code and a request id (:data:`_ERRORS`);
* a client that disconnects halfway through a request: one info line,
  not a traceback;
* a lane of its own for ``GET /`` (the version document, which needs no
  database): a load balancer's health check is answered while every
  thread of the pool waits on a stalled database.

waitress documents ``serve`` and ``create_server``, not the classes this
module extends (its channel, error task and server, and the event loop
it runs); they are used here and nowhere else, and
``resobj/tests/unit/test_httpserver.py`` fails if they change.
"""

import socket
import time
import uuid

from oslo_log import log as logging
from waitress import adjustments
from waitress import channel as waitress_channel
from waitress import server as waitress_server
from waitress import task as waitress_task
from waitress import utilities
from waitress import wasyncore

from resobj.api import errors

LOG = logging.getLogger(__name__)

# How often the loop wakes with nothing to do, to check the client
# timeouts, whether the worker must stop, and tell the master it lives.
TICK = 1.0


class RequestTimeout(utilities.Error):
    code = 408
    reason = 'Request Timeout'


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
}


class _ErrorTask(waitress_task.ErrorTask):
    """An error waitress answers itself, in the API's error format."""

    def execute(self):
        error = self.request.error
        server = self.channel.server
        code, detail = _ERRORS.get(
            error.code, (errors.UNDEFINED, 'The server failed: %(why)s.'))
        detail = detail % dict(server.limits, why=error.body)
        request_id = 'req-%s' % uuid.uuid4()
        body = errors.HTTPError(error.code, detail, code).body(request_id)
        LOG.info('Answered %(status)d to %(client)s before any handler '
                 'ran (%(request_id)s): %(detail)s',
                 {'status': error.code, 'client': self.channel.addr[0],
                  'request_id': request_id, 'detail': detail})
        self.status = '%d %s' % (error.code, error.reason)
        self.response_headers.extend([
            ('Content-Type', 'application/json'),
            ('x-openstack-request-id', request_id)])
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _Channel(waitress_channel.HTTPChannel):
    """One client connection, timing each request as it arrives."""

    error_task_class = _ErrorTask

    def __init__(self, server, sock, addr, adj, map=None):
        super().__init__(server, sock, addr, adj, map=map)
        # The first request's clock starts when the connection opens: a
        # client that connects and sends nothing is as slow as one that
        # trickles.
        self.receiving_since = time.time()

    def received(self, data):
        if self.request is None and self.receiving_since is None:
            self.receiving_since = time.time()
        result = super().received(data)
        if self.request is None:
            # Every request that arrived is whole: no clock runs until
            # the next one's first byte (keepalive bounds the wait).
            self.receiving_since = None
        return result

    def time_out(self):
        """End a request that did not arrive in time: 408, then close."""
        with self.requests_lock:
            partial = self.request
            self.request = None
            self.receiving_since = None
            if partial is None:
                # Nothing sent at all: nobody to answer.
                self.will_close = True
                return
            partial.close()
            LOG.info('Client %s did not send its request within %d s; '
                     'disconnecting it.', self.addr[0],
                     self.server.limits['client_timeout'])
            # The shape waitress gives a request it refuses while parsing.
            refused = self.parser_class(self.adj)
            refused.error = RequestTimeout('timed out')
            refused.completed = True
            self.requests.append(refused)
            if len(self.requests) == 1:
                self.server.add_task(self)

    def handle_close(self):
        if self.request is not None and not self.will_close:
            request = self.request
            LOG.info('Client %s disconnected before sending its whole '
                     'request (%s of %s body bytes received).',
                     self.addr[0], request.body_bytes_received,
                     request.content_length if request.headers_finished
                     else 'unknown')
            self.request = None
            request.close()
        super().handle_close()


def _root_only(channel):
    """Whether every request ``channel`` has queued is GET or HEAD /."""
    return bool(channel.requests) and all(
        request.error is None and request.command in ('GET', 'HEAD')
        and request.path == '/' for request in channel.requests)


class _Listener(waitress_server.TcpWSGIServer):
    """One listening socket; it also enforces the client timeout."""

    channel_class = _Channel

    def add_task(self, channel):
        # The root lane's single thread serves only the version document,
        # which reads nothing: it is never held by a stalled database.
        if _root_only(channel):
            self.root_dispatcher.add_task(channel)
        else:
            super().add_task(channel)

    def maintenance(self, now):
        super().maintenance(now)
        cutoff = now - self.limits['client_timeout']
        for channel in list(self.active_channels.values()):
            since = channel.receiving_since
            if (since is not None and since < cutoff
                    and not channel.requests and not channel.will_close):
                channel.time_out()


class Server:
    """waitress serving ``app`` on already-listening ``sockets``.

    ``limits``: ``threads``, ``keepalive``, ``client_timeout``,
    ``connection_limit``, ``max_request_body_size``,
    ``max_request_header_size`` (the ``[api]`` options of those names).
    """

    def __init__(self, app, sockets, limits):
        self.limits = dict(limits)
        self._map = {}
        self._adj = adjustments.Adjustments(
            threads=limits['threads'],
            connection_limit=limits['connection_limit'],
            channel_timeout=limits['keepalive'],
            # waitress refuses a size equal to its limit; resobj's
            # options are the largest sizes accepted.
            max_request_body_size=limits['max_request_body_size'] + 1,
            max_request_header_size=limits['max_request_header_size'] + 1,
            # Maintenance (keepalive and client timeouts) runs at most
            # this often, in seconds.
            cleanup_interval=1,
            asyncore_loop_timeout=TICK,
            # poll(): select() cannot watch descriptors above 1023.
            asyncore_use_poll=True,
            # A reset connection is the client's doing; handle_close
            # logs it in one line.
            log_socket_errors=False,
            ident='resobj-api')
        self._dispatcher = waitress_task.ThreadedTaskDispatcher()
        self._dispatcher.set_thread_count(self._adj.threads)
        self._root_dispatcher = waitress_task.ThreadedTaskDispatcher()
        self._root_dispatcher.set_thread_count(1)
        self._listeners = []
        for sock in sockets:
            listener = _Listener(
                app, self._map, _sock=sock, dispatcher=self._dispatcher,
                adj=self._adj, bind_socket=False,
                sockinfo=(sock.family, sock.type, sock.proto,
                          sock.getsockname()))
            listener.limits = self.limits
            listener.root_dispatcher = self._root_dispatcher
            self._listeners.append(listener)

    def serve(self, running, tick):
        """Serve while ``running()``; call ``tick()`` about every TICK s."""
        last_tick = 0
        while running():
            wasyncore.loop(timeout=TICK, map=self._map, use_poll=True,
                           count=1)
            now = time.monotonic()
            if now - last_tick >= TICK:
                last_tick = now
                tick()

    def stop(self, grace):
        """Stop listening, finish the requests in progress, close.

        Waits at most ``grace`` seconds for requests being served and
        their responses to go out; requests still arriving are dropped.
        """
        for listener in self._listeners:
            # Only the listening socket: the listener's trigger (which
            # wakes the loop when a response is ready) keeps working.
            wasyncore.dispatcher.close(listener)
        deadline = time.monotonic() + grace
        while self._busy() and time.monotonic() < deadline:
            wasyncore.loop(timeout=0.1, map=self._map, use_poll=True,
                           count=1)
        wasyncore.close_all(self._map, ignore_all=True)
        for dispatcher in (self._dispatcher, self._root_dispatcher):
            dispatcher.shutdown(timeout=max(
                0.0, deadline - time.monotonic()))

    def _busy(self):
        return any(channel.requests or channel.total_outbufs_len
                   for listener in self._listeners
                   for channel in listener.active_channels.values())


def listening_socket(sock):
    """A socket object of its own for the listening ``sock`` (a dup)."""
    return socket.socket(sock.family, sock.type, sock.proto,
                         fileno=socket.dup(sock.fileno()))
