"""What a database error means, said once for every DB API module.

Losing the server, a statement the server cancelled for taking too
long, a deadlock and a missing schema mean the same for every noun; the
facade's decorators translate them here into resobj exceptions (HTTP
503, 409 and 500 with a clear cause). Constraint errors (duplicates,
missing references) mean different things per noun, so each DB API
module translates those itself.
"""

import contextlib

from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj import exception


def _first_line(exc):
    inner = getattr(exc, 'inner_exception', None) or exc
    text = str(getattr(inner, 'orig', None) or inner).strip()
    return text.splitlines()[0] if text else type(inner).__name__


def _driver_error(exc):
    """The DB-API exception under an oslo.db or SQLAlchemy one, or None."""
    inner = getattr(exc, 'inner_exception', None) or exc
    return getattr(inner, 'orig', None)


# PostgreSQL's SQLSTATEs of a statement cancelled by statement_timeout
# and of a serialization failure; MariaDB's and MySQL's error numbers of
# a statement over max_statement_time / max_execution_time.
_PG_QUERY_CANCELED = '57014'
_PG_SERIALIZATION_FAILURE = '40001'
_MYSQL_STATEMENT_TIMEOUTS = (1969, 3024)


def _sqlstate(orig):
    # psycopg's sqlstate, psycopg2's pgcode.
    return getattr(orig, 'sqlstate', None) or getattr(orig, 'pgcode', None)


def _is_statement_timeout(exc):
    orig = _driver_error(exc)
    if orig is None:
        return False
    if _sqlstate(orig) == _PG_QUERY_CANCELED:
        return True
    args = getattr(orig, 'args', ())
    return bool(args) and args[0] in _MYSQL_STATEMENT_TIMEOUTS


def _is_serialization_failure(exc):
    orig = _driver_error(exc)
    return orig is not None and _sqlstate(orig) == _PG_SERIALIZATION_FAILURE


def _deadlock_under(exc):
    """The deadlock ``exc`` was raised while handling, or None.

    MariaDB and MySQL roll a deadlock's whole transaction back,
    savepoints included: SQLAlchemy's rollback to the savepoint the
    deadlock happened in then fails ("SAVEPOINT ... does not exist"),
    and that error replaces the deadlock. The transaction lost a race
    all the same, and is retried as one.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, db_exc.DBDeadlock):
            return exc
        exc = exc.__context__
    return None


def _unavailable(exc, what):
    # The cause names the server (host, port): it is for the log and the
    # command line; the message (what an API client sees) only says what
    # failed.
    return exception.DatabaseUnavailable(reason=what,
                                         cause=_first_line(exc))


NO_DATABASE = 'the database does not exist'


@contextlib.contextmanager
def translate_errors():
    """Turn server-level oslo.db errors into resobj exceptions.

    Constraint errors (duplicates, missing references) mean different
    things per noun, so each DB API module translates those itself; losing
    the server or the schema, a deadlock and a statement timeout mean the
    same everywhere and are translated here, once.
    """
    try:
        yield
    except db_exc.DBNonExistentDatabase as exc:
        raise _unavailable(exc, NO_DATABASE)
    except db_exc.DBConnectionError as exc:
        raise _unavailable(exc, 'the connection to the database failed')
    except db_exc.DBDeadlock as exc:
        raise exception.DatabaseDeadlock(reason=_first_line(exc))
    except sa.exc.TimeoutError as exc:
        # The pool's: every connection busy for [database] pool_timeout.
        raise _unavailable(exc, 'no database connection became free in '
                                'time')
    except sa.exc.PendingRollbackError as exc:
        # What SQLAlchemy raises on a transaction whose connection was
        # lost earlier in it, when something still tries to use it.
        raise _unavailable(exc, 'the connection to the database was lost')
    except (db_exc.DBError, sa.exc.DBAPIError) as exc:
        deadlock = _deadlock_under(exc.__context__)
        if deadlock is not None:
            raise exception.DatabaseDeadlock(reason=_first_line(deadlock))
        if _is_serialization_failure(exc):
            raise exception.DatabaseDeadlock(reason=_first_line(exc))
        if _is_statement_timeout(exc):
            raise _unavailable(exc, 'the database did not answer in time')
        if isinstance(exc, db_exc.DBNonExistentTable):
            raise exception.DatabaseSchemaError(
                reason='%s; run "resobj-manage db sync"' % _first_line(exc))
        inner = getattr(exc, 'inner_exception', None) or exc
        if getattr(inner, 'connection_invalidated', False):
            raise _unavailable(exc, 'the connection to the database was lost')
        if isinstance(exc, sa.exc.OperationalError) and exc.statement is None:
            # oslo.db does not recognise every driver's wording of a
            # refused connection (psycopg2's "connection to server ...
            # failed"); an error with no statement was raised while
            # connecting.
            raise _unavailable(exc, 'cannot connect to the database')
        raise
