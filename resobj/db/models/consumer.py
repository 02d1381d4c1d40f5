"""Consumers of resources, and the projects, users and types they have."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Project(base.TimestampMixin, base.Base):
    __tablename__ = 'projects'
    __table_args__ = (sa.UniqueConstraint('external_id'), base.TABLE_ARGS)

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    external_id: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                                     nullable=False)


class User(base.TimestampMixin, base.Base):
    __tablename__ = 'users'
    __table_args__ = (sa.UniqueConstraint('external_id'), base.TABLE_ARGS)

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    external_id: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                                     nullable=False)


class ConsumerType(base.TimestampMixin, base.Base):
    __tablename__ = 'consumer_types'
    __table_args__ = (sa.UniqueConstraint('name'), base.TABLE_ARGS)

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255), nullable=False)


class Consumer(base.TimestampMixin, base.Base):
    __tablename__ = 'consumers'
    __table_args__ = (
        sa.UniqueConstraint('uuid'),
        # A project's (and user's) consumers with their type, for usage
        # sums per type, from this index alone.
        sa.Index('ix_consumers_project_id_user_id_type_id', 'project_id',
                 'user_id', 'consumer_type_id'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), nullable=False)
    project_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('projects.id',
                      name='fk_consumers_project_id'),
        nullable=False)
    user_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('users.id',
                      name='fk_consumers_user_id'),
        nullable=False)
    consumer_type_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer,
        sa.ForeignKey('consumer_types.id',
                      name='fk_consumers_consumer_type_id'))
    generation: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False, default=0, server_default='0')
