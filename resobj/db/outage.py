"""Bounded waits on a database server that stalls or goes away.

The backends (:mod:`resobj.db.backends`) set these up per engine:

* **Connection settings**: the drivers' connect timeout, and on PyMySQL
  read and write timeouts of :func:`stall_seconds`, so that no socket
  wait of the driver lasts forever.
* **Server-side statement timeout**: PostgreSQL's ``statement_timeout``
  and MariaDB's ``max_statement_time`` (MySQL's ``max_execution_time``,
  reads only) on every connection, so that a slow statement is
  cancelled by the server itself.
* **A stall watchdog** (:class:`Watchdog`) for the PostgreSQL drivers,
  which have no read timeout: a connection that waits on the server
  longer than ``stall_seconds``, or past the deadline of the request it
  serves, has its socket shut down, the driver sees a lost connection
  and SQLAlchemy discards the pool.
* **A request's deadline**: an API request must have its answer
  ``stall_seconds`` after it arrived at the server
  (:func:`resobj.db.intent.deadline`), the wait for a thread included.
  Besides the watchdog, a new connection's connect timeouts are cut to
  what is left of it (:class:`Breaker`, with the backend's
  ``connect_within``), and a request past it gets DatabaseUnavailable
  before it waits on the server at all (``resobj.db.facade``).
* **A pooled connection is tested only when it looks dead**
  (:func:`ping_when_suspect`, PostgreSQL drivers): instead of a round
  trip before every transaction, a look at its socket.
* **Fail fast while the server is down** (:class:`Breaker`): after a
  connection attempt or a connection failed, one request at a time
  tries to connect again; the others get DatabaseUnavailable at once
  instead of each waiting for the connect timeout, so that request
  threads stay free for what needs no database.

``[database] statement_timeout`` 0 turns off the statement timeout,
the read timeouts and the watchdog (``resobj-manage`` does, for long
migrations).
"""

import math
import os
import select
import socket
import threading
import time
import weakref

import sqlalchemy as sa

from resobj.db import _sqlalchemy
from resobj.db import intent


def stall_seconds(conf):
    """How long one wait on the server may last, or None for no bound.

    The statement timeout, plus the connect timeout for the server's
    cancellation to come back over the network.
    """
    if not conf.database.statement_timeout:
        return None
    return conf.database.statement_timeout + conf.database.connect_timeout


def _call(ref, method):
    """Call ``method`` of the object ``ref`` refers to, if it still lives."""
    target = ref()
    if target is not None:
        getattr(target, method)()


def _socket_of(dbapi_connection):
    """The socket file descriptor of a psycopg or psycopg2 connection."""
    if dbapi_connection.closed:
        return None
    # Both drivers' public fileno().
    return dbapi_connection.fileno()


def ping_when_suspect(engine):
    """Test a pooled connection at checkout only if it looks dead.

    oslo.db's engines test every connection at every checkout with a
    statement (SQLAlchemy's pre-ping): a round trip before each
    transaction, a sixth of a claim's and half of a one-statement
    read's. A connection idle in the pool has nothing to receive, so a
    socket with something to read (or hung up) means the server spoke
    unasked: when it ends a connection (a restart, an administrator's
    ``pg_terminate_backend``, ``idle_session_timeout``) it sends a
    FATAL message and closes it. Only then is the connection tested
    with SQLAlchemy's ping, and one that fails it is replaced before the
    transaction starts, with every older connection of the pool (raising
    ``InvalidatePoolError`` from a checkout hook is SQLAlchemy's
    documented way), as the pre-ping did. A link cut without a word
    from the server looks alive: the transaction's first statement
    fails then (a 503, see :class:`Breaker`), or the stall watchdog
    ends its wait, where a pre-ping would have failed or waited the
    same.
    """
    _sqlalchemy.stop_pre_ping(engine.pool)
    dialect = engine.dialect

    @sa.event.listens_for(engine.pool, 'checkout')
    def _ping_if_suspect(dbapi_connection, record, proxy):
        if not _has_spoken(dbapi_connection):
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as exc:  # noqa: B902
            # Whatever the driver raises: the connection is unusable.
            raise sa.exc.InvalidatePoolError(
                'pooled connection found dead: %s' % exc) from exc


def _has_spoken(dbapi_connection):
    """Whether the idle connection's socket is readable or hung up."""
    fd = _socket_of(dbapi_connection)
    if fd is None or fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    # POLLHUP and POLLERR are reported whatever the mask.
    return bool(poller.poll(0))


class Watchdog:
    """Shut down connections that wait on the server too long.

    Armed when a connection is made or checked out and before each
    statement, commit or rollback, for ``seconds`` or until the deadline
    of the request the thread serves, whichever comes first; disarmed
    when it is returned to the pool. One daemon thread per engine checks
    the deadlines.
    """

    def __init__(self, seconds):
        self.seconds = seconds
        self.fired = 0
        self._reset()
        # A forked child (an API worker) has no watchdog thread, and its
        # parent's connections are not its own: it starts afresh.
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _call(ref, '_reset'))

    def _reset(self):
        self._deadlines = {}
        self._lock = threading.Condition()
        self._thread = None
        # When the thread wakes next (monotonic), or None: not waiting.
        self._wakes_at = None

    def arm(self, dbapi_connection):
        deadline = time.monotonic() + self.seconds
        request_deadline = intent.deadline()
        if request_deadline is not None and request_deadline < deadline:
            deadline = request_deadline
        with self._lock:
            self._deadlines[id(dbapi_connection)] = (
                deadline, dbapi_connection)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name='resobj-db-watchdog',
                    daemon=True)
                self._thread.start()
            elif self._wakes_at is not None and deadline < self._wakes_at:
                # Sooner than the thread would look: a request's deadline.
                self._lock.notify()

    def disarm(self, dbapi_connection):
        with self._lock:
            self._deadlines.pop(id(dbapi_connection), None)

    def _run(self):
        while True:
            with self._lock:
                now = time.monotonic()
                late = [(key, conn) for key, (deadline, conn)
                        in self._deadlines.items() if deadline <= now]
                for key, _ in late:
                    del self._deadlines[key]
                if not late:
                    soonest = min((d for d, _ in self._deadlines.values()),
                                  default=now + self.seconds)
                    self._wakes_at = max(now + 0.05, soonest)
                    self._lock.wait(self._wakes_at - now)
                    self._wakes_at = None
                    continue
            for _, conn in late:
                self._cut(conn)

    def _cut(self, dbapi_connection):
        try:
            fd = _socket_of(dbapi_connection)
            if fd is None or fd < 0:
                return
            # A socket object on the same descriptor; shutdown() ends the
            # connection for the driver's waits, detach() leaves closing
            # the descriptor to the driver.
            sock = socket.socket(fileno=fd)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            finally:
                sock.detach()
            self.fired += 1
        except Exception:  # noqa: B902
            # Closed meanwhile (the drivers raise their own errors from
            # fileno() then): nothing waits on it any more, and the
            # watchdog thread must live on for the other connections.
            return

    def watch(self, engine):
        """Arm and disarm around every use of ``engine``'s connections."""
        pool = engine.pool

        @sa.event.listens_for(pool, 'connect')
        def _on_connect(dbapi_connection, record):
            self.arm(dbapi_connection)

        @sa.event.listens_for(pool, 'checkout')
        def _on_checkout(dbapi_connection, record, proxy):
            self.arm(dbapi_connection)

        @sa.event.listens_for(pool, 'checkin')
        def _on_checkin(dbapi_connection, record):
            if dbapi_connection is not None:
                self.disarm(dbapi_connection)

        @sa.event.listens_for(pool, 'close')
        def _on_close(dbapi_connection, record):
            self.disarm(dbapi_connection)

        @sa.event.listens_for(pool, 'invalidate')
        def _on_invalidate(dbapi_connection, record, exception):
            if dbapi_connection is not None:
                self.disarm(dbapi_connection)

        @sa.event.listens_for(engine, 'before_cursor_execute')
        def _on_execute(conn, cursor, statement, parameters, context,
                        executemany):
            self.arm(cursor.connection)

        def _on_end(conn):
            if not conn.invalidated:
                self.arm(conn.connection.dbapi_connection)

        sa.event.listen(engine, 'commit', _on_end)
        sa.event.listen(engine, 'rollback', _on_end)


class Breaker:
    """While the server is unreachable, one caller at a time tries it.

    Opened by a failed connection attempt or a lost connection; the next
    connection attempt is the probe, and until it ends every other one
    fails at once. A successful connection closes it.

    ``connect_within(cparams, seconds)``: the backend's connect
    arguments for an attempt that must end within ``seconds``, and
    whether they also shorten waits of the connection's later life (the
    connection is then replaced after its first use). Called for a
    request whose deadline is nearer than the usual bounds.
    """

    def __init__(self, connect_within=None):
        self._connect_within = connect_within
        # Connections made with a request's shortened timeouts.
        self._shortened = weakref.WeakSet()
        self._reset()
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _call(ref, '_reset'))

    def _reset(self):
        self._lock = threading.Lock()
        self.down_since = None
        self._probing = False

    def before_connect(self):
        """Whether a connection attempt may go ahead now."""
        with self._lock:
            if self.down_since is None:
                return True
            if self._probing:
                return False
            self._probing = True
            return True

    def connected(self):
        with self._lock:
            self.down_since = None
            self._probing = False

    def failed(self):
        with self._lock:
            if self.down_since is None:
                self.down_since = time.monotonic()
            self._probing = False

    def watch(self, engine):
        dbapi = engine.dialect.loaded_dbapi

        @sa.event.listens_for(engine, 'do_connect')
        def _gate(dialect, conn_rec, cargs, cparams):
            cparams, shortened = self._within_deadline(cparams, dbapi)
            if not self.before_connect():
                raise dbapi.OperationalError(
                    'the database was unreachable moments ago and another '
                    'connection attempt is under way')
            # Connecting here, as SQLAlchemy would, is the one place that
            # sees every attempt's outcome: its handle_error event is not
            # dispatched for a failed connect.
            try:
                connection = dialect.connect(*cargs, **cparams)
            except Exception:
                self.failed()
                raise
            self.connected()
            if shortened:
                self._shortened.add(connection)
            return connection

        @sa.event.listens_for(engine.pool, 'connect')
        def _replace_shortened(dbapi_connection, record):
            if dbapi_connection in self._shortened:
                # Replaced at its next checkout: its timeouts fit the
                # request it was made for only.
                record.invalidate(soft=True)

        # First: oslo.db's handler raises its own exception, which ends
        # the handlers' chain.
        @sa.event.listens_for(engine, 'handle_error', insert=True)
        def _down(context):
            if context.is_disconnect:
                self.failed()

    def _within_deadline(self, cparams, dbapi):
        """(connect arguments, shortened) for the request being served.

        A request less than a second from its deadline does not connect.
        """
        deadline = intent.deadline()
        if deadline is None or self._connect_within is None:
            return cparams, False
        # The drivers take whole seconds: an attempt gets the whole
        # seconds left, and none is made with less than one left.
        left = math.floor(deadline - time.monotonic())
        if left < 1:
            raise dbapi.OperationalError(
                'the request is at its deadline; not connecting')
        return self._connect_within(cparams, left)
