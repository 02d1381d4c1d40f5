"""The migrations table: moves of instances between compute nodes."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Migration(base.TimestampMixin, base.SoftDeleteMixin, base.Base):
    __tablename__ = 'migrations'
    __table_args__ = (
        sa.Index('ix_migrations_uuid', 'uuid', unique=True),
        sa.Index('ix_migrations_instance_uuid', 'instance_uuid'),
        sa.Index('ix_migrations_source', 'deleted', 'source_compute',
                 'source_node'),
        sa.Index('ix_migrations_dest', 'deleted', 'dest_compute',
                 'dest_node'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    # uuid and migration_type are NULL in rows written by old code; they
    # are completed on read and by an online data migration.
    uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    source_compute: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    dest_compute: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    source_node: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    dest_node: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    dest_host: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    instance_uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    old_instance_type_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer)
    new_instance_type_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer)
    status: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    migration_type: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(32))
    hidden: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, nullable=False, default=False,
        server_default=sa.false())
