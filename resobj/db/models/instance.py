"""The instances table: one server and the resources it consumes."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class Instance(base.TimestampMixin, base.SoftDeleteMixin, base.Base):
    __tablename__ = 'instances'
    __table_args__ = (
        sa.Index('ix_instances_uuid', 'uuid', unique=True),
        sa.Index('ix_instances_host_node_deleted', 'host', 'node',
                 'deleted'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36), nullable=False)
    host: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    node: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    vm_state: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    task_state: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    project_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    user_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    vcpus: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    memory_mb: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    root_gb: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    ephemeral_gb: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    booted_from_volume: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, nullable=False, default=False,
        server_default=sa.false())
    # Versioned blobs: JSON of Flavor primitives, so a flavor change or
    # deletion never rewrites what an instance was built with.
    flavor: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    old_flavor: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    new_flavor: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    # JSON: {'cells': [{id, cpuset, memory_mb, pinned_cpus}]}, or NULL
    # when the instance is not placed on NUMA cells.
    numa_topology: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    # JSON: [{alias_name, count}], or NULL.
    pci_requests: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
