"""Create the compute tables.

Compute nodes, flavors, instances, migrations and PCI devices, in the same
database as services (and, later, the resource-provider tables).

Revision ID: 0002_compute
Revises: 0001_services
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0002_compute'
down_revision = '0001_services'
branch_labels = None
depends_on = None

# Microseconds on every backend (MySQL's DATETIME defaults to seconds).
DateTime = sa.DateTime().with_variant(
    mysql.DATETIME(fsp=6), 'mysql', 'mariadb')
TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _persistent_columns():
    """created_at, updated_at, deleted_at, deleted: every table has them."""
    return [
        sa.Column('created_at', DateTime, nullable=True),
        sa.Column('updated_at', DateTime, nullable=True),
        sa.Column('deleted_at', DateTime, nullable=True),
        sa.Column('deleted', sa.Integer(), server_default='0',
                  nullable=False),
    ]


def _int(name, nullable=True, **kw):
    return sa.Column(name, sa.Integer(), nullable=nullable, **kw)


def _str(name, length=255, nullable=True):
    return sa.Column(name, sa.String(length=length), nullable=nullable)


def _bool(name, default):
    return sa.Column(name, sa.Boolean(),
                     server_default=sa.true() if default else sa.false(),
                     nullable=False)


def upgrade():
    op.create_table(
        'compute_nodes',
        sa.Column('id', sa.Integer(), nullable=False),
        _str('uuid', 36),
        _int('service_id'),
        _str('host'),
        _str('hypervisor_hostname'),
        _str('host_ip', 39),
        _str('hypervisor_type', nullable=False),
        _int('hypervisor_version', nullable=False),
        sa.Column('cpu_info', sa.Text(), nullable=False),
        _int('vcpus', nullable=False),
        _int('memory_mb', nullable=False),
        _int('local_gb', nullable=False),
        _int('vcpus_used', nullable=False),
        _int('memory_mb_used', nullable=False),
        _int('local_gb_used', nullable=False),
        _int('free_ram_mb'),
        _int('free_disk_gb'),
        _int('current_workload'),
        _int('running_vms'),
        _int('disk_available_least'),
        sa.Column('cpu_allocation_ratio', sa.Float(), nullable=True),
        sa.Column('ram_allocation_ratio', sa.Float(), nullable=True),
        sa.Column('disk_allocation_ratio', sa.Float(), nullable=True),
        sa.Column('stats', sa.Text(), nullable=True),
        sa.Column('pci_stats', sa.Text(), nullable=True),
        *_persistent_columns(),
        sa.PrimaryKeyConstraint('id', name='pk_compute_nodes'),
        sa.UniqueConstraint(
            'host', 'hypervisor_hostname', 'deleted',
            name='uq_compute_nodes_host_hypervisor_hostname_deleted'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_compute_nodes_uuid', 'compute_nodes', ['uuid'],
                    unique=True)

    op.create_table(
        'flavors',
        sa.Column('id', sa.Integer(), nullable=False),
        _str('flavorid', nullable=False),
        _str('name', nullable=False),
        _int('memory_mb', nullable=False),
        _int('vcpus', nullable=False),
        _int('root_gb', nullable=False),
        _int('ephemeral_gb', nullable=False, server_default='0'),
        _int('swap', nullable=False, server_default='0'),
        sa.Column('rxtx_factor', sa.Float(), server_default='1',
                  nullable=False),
        sa.Column('extra_specs', sa.Text(), nullable=True),
        _bool('is_public', True),
        _bool('disabled', False),
        sa.Column('description', sa.Text(), nullable=True),
        *_persistent_columns(),
        sa.PrimaryKeyConstraint('id', name='pk_flavors'),
        sa.UniqueConstraint('flavorid', 'deleted',
                            name='uq_flavors_flavorid_deleted'),
        sa.UniqueConstraint('name', 'deleted',
                            name='uq_flavors_name_deleted'),
        **TABLE_KWARGS,
    )

    op.create_table(
        'instances',
        sa.Column('id', sa.Integer(), nullable=False),
        _str('uuid', 36, nullable=False),
        _str('host'),
        _str('node'),
        _str('vm_state'),
        _str('task_state'),
        _str('project_id'),
        _str('user_id'),
        _int('vcpus'),
        _int('memory_mb'),
        _int('root_gb'),
        _int('ephemeral_gb'),
        _bool('booted_from_volume', False),
        sa.Column('flavor', sa.Text(), nullable=True),
        sa.Column('old_flavor', sa.Text(), nullable=True),
        sa.Column('new_flavor', sa.Text(), nullable=True),
        *_persistent_columns(),
        sa.PrimaryKeyConstraint('id', name='pk_instances'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_instances_uuid', 'instances', ['uuid'], unique=True)
    op.create_index('ix_instances_host_node_deleted', 'instances',
                    ['host', 'node', 'deleted'])

    op.create_table(
        'migrations',
        sa.Column('id', sa.Integer(), nullable=False),
        _str('uuid', 36),
        _str('source_compute'),
        _str('dest_compute'),
        _str('source_node'),
        _str('dest_node'),
        _str('dest_host'),
        _str('instance_uuid', 36),
        _int('old_instance_type_id'),
        _int('new_instance_type_id'),
        _str('status'),
        _str('migration_type', 32),
        _bool('hidden', False),
        *_persistent_columns(),
        sa.PrimaryKeyConstraint('id', name='pk_migrations'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_migrations_uuid', 'migrations', ['uuid'],
                    unique=True)
    op.create_index('ix_migrations_instance_uuid', 'migrations',
                    ['instance_uuid'])
    op.create_index('ix_migrations_source', 'migrations',
                    ['deleted', 'source_compute', 'source_node'])
    op.create_index('ix_migrations_dest', 'migrations',
                    ['deleted', 'dest_compute', 'dest_node'])

    op.create_table(
        'pci_devices',
        sa.Column('id', sa.Integer(), nullable=False),
        _int('compute_node_id', nullable=False),
        _str('address', 12, nullable=False),
        _str('vendor_id', 4, nullable=False),
        _str('product_id', 4, nullable=False),
        _str('dev_type', 16, nullable=False),
        _str('dev_id'),
        _str('label', nullable=False),
        _str('status', 36, nullable=False),
        sa.Column('extra_info', sa.Text(), nullable=True),
        _str('instance_uuid', 36),
        _str('request_id', 36),
        _int('numa_node'),
        _str('parent_addr', 12),
        *_persistent_columns(),
        sa.ForeignKeyConstraint(
            ['compute_node_id'], ['compute_nodes.id'],
            name='fk_pci_devices_compute_node_id_compute_nodes'),
        sa.PrimaryKeyConstraint('id', name='pk_pci_devices'),
        sa.UniqueConstraint(
            'compute_node_id', 'address', 'deleted',
            name='uq_pci_devices_compute_node_id_address_deleted'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_pci_devices_compute_node_id_deleted', 'pci_devices',
                    ['compute_node_id', 'deleted'])
    op.create_index('ix_pci_devices_instance_uuid_deleted', 'pci_devices',
                    ['instance_uuid', 'deleted'])
