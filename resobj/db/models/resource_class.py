"""The resource_classes table: standard classes and CUSTOM_* ones."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class ResourceClass(base.TimestampMixin, base.Base):
    __tablename__ = 'resource_classes'
    __table_args__ = (
        sa.UniqueConstraint('name'),
        base.TABLE_ARGS,
    )

    # Not auto-generated: a standard class's id is its index in
    # os-resource-classes (VCPU is 0, on every deployment), custom classes
    # take ids from 10000.
    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True,
                                            autoincrement=False)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255), nullable=False)
