"""The one transaction factory every DB API function runs under.

Use the decorators, never a session argument::

    @facade.reader
    def service_get(context, service_id): ...     # context.session exists

    @facade.writer
    def service_create(context, values): ...      # commits on return

``replica_reader`` reads from ``[database] slave_connection`` when one is
configured (and from the primary otherwise); use it only for reads that can
tolerate replication lag. Readers called inside it read the replica too.
Nested decorated calls join the outer transaction, so a writer calling
readers is still one transaction.
"""

import contextlib
import functools
import os
import random
import threading
import time

from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

from resobj.conf import paths
from resobj.db import outage
from resobj.db import translate
from resobj import exception


def explain_unavailable(conf, exc):
    """One line for a command that could not use the database.

    What failed, the option that names the database (its URL without
    the password) and the driver's words, then what to do; for
    ``resobj-manage`` and for ``resobj-api`` at start.
    """
    # As configured, without the settings resobj adds.
    url = (sa.engine.make_url(conf.database.connection)
           if conf.database.connection else database_url(conf))
    url = url.render_as_string(hide_password=True)
    cause = exc.kwargs.get('cause') or exc.kwargs.get('reason', '')
    if exc.kwargs.get('reason') == translate.NO_DATABASE:
        advice = ('create the database and grant the account access to '
                  'it, or correct [database] connection')
    else:
        advice = ('check that the database server is running and '
                  'reachable from here, and that [database] connection '
                  'is right')
    return ('cannot use the database at %s ([database] connection): %s; %s'
            % (url, cause, advice))


# Where the DB API's decorators and the schema sync translate errors.
translate_errors = translate.translate_errors


# Whether the transaction this thread is about to begin will write; read
# by the SQLite begin hook below.
_local = threading.local()


@contextlib.contextmanager
def writing(writes=True):
    """Transactions this thread begins in the block intend to write.

    On SQLite they begin with BEGIN IMMEDIATE (see :func:`_sqlite_begin`).
    The writer decorators use it, and so does code that runs its own
    transaction on an engine, such as the schema sync. ``writes=False``
    keeps the intent of an enclosing block (a reader inside a writer
    still runs in the writer's transaction).
    """
    outer = getattr(_local, 'writes', False)
    _local.writes = writes or outer
    try:
        yield
    finally:
        _local.writes = outer


@contextlib.contextmanager
def _scope(writes):
    """Record whether the outermost decorated call of this thread writes.

    Read by :func:`read_without_transaction_block`: only a transaction
    begun under a reader decorator, and no writer around it, is a pure
    read. Code that runs its own transaction on an engine is never one.
    """
    outer = getattr(_local, 'scope', None)
    if outer is None:
        _local.scope = 'write' if writes else 'read'
    try:
        yield
    finally:
        _local.scope = outer


# Why this process may not use the database (see forbid()); empty while
# it may.
_forbidden = []


def forbid(reason):
    """Refuse every database call of this process, naming ``reason``.

    For services that reach the database only through a conductor: a
    code path that would still call the DB API directly raises
    DatabaseAccessForbidden before any engine or connection exists.
    Returns a function that lifts the refusal (for tests).
    """
    _forbidden.append(reason)
    return lambda: _forbidden.remove(reason)


def _check_allowed():
    if _forbidden:
        raise exception.DatabaseAccessForbidden(reason=_forbidden[-1])


def _translating(manager, writes=False):
    """``manager`` (reader, writer, ...) as a translating decorator."""
    def decorator(fn):
        transactional = manager(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            _check_allowed()
            with writing(writes), _scope(writes), translate_errors():
                return transactional(*args, **kwargs)
        return wrapper
    return decorator


def in_transaction_block(context):
    """Whether ``context``'s statements share one database transaction.

    False for a pure read on PostgreSQL, which runs each statement on its
    own (see :func:`read_without_transaction_block`); settings made with
    ``SET LOCAL`` would not outlast their statement there. True on the
    other backends, whose transactions resobj leaves as oslo.db begins
    them (their drivers' ``autocommit`` attributes mean other things).
    """
    connection = context.session.connection()
    if connection.dialect.name != 'postgresql':
        return True
    return not connection.connection.dbapi_connection.autocommit


def transaction_failed(context):
    """Whether a failed statement aborted ``context``'s PostgreSQL transaction.

    Such a transaction runs no statement until it is rolled back. False
    on the other backends, and outside a transaction block.
    """
    connection = context.session.connection()
    if connection.dialect.name != 'postgresql':
        return False
    # libpq's transaction status, on psycopg and psycopg2 alike.
    info = connection.connection.dbapi_connection.info
    return info.transaction_status == _PG_INERROR


DATABASE_FILE = 'resobj.sqlite'

# [database] options that are not engine or session settings: they drive
# oslo.db's legacy DB API retry wrapper, which resobj does not use.
_NOT_FACADE_OPTIONS = frozenset({
    'backend', 'use_db_reconnect', 'db_retry_interval',
    'db_inc_retry_interval', 'db_max_retry_interval', 'db_max_retries',
    'sqlite_busy_timeout', 'postgresql_plan_cache_mode',
    'postgresql_prepare_threshold', 'connect_timeout', 'statement_timeout',
})

# [database] postgresql_plan_cache_mode and postgresql_prepare_threshold,
# for the engine hooks (see plan_prepared_statements_once and
# prepare_statements_from); configure() sets them.
_pg_settings = {'plan_cache_mode': 'force_generic_plan',
                'prepare_threshold': 1}
# [database] statement_timeout and the stall bound derived from it, for
# _bound_waits; configure() sets them.
_outage_settings = {'statement_timeout': 0, 'stall_seconds': None}


def database_url(conf):
    """The primary database URL: configured, or the embedded default.

    Raises ConfigurationError for a malformed URL, an unknown dialect or a
    driver that is not installed, before anything tries to connect.
    """
    if conf.database.connection:
        url = _parse_url(conf.database.connection, 'connection')
    else:
        url = sa.engine.make_url('sqlite:///' + os.path.join(
            paths.state_dir(conf), DATABASE_FILE))
    return _with_backend_settings(conf, url)


def _parse_url(text, option):
    try:
        url = sa.engine.make_url(text)
    except sa.exc.ArgumentError:
        raise exception.ConfigurationError(
            reason='[database] %s is not a database URL' % option)
    try:
        url.get_dialect().import_dbapi()
    except sa.exc.NoSuchModuleError:
        raise exception.ConfigurationError(
            reason='[database] %s names an unknown database type %r'
            % (option, url.drivername))
    except ImportError as exc:
        raise exception.ConfigurationError(
            reason='[database] %s needs the Python driver %r, which is not '
            'installed (pip install "resobj[mysql]" or '
            '"resobj[postgresql]")' % (option, exc.name))
    return url


def database_missing(conf):
    """Whether ``conf`` names an embedded SQLite file that does not exist.

    Connecting would create it; commands that only read call this first.
    """
    url = database_url(conf)
    if url.get_backend_name() != 'sqlite' or url.database in (
            None, '', ':memory:'):
        return False
    return not os.path.exists(url.database)


def _with_backend_settings(conf, url):
    """``url`` with the connection settings its backend needs.

    Set in the URL, they apply to every pooled connection, including the
    first one oslo.db opens to test the server before any event hook
    runs.
    """
    backend = url.get_backend_name()
    if backend == 'sqlite' and 'timeout' not in url.query:
        # pysqlite's connect(timeout=) is SQLite's busy timeout.
        return url.update_query_dict(
            {'timeout': str(conf.database.sqlite_busy_timeout)})
    settings = outage.url_settings(conf, backend, url.query)
    mysql = backend in ('mysql', 'mariadb')
    if mysql and url.query.get('charset') != 'utf8mb4':
        # The tables are utf8mb4; oslo.db's default connection charset,
        # utf8 (utf8mb3), cannot carry a character beyond the Basic
        # Multilingual Plane (an emoji in a name) and the statement
        # fails. A URL's charset=utf8, as many deployment tools write
        # it, is overridden for the same reason.
        settings['charset'] = 'utf8mb4'
    return url.update_query_dict(settings) if settings else url


def _ensure_state_dir(url):
    """Create the directory of a file-backed SQLite URL, or explain why not."""
    if url.get_backend_name() != 'sqlite' or url.database in (
            None, '', ':memory:'):
        return
    directory = os.path.dirname(os.path.abspath(url.database))
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise exception.StateDirectoryNotWritable(
            path=directory, reason=exc.strerror or exc)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise exception.StateDirectoryNotWritable(
            path=directory, reason='permission denied')


def _sqlite_begin(conn):
    """Begin SQLite transactions, writers' with BEGIN IMMEDIATE.

    A deferred transaction that reads, then writes, cannot take the write
    lock once another writer has committed since its read (WAL snapshot
    conflict): SQLite fails it at once with "database is locked", busy
    timeout or not. Taking the lock at BEGIN makes concurrent writers wait
    their turn instead (up to the busy timeout); readers still run
    alongside. Otherwise this does what oslo.db's hook does.
    """
    if 'in_transaction' not in conn.info:
        conn.exec_driver_sql('BEGIN IMMEDIATE'
                             if getattr(_local, 'writes', False)
                             else 'BEGIN')
        conn.info['in_transaction'] = True


# oslo.db's SQLite hook that emits a plain BEGIN; replaced by the above.
_OSLO_SQLITE_BEGIN = '_sqlite_emit_begin'


# A pooled connection idle at least this long is pinged before reuse.
IDLE_PING_SECONDS = 10.0


def _on_engine_create(engine):
    # The last line of defence of forbid(): whatever path led here.
    _check_allowed()
    if engine.dialect.name != 'sqlite':
        # First: it leaves the pool empty, so that the connect hooks
        # below apply to every connection, oslo.db's first one included.
        reuse_latest_connection(engine)
        _bound_waits(engine)
        ping_idle_connections(engine)
        if engine.dialect.name == 'postgresql':
            read_without_transaction_block(engine)
        if engine.dialect.driver == 'psycopg':
            keep_prepared_statements(engine)
            prepare_statements_from(engine,
                                    _pg_settings['prepare_threshold'])
            prepare_marked_statements_at_once(engine)
            convert_long_statements_once()
            if _pg_settings['plan_cache_mode'] != 'server':
                plan_prepared_statements_once(
                    engine, _pg_settings['plan_cache_mode'])
        return
    for listener in list(engine.dispatch.begin):
        if getattr(listener, '__name__', None) == _OSLO_SQLITE_BEGIN:
            sa.event.remove(engine, 'begin', listener)
    sa.event.listen(engine, 'begin', _sqlite_begin)
    if engine.url.database in (None, '', ':memory:'):
        return
    _pool_sqlite_connections(engine)
    # WAL lets readers run while one writer commits; the setting is stored
    # in the database file, so setting it once per engine is enough. It
    # cannot change inside a transaction, and oslo.db's SQLite events begin
    # one with every SQLAlchemy connection, hence the raw DB-API one.
    raw = engine.raw_connection()
    try:
        raw.cursor().execute('PRAGMA journal_mode=WAL')
    finally:
        raw.close()


def _bound_waits(engine):
    """No wait on ``engine``'s server lasts without bound (see outage)."""
    outage.Breaker().watch(engine)
    outage.limit_statements(engine, _outage_settings['statement_timeout'])
    stall = _outage_settings['stall_seconds']
    # PyMySQL has read and write timeouts (set in the URL); the
    # PostgreSQL drivers have none.
    if stall and engine.dialect.name == 'postgresql':
        outage.Watchdog(stall).watch(engine)


def _queue_pool(old, **settings):
    """A last-in, first-out QueuePool with ``old``'s connect and events.

    ``settings``: QueuePool arguments; those not given are ``old``'s.
    """
    for name, attribute in (('pool_size', '_pool'),
                            ('max_overflow', '_max_overflow'),
                            ('timeout', '_timeout'),
                            ('pre_ping', '_pre_ping')):
        if name not in settings:
            value = getattr(old, attribute)
            settings[name] = value.maxsize if name == 'pool_size' else value
    return sa.pool.QueuePool(
        old._creator, recycle=old._recycle,
        reset_on_return=old._reset_on_return, dialect=old._dialect,
        use_lifo=True, _dispatch=old.dispatch, **settings)


def reuse_latest_connection(engine):
    """Hand out the connection returned last, not the one idle longest.

    oslo.db's QueuePool is first in, first out: once a burst of
    concurrent requests has opened several connections, sequential
    requests take them in turn. Each connection has its own prepared
    statements (psycopg prepares a statement once it has run on that
    connection, see :func:`prepare_statements_from`) and its own cached
    plans, so rotation multiplies the statements PostgreSQL parses and
    plans again by the number of connections. Last in, first out keeps
    the same connection hot, and lets the others sit idle (SQLAlchemy's
    ``use_lifo``). Live, on the benchmark's database after a burst of 8
    clients: the unlimited candidate search 18.7 -> 16.1 ms,
    ``limit=50`` 6.7 -> 5.2 ms. oslo.db opened a first connection to
    test the server before resobj's hooks ran; it is closed here, so the
    pool starts empty.
    """
    old = engine.pool
    if not isinstance(old, sa.pool.QueuePool):
        engine.dispose()
        return
    engine.pool = _queue_pool(old)
    old.dispose()


def ping_idle_connections(engine):
    """Ping a pooled connection before reuse only if it sat idle.

    oslo.db turns on SQLAlchemy's pre-ping, a ``SELECT 1`` round trip at
    every checkout: for a one-query read, a third of its statements. A
    connection that was in use a moment ago is as alive as a ping would
    show, so only one idle for ``IDLE_PING_SECONDS`` is pinged; if it
    turns out dead, SQLAlchemy discards it and connects again, as with
    pre-ping. A server lost while connections are busy fails the
    statements of that moment either way, and SQLAlchemy then discards
    the whole pool.
    """
    pool = engine.pool
    # No public way to turn it off once oslo.db has built the engine.
    pool._pre_ping = False

    @sa.event.listens_for(pool, 'checkin')
    def _idle_from(dbapi_connection, record):
        if record is not None:
            record.info['resobj_idle_since'] = time.monotonic()

    @sa.event.listens_for(pool, 'checkout')
    def _ping_if_idle(dbapi_connection, record, proxy):
        since = record.info.pop('resobj_idle_since', None)
        if since is None or time.monotonic() - since < IDLE_PING_SECONDS:
            return
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as exc:
            if not engine.dialect.is_disconnect(exc, dbapi_connection,
                                                None):
                raise
            alive = False
        if not alive:
            # The pool discards this connection and checks out another.
            raise sa.exc.DisconnectionError()


def read_without_transaction_block(engine):
    """Pure reads on PostgreSQL run without BEGIN and COMMIT.

    Under PostgreSQL's default READ COMMITTED isolation every statement
    takes its own snapshot, inside a transaction block or not, so a
    transaction that only reads gains nothing from the block but two
    round trips (BEGIN and the final ROLLBACK or COMMIT), a third of a
    one-query request's time. A transaction begun under a reader
    decorator with no writer around it (see :func:`_scope`) runs on a
    connection in the driver's autocommit mode; every other one, writers
    and code on the engine directly, gets a transaction block as before.
    Readers that need one statement's setting to hold for the next must
    not rely on ``SET LOCAL`` (see :func:`in_transaction_block`).
    """
    @sa.event.listens_for(engine, 'begin')
    def _autocommit_pure_reads(conn):
        dbapi_connection = conn.connection.dbapi_connection
        wanted = getattr(_local, 'scope', None) == 'read'
        # The mode can change only between transactions: a connection
        # that one already holds (a pre-ping's) keeps its block.
        if dbapi_connection.autocommit != wanted and \
                dbapi_connection.info.transaction_status == _PG_IDLE:
            dbapi_connection.autocommit = wanted


def plan_prepared_statements_once(engine, mode='force_generic_plan'):
    """Set ``plan_cache_mode`` to ``mode`` on every connection of ``engine``.

    By default PostgreSQL plans a prepared statement again for each
    call's values until it judges a plan for any values no worse, and
    the candidate search's statements never pass that test: their
    planning (0.4 to 0.9 ms each) was a third of a ``limit=50`` search's
    database time. resobj's statements are built per shape so that the
    plan needs no values: the few cases where the values change the best
    plan choose their statement in Python (a window of trees, the whole
    cloud without nested loops). So every psycopg connection sets
    ``plan_cache_mode = force_generic_plan`` unless ``[database]
    postgresql_plan_cache_mode`` says otherwise; a statement not prepared
    yet on a connection (see :func:`prepare_statements_from`) is still
    planned with its values. Live, on the benchmark's database: the
    limited search 12.1 -> 10.8 ms, the unlimited one 35.9 -> 33.4 ms.
    Applies to the connections opened from now on: the pool is empty
    (see :func:`reuse_latest_connection`).
    """
    # One of the option's choices, never anything else: no quoting needed.
    statement = 'SET plan_cache_mode = %s' % mode

    @sa.event.listens_for(engine, 'connect')
    def _set_plan_cache_mode(dbapi_connection, record):
        with dbapi_connection.cursor() as cursor:
            cursor.execute(statement)
        # A session setting, kept after the commit that ends the
        # transaction the SET began (a rollback would undo it).
        dbapi_connection.commit()


def prepare_statements_from(engine, runs):
    """psycopg prepares a statement after ``runs`` runs on a connection.

    psycopg's default is five: until then each run is parsed and planned
    anew, and the candidate search's statements took 1.3 to 2 times as
    long (a ``limit=50`` search 6 ms instead of 4.2, the unlimited one
    17 instead of 13.5, on the benchmark's database). resobj runs a
    small set of statements, built per request shape, so a statement
    run twice will be run again: by default (``[database]
    postgresql_prepare_threshold = 1``) it is prepared on its second
    run. A statement run once is not prepared, so that one-off
    statements do not push the repeated ones out of psycopg's cache of
    prepared statements (100 per connection). ``runs`` -1 prepares
    nothing. Applies to the connections opened from now on: the pool is
    empty (see :func:`reuse_latest_connection`).
    """
    threshold = None if runs < 0 else runs

    @sa.event.listens_for(engine, 'connect')
    def _set_prepare_threshold(dbapi_connection, record):
        dbapi_connection.prepare_threshold = threshold


# The execution option of statements that psycopg prepares on their
# first run (see prepare_marked_statements_at_once).
PREPARE_AT_ONCE = 'resobj_prepare_at_once'


def prepare_marked_statements_at_once(engine):
    """Statements marked ``PREPARE_AT_ONCE`` are prepared on their first run.

    Below ``postgresql_prepare_threshold`` psycopg runs a statement
    unprepared: PostgreSQL parses and plans it for that run, then again
    when it prepares it. For the candidate search's statements, built
    per request shape and run on every search of that shape, that
    second parse and plan made a worker's second search of a shape
    nearly twice as slow as the next ones (``limit=50`` on the
    benchmark's database: 9-12 ms, then 6). Marked statements
    (``statement.execution_options(resobj_prepare_at_once=True)``) are
    prepared at once; the others keep the threshold. Nothing is
    prepared when the threshold is -1 (``prepare_threshold`` None).
    """
    @sa.event.listens_for(engine, 'do_execute')
    def _prepare_at_once(cursor, statement, parameters, context):
        if not context.execution_options.get(PREPARE_AT_ONCE) or \
                cursor.connection.prepare_threshold is None:
            return None
        cursor.execute(statement, parameters, prepare=True)
        return True


# The longest statement text whose placeholders psycopg converts once
# (see convert_long_statements_once).
CONVERTED_ONCE_UP_TO = 16384


def convert_long_statements_once():
    """psycopg converts the placeholders of texts up to 16 KB only once.

    psycopg turns a statement's ``%(name)s`` placeholders into
    PostgreSQL's ``$n`` with a regular expression over the whole text,
    and caches the result (an LRU of 128 texts) only for texts up to
    4 KB, a limit meant for ORM statements whose text changes with every
    call. The candidate search's statements are 5 to 8 KB and the same
    on every search of a request shape: their conversion took 0.12 to
    0.18 ms a run, 4 % of a ``limit=50`` search in process. The limit is
    a module constant of psycopg's (``psycopg._queries``, read on every
    call); resobj raises it if the module has it, and a test checks that
    the candidate search's statement is converted once. Process-wide,
    bounded by the cache's 128 entries.
    """
    try:
        from psycopg import _queries
    except ImportError:
        return
    limit = getattr(_queries, 'MAX_CACHED_STATEMENT_LENGTH', None)
    if isinstance(limit, int) and limit < CONVERTED_ONCE_UP_TO:
        _queries.MAX_CACHED_STATEMENT_LENGTH = CONVERTED_ONCE_UP_TO


def keep_prepared_statements(engine):
    """End transactions that wrote nothing with COMMIT, not ROLLBACK.

    psycopg (3) prepares a statement on the server once it has run on a
    connection (see :func:`prepare_statements_from`), so PostgreSQL
    stops planning it again on every call; but it forgets them all on
    every ROLLBACK (a rolled-back DDL may have changed what they refer
    to). Pure reads run outside any transaction
    (:func:`read_without_transaction_block`); what still ends with a
    rollback that wrote nothing is a writer that gave up after its reads
    (a claim refused for capacity or a generation conflict, say) and a
    read on a connection that already held a transaction, and each would
    cost every prepared statement of its connection. A transaction that
    wrote nothing (PostgreSQL assigned it no transaction id: no row
    written or locked, no DDL) ends the same whether committed or rolled
    back, so those are committed, for one extra round trip; every other
    rollback goes ahead as before.
    """
    @sa.event.listens_for(engine, 'rollback')
    def _commit_if_nothing_written(conn):
        if conn.invalidated:
            # The connection was lost: asking for it would raise
            # PendingRollbackError in place of the loss, and there is no
            # transaction left to keep.
            return
        dbapi_connection = conn.connection.dbapi_connection
        # Only a healthy open transaction: a failed one cannot run the
        # test and must be rolled back.
        if dbapi_connection is None or dbapi_connection.closed or \
                dbapi_connection.info.transaction_status != _PG_INTRANS:
            return
        try:
            with dbapi_connection.cursor() as cursor:
                cursor.execute('SELECT txid_current_if_assigned() IS NULL')
                nothing_written = cursor.fetchone()[0]
            if nothing_written:
                # The DB-API rollback that follows finds no transaction
                # left and sends nothing.
                dbapi_connection.commit()
        except engine.dialect.loaded_dbapi.Error:
            # A lost or failing connection: the rollback that follows
            # goes through SQLAlchemy's own error handling (a lost
            # connection is discarded), as without this hook.
            return


# psycopg's (and psycopg2's) TransactionStatus IDLE (no transaction),
# INTRANS (idle in a transaction) and INERROR (in an aborted one), spelt
# out so that the module loads without the drivers installed.
_PG_IDLE = 0
_PG_INTRANS = 2
_PG_INERROR = 3


def _pool_sqlite_connections(engine):
    """Keep SQLite file connections open between transactions.

    oslo.db gives file databases a NullPool: every transaction opened a
    new connection, ran the connect-time PRAGMAs and event set-up, and
    closed it again -- about a third of a small request's time. A queue
    pool keeps them, last in, first out, as on the other databases (see
    :func:`reuse_latest_connection`: each connection has its own cache
    of compiled statements). SQLite connections may pass between threads
    one at a time (SQLAlchemy's pysqlite dialect turns check_same_thread
    off for file databases), and the old pool's dispatch carries
    oslo.db's and resobj's connect events over to the new pool.

    Without oslo.db's pre-ping: a file database has no server that could
    have dropped a pooled connection, and the ``SELECT 1`` at every
    checkout was a fifth of a one-query read's time.
    """
    old = engine.pool
    if not isinstance(old, sa.pool.NullPool):
        return
    engine.pool = _queue_pool(old, pool_size=5, max_overflow=10, timeout=30,
                              pre_ping=False)


def retrying_writer(*retry_on, connection=False):
    """A writer retried in a fresh transaction on conflicts.

    Retries on deadlocks and serialization failures (DatabaseDeadlock)
    and on the exception types in ``retry_on`` (e.g. a provider
    generation that moved under a concurrent writer). The decorated
    function takes ``max_retries=`` (default 10); the last failure
    propagates (DatabaseDeadlock: HTTP 409 with the
    ``placement.concurrent_update`` code). Inside another writer's
    transaction it runs once: a retry there could not undo the outer
    transaction's failed statement, so the conflict goes up to whoever
    owns the transaction.

    ``connection=True`` runs the function on a Core connection
    (``context.connection``) rather than an ORM session: for hot write
    paths that issue Core statements only, it saves the session's set-up
    and per-statement bookkeeping. Inside another writer's session it
    gets that session's connection, so it is still one transaction.
    """
    retryable = (exception.DatabaseDeadlock,) + retry_on

    def decorator(fn):
        transactional = (_connection_writer if connection else _writer)(fn)

        @functools.wraps(fn)
        def wrapper(*args, max_retries=10, **kwargs):
            if getattr(_local, 'writes', False):
                return transactional(*args, **kwargs)
            for attempt in range(max_retries + 1):
                try:
                    return transactional(*args, **kwargs)
                except retryable:
                    if attempt == max_retries:
                        raise
                    # Jitter keeps the losers of one race from colliding
                    # again in lockstep.
                    time.sleep(random.uniform(0, 0.01 * (attempt + 1)))
        return wrapper
    return decorator


def new_context_manager():
    """A transaction context manager with resobj's engine hooks.

    The process uses one (below); tests patch a fresh one's factory in to
    configure the facade again.
    """
    manager = enginefacade.transaction_context()
    manager.append_on_engine_create(_on_engine_create)
    return manager


_context_manager = new_context_manager()
# allow_async: a reader called inside a replica_reader scope joins it (and
# reads the replica); anywhere else it reads the primary.
reader = _translating(_context_manager.reader.allow_async)
_writer = _translating(_context_manager.writer, writes=True)
# A writer on a Core connection (``context.connection``); see
# retrying_writer(connection=True).
_connection_writer = _translating(_context_manager.writer.connection,
                                  writes=True)
# Every writer retries deadlocks and serialization failures (in a fresh
# transaction, when it owns one): a DB API function is one transaction
# with no effect outside the database, so running it again is safe.
writer = retrying_writer()
connection_writer = retrying_writer(connection=True)
replica_reader = _translating(_context_manager.async_)


def configure(conf):
    """Point the transaction factory at the databases ``conf`` names.

    Call once per process, before the first DB API call; ``conf`` must be
    parsed. Values are passed explicitly so that oslo.db never falls back to
    its global ``cfg.CONF``.
    """
    url = database_url(conf)
    _ensure_state_dir(url)
    _pg_settings['plan_cache_mode'] = conf.database.postgresql_plan_cache_mode
    _pg_settings['prepare_threshold'] = \
        conf.database.postgresql_prepare_threshold
    _outage_settings['statement_timeout'] = conf.database.statement_timeout
    _outage_settings['stall_seconds'] = outage.stall_seconds(conf)
    settings = {
        key: value for key, value in conf.database.items()
        if key not in _NOT_FACADE_OPTIONS
        and not key.startswith('asyncio_')
    }
    settings['connection'] = url.render_as_string(hide_password=False)
    if url.get_backend_name() == 'sqlite':
        # oslo.db builds SQLite engines on pools that take no timeout
        # (resobj's own SQLite pool has one, see _pool_sqlite_connections).
        settings.pop('pool_timeout', None)
    if conf.database.slave_connection:
        replica = _with_backend_settings(conf, _parse_url(
            conf.database.slave_connection, 'slave_connection'))
        settings['slave_connection'] = replica.render_as_string(
            hide_password=False)
    settings['sqlite_fk'] = True
    # oslo.db sleeps (time.sleep(0)) at every connection check-in so that
    # eventlet green threads get a turn; resobj runs on real threads,
    # where that sleep only hands the CPU away, on every transaction.
    settings['thread_checkin'] = False
    try:
        _context_manager.configure(**settings)
    except enginefacade.AlreadyStartedError:
        raise exception.ConfigurationError(
            reason='the database facade is already in use; configure() '
                   'must run before the first database call')


def get_engine(use_replica=False):
    """The engine behind the writer (or the replica reader)."""
    _check_allowed()
    # oslo.db's "reader engine" is the slave_connection one when that is
    # set, and the primary otherwise.
    if use_replica:
        return _context_manager.reader.get_engine()
    return _context_manager.writer.get_engine()


def dispose():
    """Close every pooled connection (for forked workers and tests)."""
    _context_manager.dispose_pool()


def forget_inherited_connections():
    """In a forked child: drop the pooled connections of the parent.

    Without closing them, which would end them for the parent too; the
    child opens its own. A child of a process whose facade has not
    started has nothing to forget.
    """
    # No public way to ask the context manager; its factory tells.
    if not _context_manager._factory.is_started:
        return
    for engine in {get_engine(), get_engine(use_replica=True)}:
        engine.dispose(close=False)


def get_context_manager():
    """The transaction context manager, for test fixtures only."""
    return _context_manager
