"""The compute_nodes table: one hypervisor node and its legacy resources.

The resource columns (vcpus, memory_mb, ...) are the legacy store that
resource-provider inventories replace; they stay so that old readers keep
working during an upgrade.
"""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class ComputeNode(base.TimestampMixin, base.SoftDeleteMixin, base.Base):
    __tablename__ = 'compute_nodes'
    __table_args__ = (
        sa.UniqueConstraint('host', 'hypervisor_hostname', 'deleted'),
        sa.Index('ix_compute_nodes_uuid', 'uuid', unique=True),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    # Nullable: rows written before uuids existed are backfilled by an
    # online data migration.
    uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    service_id: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    host: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    hypervisor_hostname: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    host_ip: orm.Mapped[str | None] = orm.mapped_column(sa.String(39))
    hypervisor_type: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), nullable=False)
    hypervisor_version: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, nullable=False)
    cpu_info: orm.Mapped[str] = orm.mapped_column(sa.Text, nullable=False)
    vcpus: orm.Mapped[int] = orm.mapped_column(sa.Integer, nullable=False)
    memory_mb: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                   nullable=False)
    local_gb: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                  nullable=False)
    vcpus_used: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                    nullable=False)
    memory_mb_used: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                        nullable=False)
    local_gb_used: orm.Mapped[int] = orm.mapped_column(sa.Integer,
                                                       nullable=False)
    free_ram_mb: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    free_disk_gb: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    current_workload: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    running_vms: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    disk_available_least: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer)
    # NULL or 0.0 in rows from old code; filled from config on read and by
    # an online data migration.
    cpu_allocation_ratio: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double)  # DOUBLE: MySQL FLOAT is single precision
    ram_allocation_ratio: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double)  # DOUBLE: MySQL FLOAT is single precision
    disk_allocation_ratio: orm.Mapped[float | None] = orm.mapped_column(
        sa.Double)  # DOUBLE: MySQL FLOAT is single precision
    # JSON: a dict of strings.
    stats: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    # JSON: a PciDevicePoolList primitive, or a legacy dict / list of dicts.
    pci_stats: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    # JSON: {'cells': [{id, cpuset, memory_mb, pinned_cpus,
    # memory_usage}]}; NULL for a host without NUMA topology.
    numa_topology: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
