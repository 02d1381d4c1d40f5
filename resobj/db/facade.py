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

What differs by database backend (connection set-up, pool, per-connection
settings) lives in :mod:`resobj.db.backends`; :func:`configure` chooses
the backend and oslo.db calls it for every engine it creates.
"""

import functools
import random
import time

from oslo_db.sqlalchemy import enginefacade

from resobj.db import backends
from resobj.db import connection_url
from resobj.db import intent
from resobj.db import library_logs
from resobj.db import precompile
from resobj.db import translate
from resobj import exception

# Where the DB API's decorators and the schema sync translate errors.
translate_errors = translate.translate_errors

# Transactions begun in the block intend to write (on SQLite they begin
# with BEGIN IMMEDIATE); for code that runs its own transaction on an
# engine, such as the schema sync. The writer decorators use it too.
writing = intent.writing

# The execution option that has psycopg prepare a statement on its first
# run (the candidate search marks its statements with it).
PREPARE_AT_ONCE = backends.postgresql.PREPARE_AT_ONCE

# [database] options that are not engine or session settings: they drive
# oslo.db's legacy DB API retry wrapper, which resobj does not use, or
# the backends' own set-up (backends.EngineSettings, url_query).
_NOT_FACADE_OPTIONS = frozenset({
    'backend', 'use_db_reconnect', 'db_retry_interval',
    'db_inc_retry_interval', 'db_max_retry_interval', 'db_max_retries',
    'sqlite_busy_timeout', 'postgresql_plan_cache_mode',
    'postgresql_prepare_threshold', 'connect_timeout', 'statement_timeout',
})

# How configure() set up engines: {dialect name: set_up(engine)}, for the
# primary's and the replica's backend.
_engine_setups = {}
# For an engine of a factory started without configure() (oslo.db's test
# provisioning): the options' defaults, without time limits.
_UNCONFIGURED = backends.EngineSettings(
    statement_timeout=0, stall_seconds=None,
    plan_cache_mode='force_generic_plan', prepare_threshold=1)

# How long a request's waits on the server may last from its arrival
# (outage.stall_seconds), set by configure(); None: no bound.
_stall_seconds = None

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


def _deadline(args):
    """When the request whose context is ``args[0]`` must be answered.

    An API request's context says when it arrived (``arrived``); its
    waits on the server end the stall bound after that (``[database]
    statement_timeout`` + ``connect_timeout``), however long it waited
    for a thread before. None for other contexts, or without a bound.
    """
    arrived = getattr(args[0], 'arrived', None) if args else None
    if arrived is None or _stall_seconds is None:
        return None
    return arrived + _stall_seconds


def _check_deadline():
    deadline = intent.deadline()
    now = time.monotonic()
    if deadline is not None and now >= deadline:
        raise exception.DatabaseUnavailable(
            reason='no answer from the database within the request\'s '
                   'time limit',
            cause='the request arrived %.1f s ago; %d s is the bound of '
                  'its waits on the database ([database] '
                  'statement_timeout + connect_timeout)'
                  % (now - deadline + _stall_seconds, _stall_seconds))


def _translating(manager, writes=False):
    """``manager`` (reader, writer, ...) as a translating decorator."""
    def decorator(fn):
        transactional = manager(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            _check_allowed()
            with intent.writing(writes), intent.decorated(writes), \
                    intent.answer_by(_deadline(args)), translate_errors():
                _check_deadline()
                return transactional(*args, **kwargs)
        return wrapper
    return decorator


def _backend_connection(context):
    connection = context.session.connection()
    return (backends.for_dialect(connection.dialect.name),
            connection.connection.dbapi_connection)


def in_transaction_block(context):
    """Whether ``context``'s statements share one database transaction.

    False for a pure read on PostgreSQL, which runs each statement on its
    own; settings made with ``SET LOCAL`` would not outlast their
    statement there. True on the other backends.
    """
    backend, dbapi_connection = _backend_connection(context)
    return backend.in_transaction_block(dbapi_connection)


def transaction_failed(context):
    """Whether a failed statement aborted ``context``'s transaction.

    Such a transaction (PostgreSQL's) runs no statement until it is
    rolled back. False on the other backends, and outside a transaction
    block.
    """
    backend, dbapi_connection = _backend_connection(context)
    return backend.transaction_failed(dbapi_connection)


def _on_engine_create(engine):
    # The last line of defence of forbid(): whatever path led here.
    _check_allowed()
    library_logs.watch(engine)
    # Before the backend's hooks: the first execute hook to take a
    # statement over ends the chain.
    precompile.skip_compile_only(engine)
    name = engine.dialect.name
    if name in _engine_setups:
        _engine_setups[name](engine)
    else:
        backends.for_dialect(name).set_up_engine(engine, _UNCONFIGURED)


class Prerequisite(Exception):
    """Rows a writer's transaction needs committed before it runs.

    Raised anywhere inside a writer's transaction (however deeply
    nested the raise), it rolls that transaction back; the outermost
    writer, which owns the transaction, then calls ``prepare()`` (a
    writer of its own, committed at once) and runs its function again
    in a fresh transaction. For rows that must outlive the transaction
    whatever becomes of it, and that concurrent transactions would
    otherwise each insert and hold: if the one that inserted such a row
    rolls back, the others waiting on it fail with it (on MariaDB, as
    deadlocks). A write that needs none pays nothing.
    """

    def __init__(self, prepare):
        super().__init__()
        self.prepare = prepare


# How many Prerequisites one call of a retrying writer prepares before
# it gives up: a prepared row is needed again only if a concurrent
# transaction removed it meanwhile.
PREREQUISITES_PER_CALL = 3


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
    owns the transaction, marked as one this writer would have retried
    (an :func:`owning_writer` retries it).

    A Prerequisite raised in the transaction is prepared and the
    function run again; that spends none of ``max_retries``
    (PREREQUISITES_PER_CALL bounds it).

    ``connection=True`` runs the function on a Core connection
    (``context.connection``) rather than an ORM session: for hot write
    paths that issue Core statements only, it saves the session's set-up
    and per-statement bookkeeping. Inside another writer's session it
    gets that session's connection, so it is still one transaction.
    """
    retryable = (exception.DatabaseDeadlock,) + retry_on

    def decorator(fn):
        transactional = (_connection_writer if connection else _writer)(fn)
        return _retried(fn, transactional,
                        lambda exc: isinstance(exc, retryable))
    return decorator


# The attribute that marks an exception a nested retrying writer would
# have retried had it owned its transaction.
_RETRY_MARK = 'resobj_retry_transaction'


def _retried(fn, transactional, is_retryable):
    @functools.wraps(fn)
    def wrapper(*args, max_retries=10, **kwargs):
        if intent.writes():
            try:
                return transactional(*args, **kwargs)
            except Exception as exc:
                if is_retryable(exc):
                    setattr(exc, _RETRY_MARK, True)
                raise
        attempt = prepared = 0
        while True:
            try:
                return transactional(*args, **kwargs)
            except Prerequisite as needed:
                # Not a conflict: it spends none of max_retries.
                if prepared == PREREQUISITES_PER_CALL:
                    # Prepared each time, and gone again each time.
                    raise exception.DatabaseDeadlock(
                        reason='rows the write needs were removed by '
                               'concurrent transactions')
                prepared += 1
                needed.prepare()
            except Exception as exc:
                if not is_retryable(exc) or attempt == max_retries:
                    raise
                attempt += 1
                # Jitter keeps the losers of one race from colliding
                # again in lockstep.
                time.sleep(random.uniform(0, 0.01 * attempt))
    return wrapper


def owning_writer(fn):
    """A writer whose transaction holds whole calls of other writers.

    For a function that runs several DB API writers (and code between
    them) as one transaction: every writer inside joins it, so all or
    none of their effects commit. What a nested retrying writer would
    have retried on its own (its deadlocks, its ``retry_on`` conflicts)
    and a Prerequisite raised inside roll the whole transaction back and
    run ``fn`` again from the start, in a fresh transaction, as
    :func:`retrying_writer` runs its own function again. ``fn`` must
    therefore leave nothing behind outside the database that a second
    run would duplicate. Takes ``max_retries=`` (default 10).
    """
    return _retried(fn, _writer(fn), lambda exc: isinstance(
        exc, exception.DatabaseDeadlock) or getattr(exc, _RETRY_MARK, False))


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
    url = connection_url.database_url(conf)
    connection_url.ensure_state_dir(url)
    backend = connection_url.backend(url)
    engine_settings = backends.EngineSettings.from_conf(conf)
    settings = {
        key: value for key, value in conf.database.items()
        if key not in _NOT_FACADE_OPTIONS
        and key not in backend.IGNORED_OPTIONS
        and not key.startswith('asyncio_')
    }
    settings['connection'] = url.render_as_string(hide_password=False)
    setups = {url.get_dialect().name: backend}
    if conf.database.slave_connection:
        replica = connection_url.with_backend_settings(
            conf, connection_url.parse(conf.database.slave_connection,
                                       'slave_connection'))
        settings['slave_connection'] = replica.render_as_string(
            hide_password=False)
        setups[replica.get_dialect().name] = connection_url.backend(
            replica, 'slave_connection')
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
    global _stall_seconds
    _stall_seconds = engine_settings.stall_seconds
    _engine_setups.clear()
    _engine_setups.update(
        (name, functools.partial(chosen.set_up_engine,
                                 settings=engine_settings))
        for name, chosen in setups.items())


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
    if not _context_manager.is_started:
        return
    for engine in {get_engine(), get_engine(use_replica=True)}:
        engine.dispose(close=False)


def get_context_manager():
    """The transaction context manager, for test fixtures only."""
    return _context_manager
