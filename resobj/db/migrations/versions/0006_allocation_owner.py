"""Each allocation carries its consumer's project and user, by trigger.

``allocations.project_id`` and ``user_id`` copy the consumer's, so that
a project's usage is summed over its allocations by their index rather
than through a join of its consumers with every allocation. Triggers on
``allocations`` and ``consumers`` keep the copy
(``resobj/db/models/allocation_owner.py``), also for services of the
previous release during a rolling upgrade. The columns are filled after
the triggers exist; on MySQL, whose DDL commits at once, an allocation
written meanwhile may keep an empty owner, which ``resobj-manage db
online_data_migrations`` (``allocation_owners``) fills.

Revision ID: 0006_allocation_owner
Revises: 0005_inventory_usage
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

from resobj.db.models import allocation_owner

revision = '0006_allocation_owner'
down_revision = '0005_inventory_usage'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('allocations', sa.Column('project_id', sa.Integer(),
                                           nullable=True))
    op.add_column('allocations', sa.Column('user_id', sa.Integer(),
                                           nullable=True))
    op.create_index('ix_allocations_project_id_user_id_rc_used',
                    'allocations',
                    ['project_id', 'user_id', 'resource_class_id', 'used'])
    connection = op.get_bind()
    for statement in allocation_owner.statements(connection.dialect.name):
        connection.exec_driver_sql(statement)
    connection.exec_driver_sql(allocation_owner.COPY)
