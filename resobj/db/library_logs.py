"""What the database libraries log of a lost connection, said once.

When the database goes away under a request, the service logs the
request's failure once, as a warning that names the request (its 503,
or the heartbeat's missed report). Two libraries under it log the
same event again, at ERROR and with a traceback:

* oslo.db rolls back a transaction that failed; when the connection
  died, the rollback fails too, and oslo.utils'
  ``save_and_reraise_exception`` logs "Original exception being
  dropped" with the first failure's traceback, while the rollback's
  error goes on up (to become that 503). With a lost connection, that
  line is demoted to DEBUG: the failure is logged where it is handled.
* SQLAlchemy's pool rolls back each connection returned to it; when
  that fails it logs "Exception during reset or similar" with a
  traceback and discards the connection. Nothing else reports that
  event, so it becomes one WARNING line, without the traceback.

Each is recognised by its logger and message, which are the libraries'
own (no public API says them): :func:`watch` is the one place that
relies on them, and ``functional/db/test_library_logs.py`` makes both
happen for real and fails if either is no longer recognised.
"""

import logging
import sys

from oslo_db import exception as db_exc
import sqlalchemy as sa

# oslo.utils' logger and message for an exception replaced by another.
_DROPPED_LOGGER = 'oslo_utils.excutils'
_DROPPED = 'Original exception being dropped: %s'
# SQLAlchemy's message when a connection returned to its pool could not
# be reset.
_RESET_FAILED = 'Exception during reset or similar'


def _connection_lost(exc):
    """Whether ``exc`` says the database connection is gone."""
    if isinstance(exc, db_exc.DBConnectionError):
        return True
    return isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _DroppedForLostConnection(logging.Filter):
    """Demotes "Original exception being dropped" for a lost connection.

    The record is made while the rollback's error is being raised, so
    that error is the one being handled.
    """

    def filter(self, record):
        if record.msg != _DROPPED or not _connection_lost(sys.exc_info()[1]):
            return True
        record.levelno, record.levelname = logging.DEBUG, 'DEBUG'
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


class _ResetFailed(logging.Filter):
    """One warning line, no traceback, for a connection the pool dropped."""

    def filter(self, record):
        if record.msg != _RESET_FAILED or not record.exc_info:
            return True
        error = record.exc_info[1]
        record.levelno, record.levelname = logging.WARNING, 'WARNING'
        record.msg = ('A database connection failed as it was returned to '
                      'the pool (%s); it was discarded, and the next '
                      'transaction opens another')
        record.args = (_first_line(error),)
        record.exc_info = record.exc_text = None
        return True


_FILTERS = {}


def _add_once(logger, filter_class):
    if (logger.name, filter_class) not in _FILTERS:
        _FILTERS[(logger.name, filter_class)] = filter_class()
        logger.addFilter(_FILTERS[(logger.name, filter_class)])


def watch(engine):
    """Quiet the libraries' lines about ``engine``'s lost connections.

    Idempotent; called for every engine the facade creates.
    """
    _add_once(logging.getLogger(_DROPPED_LOGGER), _DroppedForLostConnection)
    # The pool's logger: its class's (SQLAlchemy's class_logger), or, for
    # a pool with echo on, the one its InstanceLogger wraps.
    logger = engine.pool.logger
    _add_once(getattr(logger, 'logger', logger), _ResetFailed)
