"""PostgreSQL: what resobj does differently on this backend."""

import functools

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from resobj.db import intent
from resobj.db import outage
from resobj.db.sql import search_strategy

NAME = 'postgresql'


# Connections ---------------------------------------------------------
#
# How a new engine and its connections are set up; used by
# resobj.db.facade.configure.

IGNORED_OPTIONS = ()

# The execution option of statements that psycopg prepares on their
# first run (see _prepare_marked_statements_at_once).
PREPARE_AT_ONCE = 'resobj_prepare_at_once'

# libpq's transaction status, as psycopg's and psycopg2's
# ``connection.info.transaction_status`` report it: IDLE (no
# transaction), INTRANS (idle in a transaction) and INERROR (in an
# aborted one), spelt out so that the module loads without the drivers.
_IDLE = 0
_INTRANS = 2
_INERROR = 3


def url_query(conf, query):
    """The drivers' connect timeout, unless the URL sets one."""
    if 'connect_timeout' in query:
        return {}
    return {'connect_timeout': str(conf.database.connect_timeout)}


def _connect_within(cparams, seconds):
    """Connect arguments for an attempt that ends within ``seconds``.

    libpq's (and psycopg's) connect_timeout bounds the whole attempt,
    and nothing else: the connection's later life is as usual.
    """
    timeout = int(cparams.get('connect_timeout') or seconds)
    return dict(cparams, connect_timeout=min(timeout, seconds)), False


def database_file(url):
    """None: the database is on a server."""
    return None


def set_up_engine(engine, settings):
    """Bounded waits, per-connection settings, pure reads, prepared plans."""
    # oslo.db opened a first connection to test the server before these
    # hooks existed; closing it lets the connect hooks below apply to
    # every connection the pool holds.
    engine.dispose()
    outage.Breaker(_connect_within).watch(engine)
    if settings.stall_seconds:
        # The PostgreSQL drivers have no read timeout.
        outage.Watchdog(settings.stall_seconds).watch(engine)
    # After the watchdog's checkout hook, which arms it for the ping.
    outage.ping_when_suspect(engine)
    psycopg = engine.dialect.driver == 'psycopg'
    statements = []
    if settings.statement_timeout:
        statements.append('SET statement_timeout = %d'
                          % (settings.statement_timeout * 1000))
    if psycopg and settings.plan_cache_mode != 'server':
        # One of the option's choices, never anything else: no quoting.
        statements.append('SET plan_cache_mode = %s'
                          % settings.plan_cache_mode)
    threshold = settings.prepare_threshold
    _set_up_connections(engine, statements,
                        None if threshold < 0 else threshold, psycopg)
    _read_without_transaction_block(engine)
    if psycopg:
        _keep_prepared_statements(engine)
        _prepare_marked_statements_at_once(engine)


def _set_up_connections(engine, statements, threshold, psycopg):
    """Session settings on every new connection of ``engine``.

    ``statements``: SET statements, run once and committed (a session
    setting outlasts the commit that ends the transaction the SET began;
    a rollback would undo it).

    ``SET plan_cache_mode = force_generic_plan`` (the default of
    ``[database] postgresql_plan_cache_mode``): by default PostgreSQL
    plans a prepared statement again for each call's values until it
    judges a plan for any values no worse, and the candidate search's
    statements never pass that test, so their planning took a large
    share of a search's database time. resobj's statements are built
    per shape so that the plan needs no values (the few cases where the
    values change the best plan choose their statement in Python).

    ``threshold`` (psycopg only, ``[database]
    postgresql_prepare_threshold``): psycopg prepares a statement on the
    server after that many runs on a connection (psycopg's default is
    five, and until then each run is parsed and planned anew). resobj
    runs a small set of statements, built per request shape, so a
    statement run twice will be run again: by default it is prepared on
    its second run, while one-off statements do not push the repeated
    ones out of psycopg's cache of prepared statements. None prepares
    nothing.
    """
    @sa.event.listens_for(engine, 'connect')
    def _set_up(dbapi_connection, record):
        if psycopg:
            dbapi_connection.prepare_threshold = threshold
        if not statements:
            return
        with dbapi_connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
        dbapi_connection.commit()


def _read_without_transaction_block(engine):
    """Pure reads run without BEGIN and COMMIT.

    Under PostgreSQL's default READ COMMITTED isolation every statement
    takes its own snapshot, inside a transaction block or not, so a
    transaction that only reads gains nothing from the block but two
    round trips (BEGIN and the final ROLLBACK or COMMIT). A transaction
    begun under a reader decorator with no writer around it
    (``intent.pure_read()``) runs on a connection in the driver's
    autocommit mode; every other one, writers and code on the engine
    directly, gets a transaction block. Readers that need one
    statement's setting to hold for the next must not rely on ``SET
    LOCAL`` (see :func:`in_transaction_block`).
    """
    @sa.event.listens_for(engine, 'begin')
    def _autocommit_pure_reads(conn):
        dbapi_connection = conn.connection.dbapi_connection
        wanted = intent.pure_read()
        # The mode can change only between transactions: a connection
        # that one already holds (a pre-ping's) keeps its block.
        if dbapi_connection.autocommit != wanted and \
                dbapi_connection.info.transaction_status == _IDLE:
            dbapi_connection.autocommit = wanted


def _prepare_marked_statements_at_once(engine):
    """Statements marked ``PREPARE_AT_ONCE`` are prepared on their first run.

    Below the prepare threshold psycopg runs a statement unprepared:
    PostgreSQL parses and plans it for that run, then again when it
    prepares it. The candidate search's statements are built per request
    shape and run on every search of that shape, so that second parse
    and plan made a worker's second search of a shape much slower than
    the next ones. Marked statements
    (``statement.execution_options(resobj_prepare_at_once=True)``) are
    prepared at once (psycopg's ``execute(prepare=True)``); the others
    keep the threshold. Nothing is prepared when the threshold is -1.
    """
    @sa.event.listens_for(engine, 'do_execute')
    def _prepare_at_once(cursor, statement, parameters, context):
        if not context.execution_options.get(PREPARE_AT_ONCE) or \
                cursor.connection.prepare_threshold is None:
            return None
        cursor.execute(statement, parameters, prepare=True)
        return True


def _keep_prepared_statements(engine):
    """End transactions that wrote nothing with COMMIT, not ROLLBACK.

    psycopg (3) forgets every statement it prepared on a connection at
    every ROLLBACK (a rolled-back DDL may have changed what they refer
    to). Pure reads run outside any transaction
    (:func:`_read_without_transaction_block`); what still ends with a
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
                dbapi_connection.info.transaction_status != _INTRANS:
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


def in_transaction_block(dbapi_connection):
    """False for a pure read, which runs each statement on its own."""
    return not dbapi_connection.autocommit


def transaction_failed(dbapi_connection):
    """Whether a failed statement aborted the connection's transaction.

    Such a transaction runs no statement until it is rolled back.
    """
    # libpq's transaction status, on psycopg and psycopg2 alike.
    return dbapi_connection.info.transaction_status == _INERROR


# The lock that lets one schema sync at a time change the database: a
# 64-bit key ("resobj" in ASCII), held until the sync's transaction ends.
SCHEMA_LOCK_KEY = 0x7265736f626a


def lock_schema(connection):
    """Wait for any other schema sync; begins the sync's transaction."""
    connection.execute(sa.text('SELECT pg_advisory_xact_lock(:key)'),
                       {'key': SCHEMA_LOCK_KEY})


def unlock_schema(connection):
    """Nothing: the lock ends with the transaction."""


# Writes --------------------------------------------------------------
#
# Which write statements the DB API can combine on this backend.

# PostgreSQL runs INSERT and UPDATE in WITH clauses (data-modifying
# statements) and binds arrays: a claim inserts its allocations in the
# WITH of the generation compare-and-swap, and a new consumer is
# created by the statement that reads the claim's ids
# (resobj.db.api.allocation).
WRITES_IN_WITH = True


@functools.cache
def insert_if_absent(table, key):
    """An INSERT into ``table`` that skips a row whose ``key`` exists.

    ``key`` names a unique column. A row a concurrent transaction is
    inserting waits for it: skipped if that one commits, inserted if it
    rolls back. No savepoint is needed, so nothing is left to roll back
    when the statement loses a race.
    """
    return postgresql.insert(table).on_conflict_do_nothing(
        index_elements=[key])


# Statements ----------------------------------------------------------
#
# How id lists are bound and which statement variants the candidate
# search and the DB API use on this backend.


class _ArrayIds(search_strategy.IdList):
    """Ids as one array, bound as its text and read by ``unnest``.

    The text ('{1,2,3}'), which the statement casts: psycopg adapts a
    Python list item by item. A table, not ``= ANY(array)``: PostgreSQL
    hashes the array of an ANY only when it is a constant, and a
    prepared statement's parameter is not one. One array, not a
    parameter per id: past 50 parameters psycopg no longer caches a
    statement's conversion to its own placeholders.
    """

    def __repr__(self):
        return '<ArrayIds>'

    def value(self, ids):
        return '{%s}' % ','.join(map(str, sorted(ids)))

    def table(self, name):
        return sa.func.unnest(sa.cast(
            sa.bindparam(name, type_=sa.String),
            postgresql.ARRAY(sa.Integer))).table_valued(
                'value').render_derived()


ARRAY_IDS = _ArrayIds()


@functools.lru_cache(maxsize=1)
def candidate_strategy():
    """The candidate search on PostgreSQL (see resobj.search.strategy).

    Inventories are read in one pass per group, grouped by provider; a
    window's roots are found root by root behind OFFSET 0 fences, by
    the rows statement itself when no sharing provider may serve them.
    The rows describe childless roots and the summaries' providers
    carry their traits, so that a flat cloud's summaries take no
    statement. The whole cloud's rows statement runs without nested
    loops: PostgreSQL cannot estimate how many inventories pass the
    capacity test (an expression over several columns), guesses a
    handful, and would otherwise compare every provider with every
    inventory.
    """
    return search_strategy.Strategy(
        rows=search_strategy.RowPlan.INVENTORY_PIVOT,
        root_walk=search_strategy.RootWalk.FENCED,
        anchored_window=True,
        describes_lone_roots=True,
        window_ids=ARRAY_IDS,
        summary_ids=ARRAY_IDS,
        summary_traits_inline=True,
        whole_cloud_settings=('SET enable_nestloop = off',
                              'RESET enable_nestloop'))
