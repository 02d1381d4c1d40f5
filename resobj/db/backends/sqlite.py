"""SQLite (the embedded default): what resobj does differently on it."""

import functools
import json
import sqlite3

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite as sqlite_dialect

from resobj.db import _oslo_db
from resobj.db import intent
from resobj.db.sql import search_strategy

NAME = 'sqlite'


# Connections ---------------------------------------------------------
#
# How a new engine and its connections are set up; used by
# resobj.db.facade.configure.

# oslo.db builds SQLite engines on pools that take no timeout (resobj's
# own pool for file databases has one, see _pool_file_connections).
IGNORED_OPTIONS = ('pool_timeout',)

# Connections kept open for a file database, as on the other backends.
POOL_SIZE = 5
POOL_OVERFLOW = 10
POOL_TIMEOUT = 30


def url_query(conf, query):
    """pysqlite's ``connect(timeout=)``, SQLite's busy timeout."""
    if 'timeout' in query:
        return {}
    return {'timeout': str(conf.database.sqlite_busy_timeout)}


def database_file(url):
    """The file of an embedded database; None for an in-memory one."""
    return None if _in_memory(url) else url.database


def set_up_engine(engine, settings):
    """Writers take the write lock at BEGIN; file databases pool and WAL.

    ``settings`` (the server backends' statement and plan settings)
    mean nothing to SQLite.
    """
    begin_writers_immediately(engine)
    if _in_memory(engine.url):
        return
    _pool_file_connections(engine)
    # WAL lets readers run while one writer commits; the setting is
    # stored in the database file, so setting it once per engine is
    # enough. It cannot change inside a transaction, and the begin hook
    # above begins one with every SQLAlchemy connection, hence the raw
    # DB-API one.
    raw = engine.raw_connection()
    try:
        raw.cursor().execute('PRAGMA journal_mode=WAL')
    finally:
        raw.close()


def _in_memory(url):
    return url.database in (None, '', ':memory:')


def begin_writers_immediately(engine):
    """Begin SQLite transactions, writers' with BEGIN IMMEDIATE.

    A deferred transaction that reads, then writes, cannot take the
    write lock once another writer has committed since its read (WAL
    snapshot conflict): SQLite fails it at once with "database is
    locked", busy timeout or not. Taking the lock at BEGIN makes
    concurrent writers wait their turn instead (up to the busy timeout);
    readers still run alongside. Otherwise this does what oslo.db's
    begin hook does, which it replaces (see
    :func:`resobj.db._oslo_db.replace_sqlite_begin`).
    """
    def _emit_begin(conn):
        conn.exec_driver_sql('BEGIN IMMEDIATE' if intent.writes()
                             else 'BEGIN')

    _oslo_db.replace_sqlite_begin(engine, _emit_begin)


def _pool_file_connections(engine):
    """Keep SQLite file connections open between transactions.

    oslo.db gives file databases a NullPool: every transaction opened a
    new connection, which had to read the schema again before its first
    statement, and closed it. A queue pool keeps them, last in, first
    out, so that the connection used last (whose statement cache is
    warm) serves the next transaction. Built with SQLAlchemy's
    ``create_pool_from_url`` from the engine's URL; the connection
    settings oslo.db made on its pool's connections are made here again
    (see :func:`_set_up_connection`). SQLAlchemy's pysqlite dialect
    lets file connections pass between threads, one at a time.

    Without a pre-ping: a file database has no server that could have
    dropped a pooled connection.
    """
    old = engine.pool
    # SQLAlchemy learns the SQLite version on an engine's first
    # connection, through a hook of the engine's pool; oslo.db makes none
    # when it does not test the server (max_retries 0, resobj-manage).
    with engine.connect():
        pass
    engine.pool = sa.create_pool_from_url(
        engine.url, poolclass=sa.pool.QueuePool, pool_use_lifo=True,
        pool_pre_ping=False, pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW, pool_timeout=POOL_TIMEOUT)
    sa.event.listen(engine.pool, 'connect', _set_up_connection)
    old.dispose()


def _set_up_connection(dbapi_connection, record):
    # What oslo.db's connect hook does for resobj's settings: the begin
    # hooks emit BEGIN, not pysqlite (which would also commit before
    # DDL), and foreign keys are enforced. (Not its REGEXP function:
    # resobj's SQL uses none.)
    dbapi_connection.isolation_level = None
    dbapi_connection.execute('PRAGMA foreign_keys=ON')


def in_transaction_block(dbapi_connection):
    """Always: resobj leaves SQLite's transactions as oslo.db begins them."""
    return True


def transaction_failed(dbapi_connection):
    """Never: a failed statement does not abort a SQLite transaction."""
    return False


def lock_schema(connection):
    """The sync's transaction is the lock: it begins with BEGIN IMMEDIATE.

    (The schema sync runs under ``intent.writing()``.) A first statement
    begins it.
    """
    connection.execute(sa.text('SELECT 1'))


def unlock_schema(connection):
    """Nothing: the lock ends with the transaction."""


# Writes --------------------------------------------------------------
#
# Which write statements the DB API can combine on this backend.

# SQLite's WITH clauses hold SELECTs only (resobj.db.api.allocation
# runs its writes as statements of their own here).
WRITES_IN_WITH = False


@functools.cache
def insert_if_absent(table, key):
    """An INSERT into ``table`` that skips a row whose ``key`` exists.

    ``key`` names a unique column; SQLite has one writer at a time, so
    the row cannot be in another transaction's hands.
    """
    return sqlite_dialect.insert(table).on_conflict_do_nothing(
        index_elements=[key])


# Statements ----------------------------------------------------------
#
# How id lists are bound and which statement variants the candidate
# search and the DB API use on this backend.


class _JsonIds(search_strategy.IdList):
    """Ids as one JSON text, read as a table by ``json_each``.

    Bound one parameter per id, SQLAlchemy renders a placeholder per id
    on every call and SQLite parses them all; a summary may name every
    root of the cloud.
    """

    def __repr__(self):
        return '<JsonIds>'

    def value(self, ids):
        return json.dumps(sorted(ids))

    def table(self, name):
        return sa.func.json_each(
            sa.bindparam(name, type_=sa.String)).table_valued('value')


JSON_IDS = _JsonIds()


@functools.lru_cache(maxsize=1)
def has_json():
    """Whether the SQLite library of this process has JSON functions.

    The sqlite3 module links one SQLite library per process, the one
    the engine uses; JSON functions are built in from SQLite 3.38 and
    in most builds before.
    """
    try:
        sqlite3.connect(':memory:').execute(
            "SELECT value FROM json_each('[1]')").fetchall()
    except sqlite3.Error:
        return False
    return True


@functools.lru_cache(maxsize=1)
def candidate_strategy():
    """The candidate search on SQLite (see resobj.search.strategy).

    SQLite plans by rules, without statistics: providers are read one
    row each with their inventories joined through the unique index,
    and a window's roots are walked by id up to the limit. A window's
    few roots are bound one parameter each; the summaries' id sets,
    which may name every root, as one JSON text.
    """
    return search_strategy.Strategy(
        rows=search_strategy.RowPlan.PER_PROVIDER,
        root_walk=search_strategy.RootWalk.PLAIN,
        anchored_window=False,
        describes_lone_roots=True,
        window_ids=search_strategy.BOUND_IDS,
        summary_ids=JSON_IDS if has_json() else search_strategy.BOUND_IDS,
        summary_traits_inline=False)
