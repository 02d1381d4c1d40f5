"""What resobj does differently on each database backend, one module each.

Business modules never test a dialect name: they ask :func:`for_dialect`
for the backend's module and use what it offers. Each module has two
parts: how its connections are set up (used by :mod:`resobj.db.facade`)
and the statement variants and id-list binding the candidate search and
the DB API use.

The connection part of every backend module offers the same names:

* ``url_query(conf, query)``: the settings the backend's driver needs
  in the connection URL's query (``query`` is the configured URL's;
  settings it has are kept). In the URL, they apply to every pooled
  connection, including the first one oslo.db opens to test the server
  before any event hook runs.
* ``database_file(url)``: the file of an embedded database, or None.
* ``IGNORED_OPTIONS``: ``[database]`` options oslo.db must not be given
  for this backend.
* ``set_up_engine(engine, settings)``: the events and pool set-up of a
  new engine, after oslo.db built it; ``settings`` is an
  :class:`EngineSettings`.
* ``in_transaction_block(dbapi_connection)`` and
  ``transaction_failed(dbapi_connection)``: the state of a connection's
  transaction (see :mod:`resobj.db.facade`).
* ``lock_schema(connection)`` and ``unlock_schema(connection)``: one
  schema sync at a time on a database (see
  :func:`resobj.db.migration.db_sync`).
"""

import typing

from resobj.db.backends import mysql
from resobj.db.backends import postgresql
from resobj.db.backends import sqlite
from resobj.db import outage

_BY_DIALECT = {
    'sqlite': sqlite,
    'postgresql': postgresql,
    'mysql': mysql,
    'mariadb': mysql,
}


class EngineSettings(typing.NamedTuple):
    """The ``[database]`` options the backends' engine set-up reads."""

    # Seconds the server may spend on a statement; 0 for no limit.
    statement_timeout: int
    # How long one wait on the server may last, or None for no bound
    # (outage.stall_seconds).
    stall_seconds: typing.Optional[int]
    plan_cache_mode: str
    prepare_threshold: int

    @classmethod
    def from_conf(cls, conf):
        return cls(
            statement_timeout=conf.database.statement_timeout,
            stall_seconds=outage.stall_seconds(conf),
            plan_cache_mode=conf.database.postgresql_plan_cache_mode,
            prepare_threshold=conf.database.postgresql_prepare_threshold)


def for_dialect(name):
    """The backend module for SQLAlchemy dialect ``name``."""
    try:
        return _BY_DIALECT[name]
    except KeyError:
        raise ValueError('resobj does not support the %r database backend'
                         % name) from None
