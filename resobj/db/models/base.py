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
