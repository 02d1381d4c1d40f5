"""The flavors table: instance sizes."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Flavor(base.TimestampMixin, base.SoftDeleteMixin, base.Base):
    __tablename__ = 'flavors'
    __table_args__ = (
        sa.UniqueConstraint('flavorid', 'deleted'),
        sa.UniqueConstraint('name', 'deleted'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    flavorid: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                                  nullable=False)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                              nullable=False)
    memory_mb: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                   nullable=False)
    vcpus: orm.Mapped[int] = orm.mapped_column(sa.Integer, nullable=False)
    root_gb: orm.Mapped[int] = orm.mapped_column(sa.Integer, nullable=False)
    ephemeral_gb: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False, default=0, server_default='0')
    # Swap is in MB (the allocations spec converts it to GB, rounding up).
    swap: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False, default=0, server_default='0')
    rxtx_factor: orm.Mapped[float] = orm.mapped_column(
        sa.Double, nullable=False, default=1.0, server_default='1')
    # JSON: a dict of strings.
    extra_specs: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    is_public: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, nullable=False, default=True, server_default=sa.true())
    disabled: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, nullable=False, default=False,
        server_default=sa.false())
    description: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
