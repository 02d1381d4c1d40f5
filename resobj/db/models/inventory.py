"""The inventories table: what each provider offers, per resource class."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Inventory(base.TimestampMixin, base.Base):
    __tablename__ = 'inventories'
    __table_args__ = (
        sa.UniqueConstraint('resource_provider_id', 'resource_class_id'),
        sa.Index('ix_inventories_resource_class_id', 'resource_class_id'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    resource_provider_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_providers.id',
                      name='fk_inventories_resource_provider_id'),
        nullable=False)
    resource_class_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_classes.id',
                      name='fk_inventories_resource_class_id'),
        nullable=False)
    total: orm.Mapped[int] = orm.mapped_column(sa.Integer, nullable=False)
    reserved: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                  nullable=False)
    min_unit: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                  nullable=False)
    max_unit: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                  nullable=False)
    step_size: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                   nullable=False)
    # DOUBLE everywhere: MySQL's FLOAT would turn 1.1 into 1.1000000238.
    allocation_ratio: orm.Mapped[float] = orm.mapped_column(
        sa.Double, nullable=False)
    # The sum of the allocations of this provider and class, kept by the
    # database's triggers (models/inventory_usage.py); no code writes it.
    used: orm.Mapped[int] = orm.mapped_column(
        sa.BigInteger, nullable=False, server_default='0')
