"""Create the resource-provider tables; ratios become double precision.

Resource classes, traits, providers with their trees, aggregates and
traits, inventories, consumers (with projects, users and types) and
allocations, in the same database as the compute tables, so that a
compute node's legacy columns and its inventory change in one
transaction.

The ratio columns of compute_nodes and flavors were FLOAT, which MySQL
and MariaDB store in single precision (1.1 reads back as 1.1000000238);
they become DOUBLE, as the new tables' ratio.

Revision ID: 0003_resource_providers
Revises: 0002_compute
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0003_resource_providers'
down_revision = '0002_compute'
branch_labels = None
depends_on = None

DateTime = sa.DateTime().with_variant(
    mysql.DATETIME(fsp=6), 'mysql', 'mariadb')
TABLE_KWARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


def _timestamps():
    return [sa.Column('created_at', DateTime, nullable=True),
            sa.Column('updated_at', DateTime, nullable=True)]


def _id():
    return sa.Column('id', sa.Integer(), nullable=False)


def _int(name, nullable=False, **kw):
    return sa.Column(name, sa.Integer(), nullable=nullable, **kw)


def _named_table(table, length=255):
    """A table of (id, name) with unique names: classes, traits, types."""
    op.create_table(
        table,
        *_timestamps(),
        # A resource class's id is its index in os-resource-classes (or
        # 10000 and up): never generated, so MySQL accepts VCPU's 0.
        sa.Column('id', sa.Integer(),
                  autoincrement=table != 'resource_classes', nullable=False),
        sa.Column('name', sa.String(length=length), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_%s' % table),
        sa.UniqueConstraint('name', name='uq_%s_name' % table),
        **TABLE_KWARGS,
    )


def _external_id_table(table):
    op.create_table(
        table,
        *_timestamps(),
        _id(),
        sa.Column('external_id', sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_%s' % table),
        sa.UniqueConstraint('external_id', name='uq_%s_external_id' % table),
        **TABLE_KWARGS,
    )


def upgrade():
    _named_table('resource_classes')
    _named_table('traits')
    _named_table('consumer_types')
    _external_id_table('projects')
    _external_id_table('users')

    op.create_table(
        'resource_providers',
        *_timestamps(),
        _id(),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=False),
        _int('generation', server_default='0'),
        _int('root_provider_id', nullable=True),
        _int('parent_provider_id', nullable=True),
        sa.ForeignKeyConstraint(
            ['root_provider_id'], ['resource_providers.id'],
            name='fk_rp_root_provider_id'),
        sa.ForeignKeyConstraint(
            ['parent_provider_id'], ['resource_providers.id'],
            name='fk_rp_parent_provider_id'),
        sa.PrimaryKeyConstraint('id', name='pk_resource_providers'),
        sa.UniqueConstraint('uuid', name='uq_resource_providers_uuid'),
        sa.UniqueConstraint('name', name='uq_resource_providers_name'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_resource_providers_root_provider_id',
                    'resource_providers', ['root_provider_id'])
    op.create_index('ix_resource_providers_parent_provider_id',
                    'resource_providers', ['parent_provider_id'])

    op.create_table(
        'placement_aggregates',
        *_timestamps(),
        _id(),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_placement_aggregates'),
        sa.UniqueConstraint('uuid', name='uq_placement_aggregates_uuid'),
        **TABLE_KWARGS,
    )
    for table, alias, column, target in (
            ('resource_provider_aggregates', 'rpa', 'aggregate_id',
             'placement_aggregates'),
            ('resource_provider_traits', 'rpt', 'trait_id', 'traits')):
        op.create_table(
            table,
            *_timestamps(),
            _int('resource_provider_id'),
            _int(column),
            sa.ForeignKeyConstraint(
                ['resource_provider_id'], ['resource_providers.id'],
                name='fk_%s_resource_provider_id' % alias),
            sa.ForeignKeyConstraint(
                [column], ['%s.id' % target],
                name='fk_%s_%s' % (alias, column)),
            sa.PrimaryKeyConstraint('resource_provider_id', column,
                                    name='pk_%s' % table),
            **TABLE_KWARGS,
        )
        op.create_index('ix_%s_%s' % (table, column), table, [column])

    op.create_table(
        'inventories',
        *_timestamps(),
        _id(),
        _int('resource_provider_id'),
        _int('resource_class_id'),
        _int('total'),
        _int('reserved'),
        _int('min_unit'),
        _int('max_unit'),
        _int('step_size'),
        sa.Column('allocation_ratio', sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ['resource_provider_id'], ['resource_providers.id'],
            name='fk_inventories_resource_provider_id'),
        sa.ForeignKeyConstraint(
            ['resource_class_id'], ['resource_classes.id'],
            name='fk_inventories_resource_class_id'),
        sa.PrimaryKeyConstraint('id', name='pk_inventories'),
        sa.UniqueConstraint(
            'resource_provider_id', 'resource_class_id',
            name='uq_inventories_resource_provider_id_resource_class_id'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_inventories_resource_class_id', 'inventories',
                    ['resource_class_id'])

    op.create_table(
        'consumers',
        *_timestamps(),
        _id(),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        _int('project_id'),
        _int('user_id'),
        _int('consumer_type_id', nullable=True),
        _int('generation', server_default='0'),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'],
                                name='fk_consumers_project_id'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'],
                                name='fk_consumers_user_id'),
        sa.ForeignKeyConstraint(
            ['consumer_type_id'], ['consumer_types.id'],
            name='fk_consumers_consumer_type_id'),
        sa.PrimaryKeyConstraint('id', name='pk_consumers'),
        sa.UniqueConstraint('uuid', name='uq_consumers_uuid'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_consumers_project_id_user_id', 'consumers',
                    ['project_id', 'user_id'])

    op.create_table(
        'allocations',
        *_timestamps(),
        _id(),
        _int('resource_provider_id'),
        _int('consumer_id'),
        _int('resource_class_id'),
        _int('used'),
        sa.ForeignKeyConstraint(
            ['resource_provider_id'], ['resource_providers.id'],
            name='fk_allocations_resource_provider_id'),
        sa.ForeignKeyConstraint(['consumer_id'], ['consumers.id'],
                                name='fk_allocations_consumer_id'),
        sa.ForeignKeyConstraint(
            ['resource_class_id'], ['resource_classes.id'],
            name='fk_allocations_resource_class_id'),
        sa.PrimaryKeyConstraint('id', name='pk_allocations'),
        **TABLE_KWARGS,
    )
    op.create_index('ix_allocations_rp_rc_used', 'allocations',
                    ['resource_provider_id', 'resource_class_id', 'used'])
    op.create_index('ix_allocations_consumer_id', 'allocations',
                    ['consumer_id'])
    op.create_index('ix_allocations_resource_class_id', 'allocations',
                    ['resource_class_id'])

    # MySQL's MODIFY COLUMN rewrites the whole column definition, so the
    # existing nullability and server default must be restated.
    with op.batch_alter_table('compute_nodes') as batch:
        for column in ('cpu_allocation_ratio', 'ram_allocation_ratio',
                       'disk_allocation_ratio'):
            batch.alter_column(column, type_=sa.Double(),
                               existing_type=sa.Float(),
                               existing_nullable=True)
    with op.batch_alter_table('flavors') as batch:
        batch.alter_column('rxtx_factor', type_=sa.Double(),
                           existing_type=sa.Float(), existing_nullable=False,
                           existing_server_default='1')
