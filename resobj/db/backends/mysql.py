"""MySQL and MariaDB: what resobj does differently on this backend."""

import functools

import sqlalchemy as sa
from sqlalchemy.dialects import mysql as mysql_dialect

from resobj.db import outage
from resobj.db.sql import search_strategy
from resobj import exception

NAME = 'mysql'


# Connections ---------------------------------------------------------
#
# How a new engine and its connections are set up; used by
# resobj.db.facade.configure.

IGNORED_OPTIONS = ()


def url_query(conf, query):
    """Connect, read and write timeouts, and the utf8mb4 character set.

    Settings the URL has are kept, except a charset other than utf8mb4:
    the tables are utf8mb4, and oslo.db's default connection charset,
    utf8 (utf8mb3), cannot carry a character beyond the Basic
    Multilingual Plane (an emoji in a name), so the statement would
    fail. A URL's charset=utf8, as many deployment tools write it, is
    overridden for the same reason.
    """
    settings = {'connect_timeout': str(conf.database.connect_timeout)}
    stall = outage.stall_seconds(conf)
    if stall is not None:
        # PyMySQL's socket timeouts: a stalled link fails with "Lost
        # connection" instead of waiting forever.
        settings['read_timeout'] = str(stall)
        settings['write_timeout'] = str(stall)
    settings = {key: value for key, value in settings.items()
                if key not in query}
    if query.get('charset') != 'utf8mb4':
        settings['charset'] = 'utf8mb4'
    return settings


def _connect_within(cparams, seconds):
    """Connect arguments for an attempt that ends within ``seconds``.

    PyMySQL's connect_timeout bounds the TCP connection only; the
    handshake that follows waits as long as the read and write timeouts,
    which the connection keeps for its whole life. Shortened, they make
    a connection for this one request (True: replace it after).
    """
    shortened = dict(cparams)
    for name in ('connect_timeout', 'read_timeout', 'write_timeout'):
        if name in cparams:
            shortened[name] = min(int(cparams[name]), seconds)
    return shortened, any(shortened[name] != cparams[name]
                          for name in ('read_timeout', 'write_timeout')
                          if name in cparams)


def database_file(url):
    """None: the database is on a server."""
    return None


def set_up_engine(engine, settings):
    """Fail fast while the server is down; bound every statement."""
    # oslo.db opened a first connection to test the server before these
    # hooks existed; closing it lets the connect hook below apply to
    # every connection the pool holds.
    engine.dispose()
    outage.Breaker(_connect_within).watch(engine)
    if settings.statement_timeout:
        _limit_statements(engine, settings.statement_timeout)


def _limit_statements(engine, seconds):
    """The server cancels every statement after ``seconds``.

    MariaDB's ``max_statement_time`` bounds every statement; MySQL's
    ``max_execution_time`` only SELECTs (PyMySQL's read timeout bounds
    the rest). Set once per connection, when it is made (a session
    setting that commits and rollbacks keep).
    """
    @sa.event.listens_for(engine, 'connect')
    def _set_statement_timeout(dbapi_connection, record):
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute('SELECT VERSION()')
            if 'mariadb' in cursor.fetchone()[0].lower():
                cursor.execute('SET SESSION max_statement_time = %d'
                               % seconds)
            else:
                cursor.execute('SET SESSION max_execution_time = %d'
                               % (seconds * 1000))
        finally:
            cursor.close()
        dbapi_connection.commit()


def in_transaction_block(dbapi_connection):
    """Always: resobj leaves MySQL's transactions as oslo.db begins them."""
    return True


def transaction_failed(dbapi_connection):
    """Never: a failed statement does not abort a MySQL transaction."""
    return False


# The lock that lets one schema sync at a time change the database, and
# how long a sync waits for another one to finish. DDL commits on MySQL,
# so the lock is a named one, released by unlock_schema.
SCHEMA_LOCK_NAME = 'resobj.db_sync'
SCHEMA_LOCK_WAIT_SECONDS = 600


def lock_schema(connection):
    """Wait for any other schema sync; begins the sync's transaction."""
    got = connection.execute(
        sa.text('SELECT GET_LOCK(:name, :wait)'),
        {'name': SCHEMA_LOCK_NAME,
         'wait': SCHEMA_LOCK_WAIT_SECONDS}).scalar()
    if got != 1:
        raise exception.DatabaseSchemaError(
            reason='another schema sync held the lock %r for over %d s'
                   % (SCHEMA_LOCK_NAME, SCHEMA_LOCK_WAIT_SECONDS))


def unlock_schema(connection):
    connection.execute(sa.text('SELECT RELEASE_LOCK(:name)'),
                       {'name': SCHEMA_LOCK_NAME})
    connection.commit()


# Writes --------------------------------------------------------------
#
# Which write statements the DB API can combine on this backend.

# MySQL's and MariaDB's WITH clauses hold SELECTs only
# (resobj.db.api.allocation runs its writes as statements of their own
# here).
WRITES_IN_WITH = False


@functools.cache
def insert_if_absent(table, key):
    """An INSERT into ``table`` that skips a row whose ``key`` exists.

    ``key`` names a unique column. A no-op ON DUPLICATE KEY UPDATE, not
    INSERT IGNORE: IGNORE would also turn errors other than the
    duplicate into warnings, and its shared lock on the duplicate is
    what lets InnoDB deadlock the waiters of a row whose inserter rolled
    back (each holds the shared lock the others' inserts need). This
    statement waits for an exclusive one instead, so the waiters queue.
    No savepoint is needed: MariaDB ends the whole transaction on a
    deadlock, savepoints included, and rolling back to one then fails
    in place of the deadlock.
    """
    return mysql_dialect.insert(table).on_duplicate_key_update(
        {key: table.c[key]})


# Statements ----------------------------------------------------------
#
# How id lists are bound and which statement variants the candidate
# search and the DB API use on this backend.


@functools.lru_cache(maxsize=1)
def candidate_strategy():
    """The candidate search on MySQL and MariaDB (resobj.search.strategy).

    Inventories are read in one pass per group, grouped by provider; a
    window's roots are found root by root behind OFFSET fences, then
    its rows by one statement per (group, class). Ids are bound one
    parameter each (written into the SQL past MAX_BOUND_IDS); trees
    are summarised by their own statements.
    """
    return search_strategy.Strategy(
        rows=search_strategy.RowPlan.INVENTORY_PIVOT,
        root_walk=search_strategy.RootWalk.FENCED,
        anchored_window=False,
        describes_lone_roots=False,
        window_ids=search_strategy.BOUND_IDS,
        summary_ids=search_strategy.BOUND_IDS,
        summary_traits_inline=False)
