"""The HTTP server of resobj-api's workers: asyncio, h11 and two pools.

Each worker runs one asyncio event loop. It reads every request,
headers and body, through h11 (:mod:`resobj.api.httpconnection`), and
only once a request has arrived whole does it hand it to a thread of a
pool that runs the application: a slow client holds a connection (a
file descriptor and a buffer), never a thread that other clients wait
for. Everything here uses the public APIs of asyncio, h11 and the
standard library.

What the server guarantees, each ``[api]`` option:

* a request arrives whole within ``client_timeout`` of its first byte
  (of the connection's opening, for a first request), however steadily
  it trickles: otherwise 408 and the connection is closed, or just
  closed when nothing was sent;
* an idle connection is kept ``keepalive`` seconds between requests;
* a worker holds at most ``connection_limit`` connections, and at most
  ``connection_limit_per_client`` from one source address. A new
  connection beyond either limit closes the connection of that scope
  that has been idle longest (nothing received of a next request, no
  answer being served, for :data:`SETTLED` seconds at least), which a
  client reopens when it needs it; when none is, the new connection
  joins a small reserve
  (:data:`RESERVE` connections) where only ``GET /`` and ``HEAD /``
  are answered, within :data:`RESERVE_SECONDS`, and anything else gets
  503 (``resobj.server.busy``). The reserve makes room for a newcomer by
  closing a connection not being answered (the oldest settled one, or
  else the oldest of the client holding most of the reserve), so a load
  balancer's health check gets in while other clients flood it;
* ``GET /`` and ``HEAD /`` (the version document, which reads no
  database) have a thread of their own: answered while every thread
  of the pool waits on a stalled database;
* each request records when it arrived whole
  (:data:`httpconnection.ARRIVED` in its environ): the application's
  bound on a stalled database counts from then, the wait for a thread
  included;
* stopping closes the listening sockets, lets the requests being served
  finish for at most the grace period, and drops the rest;
* instead of a log line per queued request, one line a minute at most
  (:data:`METRICS_INTERVAL`) says how long requests waited for a thread
  and what the connection limits did, when either is worth saying.
"""

import asyncio
import collections
import queue
import socket
import threading
import time
import typing

from oslo_log import log as logging

from resobj.api import httpconnection
from resobj import context as resobj_context

LOG = logging.getLogger(__name__)

State = httpconnection.State

# How often the loop checks the connections' clocks, whether the worker
# must stop, and tells the master it lives, in seconds.
TICK = 1.0
# Connections taken in beyond the limits, for GET / and HEAD / only.
RESERVE = 32
# How long a connection in the reserve has to send its request.
RESERVE_SECONDS = 5
# At most one metrics line per this many seconds.
METRICS_INTERVAL = 60
# A request that waited this long for a thread is worth a metrics line.
SLOW_QUEUE = 1.0


# How long a connection must have been idle (or open, for one that has
# sent nothing yet) before it is closed to make room: a client's request
# may be on its way on a connection just opened or just answered.
SETTLED = 1.0


def _settled(connections):
    """The first of ``connections`` (oldest first) settled, or None."""
    first = next(iter(connections), None)
    if first is None or time.monotonic() - first.since < SETTLED:
        return None
    return first


class Limits(typing.NamedTuple):
    """The ``[api]`` options the server enforces (see resobj.conf.api)."""

    threads: int
    keepalive: int
    client_timeout: int
    connection_limit: int
    connection_limit_per_client: int
    max_request_body_size: int
    max_request_header_size: int


class Stats:
    """What happened since the last metrics line."""

    def __init__(self):
        # The pools' threads count the waits; the loop's thread the rest.
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.slow_waits = 0
        self.longest_wait = 0.0
        self.most_waiting = 0
        self.evicted = 0
        self.reserved = 0
        self.refused_busy = 0
        self.dropped = 0

    def take_line(self, seconds):
        """The metrics line (or None: nothing to say); starts afresh."""
        with self.lock:
            line = self._line(seconds)
            self.reset()
        return line

    def _line(self, seconds):
        parts = []
        if self.slow_waits:
            parts.append(
                '%d requests waited over %.0f s for a thread (longest '
                '%.1f s, at most %d waiting at once)' % (
                    self.slow_waits, SLOW_QUEUE, self.longest_wait,
                    self.most_waiting))
        if self.evicted:
            parts.append('%d idle connections closed to make room for '
                         'new ones' % self.evicted)
        if self.reserved or self.dropped:
            parts.append('%d connections over the connection limits '
                         'taken in the reserve (%d answered 503), %d closed '
                         'to make room there' % (
                             self.reserved, self.refused_busy,
                             self.dropped))
        if not parts:
            return None
        return 'HTTP server, last %d s: %s.' % (seconds, '; '.join(parts))


class _Pool:
    """Threads running requests from one queue, first come first served."""

    def __init__(self, name, threads, serve, stats):
        self._queue = queue.SimpleQueue()
        self._serve = serve
        self._stats = stats
        self._lock = stats.lock
        self._waiting = 0
        self._threads = [
            threading.Thread(target=self._run, daemon=True,
                             name='%s-%d' % (name, n))
            for n in range(threads)]
        for thread in self._threads:
            thread.start()

    def submit(self, job):
        with self._lock:
            self._waiting += 1
            waiting = self._waiting
        self._queue.put((time.monotonic(), job))
        return waiting

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            queued_at, job = item
            waited = time.monotonic() - queued_at
            with self._lock:
                self._waiting -= 1
                if waited >= SLOW_QUEUE:
                    self._stats.slow_waits += 1
                    self._stats.longest_wait = max(
                        self._stats.longest_wait, waited)
            try:
                self._serve(*job)
            except Exception:  # noqa: B902
                # serve() answers the application's errors itself; a
                # failure here must not end the thread.
                LOG.exception('The HTTP server failed to serve a request')

    def stop(self, timeout):
        for _ in self._threads:
            self._queue.put(None)
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))


class Server:
    """Serve ``app`` on already-listening ``sockets`` with ``limits``.

    ``limits``: a mapping with the :class:`Limits` names (the ``[api]``
    options of those names). ``backlog``: the listening queue's length,
    as the sockets were given it.
    """

    def __init__(self, app, sockets, limits, backlog=2048):
        self.app = app
        self.limits = Limits(**{name: limits[name]
                                for name in Limits._fields})
        self.stats = Stats()
        self.stopping = False
        self._sockets = sockets
        self._backlog = backlog
        self._loop = None
        self._listeners = []
        # Every connection in the limits, and how many per address.
        self._connections = set()
        self._per_addr = collections.Counter()
        # The idle connections in the limits, oldest first, all and per
        # address (dicts keep insertion order).
        self._idle = {}
        self._idle_per_addr = collections.defaultdict(dict)
        # The reserve's connections, oldest first, and how many per
        # address.
        self._reserve = {}
        self._reserve_per_addr = collections.Counter()
        self._pool = None
        self._root_pool = None

    # Admission: called by the connections, in the loop's thread ---------

    def admit(self, conn):
        """Take in a new connection, making room if the limits are met."""
        addr = conn.addr
        if self._per_addr[addr] >= self.limits.connection_limit_per_client:
            victim = _settled(self._idle_per_addr.get(addr, ()))
        elif len(self._connections) >= self.limits.connection_limit:
            victim = _settled(self._idle)
        else:
            victim = conn
        if victim is None:
            self._admit_reserved(conn)
            return
        if victim is not conn:
            self.stats.evicted += 1
            victim.close()
        self._connections.add(conn)
        self._per_addr[addr] += 1
        self.became_idle(conn)

    def _admit_reserved(self, conn):
        if len(self._reserve) >= RESERVE:
            victim = self._reserve_victim()
            self.stats.dropped += 1
            if victim is None:
                # Every reserved connection is being answered.
                conn.abort()
                return
            victim.close()
        self.stats.reserved += 1
        conn.reserved = True
        self._reserve[conn] = None
        self._reserve_per_addr[conn.addr] += 1

    def _reserve_victim(self):
        """The reserve's connection to close for a newcomer, or None.

        The oldest that has settled, not being answered; if none has,
        the oldest of the address holding the most of the reserve: a
        client flooding the reserve displaces its own connections, not
        another client's health check.
        """
        waiting = [c for c in self._reserve
                   if c.state in (State.WAITING, State.RECEIVING)]
        victim = _settled(waiting)
        if victim is None and waiting:
            heaviest = max({c.addr for c in waiting},
                           key=self._reserve_per_addr.__getitem__)
            victim = next(c for c in waiting if c.addr == heaviest)
        return victim

    def became_idle(self, conn):
        if conn.reserved:
            return
        self._idle[conn] = None
        self._idle_per_addr[conn.addr][conn] = None

    def left_idle(self, conn):
        if conn.reserved:
            return
        self._idle.pop(conn, None)
        mine = self._idle_per_addr.get(conn.addr)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self._idle_per_addr[conn.addr]

    def forget(self, conn):
        if conn.reserved:
            if conn in self._reserve:
                del self._reserve[conn]
                self._reserve_per_addr[conn.addr] -= 1
                if not self._reserve_per_addr[conn.addr]:
                    del self._reserve_per_addr[conn.addr]
            return
        self.left_idle(conn)
        if conn in self._connections:
            self._connections.discard(conn)
            self._per_addr[conn.addr] -= 1
            if not self._per_addr[conn.addr]:
                del self._per_addr[conn.addr]

    # Requests -----------------------------------------------------------

    def dispatch(self, conn, request, body, arrived):
        """Queue a whole request for a thread (loop thread)."""
        pool = (self._root_pool if httpconnection.is_root(request)
                else self._pool)
        waiting = pool.submit((conn, request, body, arrived))
        self.stats.most_waiting = max(self.stats.most_waiting, waiting)

    def _serve(self, conn, request, body, arrived):
        httpconnection.serve(self.app, conn, request, body, arrived,
                             self._server_name, self._server_port,
                             self._loop)

    # The loop -----------------------------------------------------------

    def serve(self, running, tick, grace):
        """Serve while ``running()``; call ``tick()`` about every TICK s.

        Then stop: wait at most ``grace`` seconds for the requests being
        served and their answers; requests still arriving are dropped.
        """
        self._pool = _Pool('resobj-api', self.limits.threads, self._serve,
                           self.stats)
        self._root_pool = _Pool('resobj-api-root', 1, self._serve,
                                self.stats)
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._run(running, tick, grace))
        finally:
            for conn in list(self._connections) + list(self._reserve):
                conn.abort()
            loop.close()
            self._pool.stop(0.5)
            self._root_pool.stop(0.5)

    async def _run(self, running, tick, grace):
        # The loop's own log lines are about no request.
        resobj_context.clear_current()
        loop = asyncio.get_running_loop()
        for sock in self._sockets:
            self._listeners.append(await loop.create_server(
                lambda: httpconnection.Connection(self), sock=sock,
                backlog=self._backlog))
        name = self._sockets[0].getsockname() if self._sockets else ('', 0)
        self._server_name, self._server_port = str(name[0]), str(name[1])
        last_metrics = time.monotonic()
        while running():
            await asyncio.sleep(TICK)
            now = time.monotonic()
            self._time_out(now)
            if now - last_metrics >= METRICS_INTERVAL:
                self._log_metrics(now - last_metrics)
                last_metrics = now
            tick()
        await self._stop(grace)

    def _time_out(self, now):
        limits = self.limits
        for conn in list(self._connections) + list(self._reserve):
            state = conn.state
            if conn.reserved and state in (State.WAITING, State.RECEIVING):
                bound = min(RESERVE_SECONDS, limits.client_timeout)
            elif state is State.WAITING:
                bound = (limits.keepalive if conn.served
                         else limits.client_timeout)
            elif state in (State.RECEIVING, State.SENDING):
                # An answer the client does not take in as long as it may
                # take to send a request is dropped.
                bound = limits.client_timeout
            else:
                # Being served: the application bounds its own waits.
                continue
            if now - conn.since > bound:
                if state is State.SENDING:
                    conn.abort()
                else:
                    conn.time_out()

    def _log_metrics(self, seconds):
        line = self.stats.take_line(seconds)
        if line is not None:
            resobj_context.clear_current()
            LOG.warning(line)

    async def _stop(self, grace):
        self.stopping = True
        for listener in self._listeners:
            listener.close()
        deadline = time.monotonic() + grace
        while True:
            busy = False
            for conn in list(self._connections) + list(self._reserve):
                if conn.state in (State.WAITING, State.RECEIVING):
                    conn.close()
                else:
                    busy = True
            if not busy or time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.05)
        for conn in list(self._connections) + list(self._reserve):
            conn.abort()
        # The transports close their sockets in callbacks of the loop.
        for _ in range(3):
            await asyncio.sleep(0)


def listening_socket(sock):
    """A socket object of its own for the listening ``sock`` (a dup)."""
    return socket.socket(sock.family, sock.type, sock.proto,
                         fileno=socket.dup(sock.fileno()))
