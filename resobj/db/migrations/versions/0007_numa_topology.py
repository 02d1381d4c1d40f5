"""NUMA topologies of compute nodes and instances, PCI requests of instances.

Expand only: three nullable JSON text columns, which services of the
previous release neither read nor write, so they keep working on this
schema during a rolling upgrade. NULL means "no NUMA topology" (a flat
host, an instance not placed on cells) and "no PCI requests".

Revision ID: 0007_numa_topology
Revises: 0006_allocation_owner
Create Date: 2026-11-27
"""

from alembic import op
import sqlalchemy as sa

revision = '0007_numa_topology'
down_revision = '0006_allocation_owner'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('compute_nodes', sa.Column('numa_topology', sa.Text(),
                                             nullable=True))
    op.add_column('instances', sa.Column('numa_topology', sa.Text(),
                                         nullable=True))
    op.add_column('instances', sa.Column('pci_requests', sa.Text(),
                                         nullable=True))
