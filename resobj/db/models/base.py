"""The declarative base, its naming convention and the common columns."""

import datetime

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy import orm

# Explicit names make migrations identical on SQLite, PostgreSQL and
# MySQL, whose own generated names differ.
NAMING_CONVENTION = {
    'ix': 'ix_%(table_name)s_%(column_0_N_name)s',
    'uq': 'uq_%(table_name)s_%(column_0_N_name)s',
    'fk': 'fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s',
    'pk': 'pk_%(table_name)s',
}

TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


# MySQL's DATETIME keeps whole seconds unless told otherwise; the other
# backends keep microseconds. One precision everywhere.
DateTime = sa.DateTime().with_variant(
    mysql.DATETIME(fsp=6), 'mysql', 'mariadb')


def utcnow():
    """Naive UTC now: every DateTime column stores naive UTC."""
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class Base(orm.DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)


BASE = Base


class TimestampMixin:
    created_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        DateTime, default=utcnow)
    updated_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        DateTime, onupdate=utcnow)


class SoftDeleteMixin:
    """Soft delete: ``deleted`` is 0 for a live row and the row's id after.

    Unique constraints include ``deleted``, so any number of deleted rows
    can share a key with the one live row.
    """

    deleted_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        DateTime)
    deleted: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False, default=0, server_default='0')


def triggers(tables, by_dialect):
    """Trigger DDL for ``tables``: the schema built from the models runs it.

    ``by_dialect``: {dialect name: [statement]}. The statements run after
    ``metadata.create_all`` when it created every table of ``tables`` (a
    subset without them has nothing to trigger on; tables that existed
    have their triggers). Returns ``statements(dialect)``, the DDL for a
    dialect's name, for the migration that creates them on upgrade.
    """
    def statements(dialect):
        if dialect == 'mariadb':
            dialect = 'mysql'
        if dialect not in by_dialect:
            raise NotImplementedError('no triggers on %s for %s'
                                      % (', '.join(sorted(tables)), dialect))
        return list(by_dialect[dialect])

    @sa.event.listens_for(BASE.metadata, 'after_create')
    def _create(metadata, connection, tables=(), **kw):
        if set(needed) <= {table.name for table in tables}:
            for statement in statements(connection.dialect.name):
                connection.exec_driver_sql(statement)

    needed = frozenset(tables)
    return statements
