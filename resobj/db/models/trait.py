"""The traits table: standard traits from os-traits and CUSTOM_* ones."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Trait(base.TimestampMixin, base.Base):
    __tablename__ = 'traits'
    __table_args__ = (
        sa.UniqueConstraint('name'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255), nullable=False)
