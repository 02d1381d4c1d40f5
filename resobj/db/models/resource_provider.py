"""Resource providers, their trees, aggregates and traits.

Rows are deleted, not soft-deleted: these tables describe the present,
and provider generations, not row history, order concurrent changes.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class ResourceProvider(base.TimestampMixin, base.Base):
    __tablename__ = 'resource_providers'
    __table_args__ = (
        sa.UniqueConstraint('uuid'),
        sa.UniqueConstraint('name'),
        sa.Index('ix_resource_providers_root_provider_id',
                 'root_provider_id'),
        sa.Index('ix_resource_providers_parent_provider_id',
                 'parent_provider_id'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), nullable=False)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(200), nullable=False)
    generation: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False, default=0, server_default='0')
    # Nullable only between a root's insert and the update that points it
    # at itself, inside one transaction.
    root_provider_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_providers.id',
                      name='fk_rp_root_provider_id'))
    parent_provider_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_providers.id',
                      name='fk_rp_parent_provider_id'))


class PlacementAggregate(base.TimestampMixin, base.Base):
    __tablename__ = 'placement_aggregates'
    __table_args__ = (
        sa.UniqueConstraint('uuid'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), nullable=False)


class ResourceProviderAggregate(base.TimestampMixin, base.Base):
    __tablename__ = 'resource_provider_aggregates'
    __table_args__ = (
        sa.Index('ix_resource_provider_aggregates_aggregate_id',
                 'aggregate_id'),
        base.TABLE_ARGS,
    )

    resource_provider_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_providers.id',
                      name='fk_rpa_resource_provider_id'),
        primary_key=True)
    aggregate_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('placement_aggregates.id',
                      name='fk_rpa_aggregate_id'),
        primary_key=True)


class ResourceProviderTrait(base.TimestampMixin, base.Base):
    __tablename__ = 'resource_provider_traits'
    __table_args__ = (
        sa.Index('ix_resource_provider_traits_trait_id', 'trait_id'),
        base.TABLE_ARGS,
    )

    resource_provider_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_providers.id',
                      name='fk_rpt_resource_provider_id'),
        primary_key=True)
    trait_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('traits.id',
                      name='fk_rpt_trait_id'),
        primary_key=True)
