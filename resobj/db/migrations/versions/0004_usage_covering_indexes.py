"""Usage sums per project read indexes only.

``GET /usages`` sums a project's (and a user's) allocations per consumer
type and class. The consumers were found on (project_id, user_id) and
each one's allocations on (consumer_id), and every row then read from
the table for its type, class and amount. The two indexes now carry
those columns: (project_id, user_id, consumer_type_id) and (consumer_id,
resource_class_id, used). They replace the narrower ones, which are
their prefixes, so writes maintain no more indexes than before.

The new index is created before the old one is dropped: MySQL needs an
index starting with a foreign key's column at every moment.

Revision ID: 0004_usage_covering_indexes
Revises: 0003_resource_providers
Create Date: 2026-11-21
"""

from alembic import op

revision = '0004_usage_covering_indexes'
down_revision = '0003_resource_providers'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_consumers_project_id_user_id_type_id', 'consumers',
                    ['project_id', 'user_id', 'consumer_type_id'])
    op.drop_index('ix_consumers_project_id_user_id', table_name='consumers')
    op.create_index('ix_allocations_consumer_id_rc_used', 'allocations',
                    ['consumer_id', 'resource_class_id', 'used'])
    op.drop_index('ix_allocations_consumer_id', table_name='allocations')
