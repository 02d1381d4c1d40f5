"""The pci_devices table: PCI devices of compute nodes."""

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class PciDevice(base.TimestampMixin, base.SoftDeleteMixin, base.Base):
    __tablename__ = 'pci_devices'
    __table_args__ = (
        sa.UniqueConstraint('compute_node_id', 'address', 'deleted'),
        sa.Index('ix_pci_devices_compute_node_id_deleted',
                 'compute_node_id', 'deleted'),
        sa.Index('ix_pci_devices_instance_uuid_deleted', 'instance_uuid',
                 'deleted'),
        base.TABLE_ARGS,
    )

    id: orm.Mapped[int] = orm.mapped_column(sa.Integer, primary_key=True)
    compute_node_id: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, sa.ForeignKey('compute_nodes.id'), nullable=False)
    address: orm.Mapped[str] = orm.mapped_column(sa.String(12),
                                                 nullable=False)
    vendor_id: orm.Mapped[str] = orm.mapped_column(sa.String(4),
                                                   nullable=False)
    product_id: orm.Mapped[str] = orm.mapped_column(sa.String(4),
                                                    nullable=False)
    dev_type: orm.Mapped[str] = orm.mapped_column(sa.String(16),
                                                  nullable=False)
    dev_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    label: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                               nullable=False)
    status: orm.Mapped[str] = orm.mapped_column(sa.String(36),
                                                nullable=False)
    # JSON: a dict of strings.
    extra_info: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    instance_uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    request_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    numa_node: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    parent_addr: orm.Mapped[str | None] = orm.mapped_column(sa.String(12))
