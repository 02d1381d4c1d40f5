"""What resobj does differently on each database backend, one module each.

Business modules never test a dialect name: they ask :func:`for_dialect`
for the backend's module and use what it offers. Each module has two
parts: how its connections are set up (used by :mod:`resobj.db.facade`)
and the statement variants and id-list binding the candidate search and
the DB API use.
"""

from resobj.db.backends import mysql
from resobj.db.backends import postgresql
from resobj.db.backends import sqlite

_BY_DIALECT = {
    'sqlite': sqlite,
    'postgresql': postgresql,
    'mysql': mysql,
    'mariadb': mysql,
}


def for_dialect(name):
    """The backend module for SQLAlchemy dialect ``name``."""
    try:
        return _BY_DIALECT[name]
    except KeyError:
        raise ValueError('resobj does not support the %r database backend'
                         % name) from None
