"""The outcomes of recent keyed conductor calls (conductor RPC 1.1).

Expand only: a new table, which services of the previous release never
read; their conductors serve RPC 1.0 without keys.

Revision ID: 0008_call_outcomes
Revises: 0007_numa_topology
Create Date: 2026-12-05
"""

from alembic import op
import sqlalchemy as sa

from resobj.db.models import base

revision = '0008_call_outcomes'
down_revision = '0007_numa_topology'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'call_outcomes',
        sa.Column('idempotency_key', sa.String(36), nullable=False),
        sa.Column('method', sa.String(255), nullable=False),
        sa.Column('answer', sa.Text(), nullable=True),
        sa.Column('created_at', base.DateTime, nullable=False),
        sa.PrimaryKeyConstraint('idempotency_key',
                                name='pk_call_outcomes'),
        **base.TABLE_ARGS)
    op.create_index('ix_call_outcomes_created_at', 'call_outcomes',
                    ['created_at'])
