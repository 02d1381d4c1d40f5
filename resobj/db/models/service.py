"""The services table: one row per running resobj service binary."""

import datetime

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Service(base.TimestampMixin, base.SoftDeleteMixin, base.Base):
    __tablename__ = 'services'
    __table_args__ = (
        sa.UniqueConstraint('host', 'binary', 'deleted'),
        sa.UniqueConstraint('host', 'topic', 'deleted'),
        sa.Index('ix_services_uuid', 'uuid', unique=True),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), nullable=False)
    host: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                              nullable=False)
    binary: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                                nullable=False)
    topic: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    report_count: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False, default=0, server_default='0')
    disabled: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, nullable=False, default=False,
        server_default=sa.false())
    disabled_reason: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    last_seen_up: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        base.DateTime)
    forced_down: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, nullable=False, default=False,
        server_default=sa.false())
    version: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False, default=0, server_default='0')
