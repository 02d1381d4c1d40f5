"""The allocations table: what each consumer holds of each provider.

Rows are inserted and deleted, never updated: an allocation change is a
replacement of the consumer's rows, in one transaction. (The owner
columns change with their consumer's, by trigger.)
"""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Allocation(base.TimestampMixin, base.Base):
    __tablename__ = 'allocations'
    __table_args__ = (
        # A provider's allocations of a class: in-use checks and the sums
        # that count an inventory's usage afresh (a new inventory's
        # trigger, the online recount) read only this index.
        sa.Index('ix_allocations_rp_rc_used', 'resource_provider_id',
                 'resource_class_id', 'used'),
        # A project's usage sums (joined on consumer_id) read only this.
        sa.Index('ix_allocations_consumer_id_rc_used', 'consumer_id',
                 'resource_class_id', 'used'),
        sa.Index('ix_allocations_resource_class_id', 'resource_class_id'),
        # A project's (and a user's) usage sums read only this.
        sa.Index('ix_allocations_project_id_user_id_rc_used', 'project_id',
                 'user_id', 'resource_class_id', 'used'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    resource_provider_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_providers.id',
                      name='fk_allocations_resource_provider_id'),
        nullable=False)
    consumer_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('consumers.id',
                      name='fk_allocations_consumer_id'),
        nullable=False)
    resource_class_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('resource_classes.id',
                      name='fk_allocations_resource_class_id'),
        nullable=False)
    used: orm.Mapped[int] = orm.mapped_column(sa.Integer, nullable=False)
    # The consumer's project and user, copied by the database's triggers
    # (models/allocation_owner.py); no code writes them. NULL only
    # between an insert and its trigger, on SQLite.
    project_id: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    user_id: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
