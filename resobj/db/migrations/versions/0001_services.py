"""Create the services table.

Revision ID: 0001_services
Revises:
Create Date: 2026-11-21
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# Microseconds on every backend (MySQL's DATETIME defaults to seconds).
DateTime = sa.DateTime().with_variant(
    mysql.DATETIME(fsp=6), 'mysql', 'mariadb')

revision = '0001_services'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'services',
        sa.Column('created_at', DateTime, nullable=True),
        sa.Column('updated_at', DateTime, nullable=True),
        sa.Column('deleted_at', DateTime, nullable=True),
        sa.Column('deleted', sa.Integer(), server_default='0',
                  nullable=False),
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('binary', sa.String(length=255), nullable=False),
        sa.Column('topic', sa.String(length=255), nullable=True),
        sa.Column('report_count', sa.Integer(), server_default='0',
                  nullable=False),
        sa.Column('disabled', sa.Boolean(), server_default=sa.false(),
                  nullable=False),
        sa.Column('disabled_reason', sa.String(length=255), nullable=True),
        sa.Column('last_seen_up', DateTime, nullable=True),
        sa.Column('forced_down', sa.Boolean(), server_default=sa.false(),
                  nullable=False),
        sa.Column('version', sa.Integer(), server_default='0',
                  nullable=False),
        sa.PrimaryKeyConstraint('id', name='pk_services'),
        sa.UniqueConstraint('host', 'binary', 'deleted',
                            name='uq_services_host_binary_deleted'),
        sa.UniqueConstraint('host', 'topic', 'deleted',
                            name='uq_services_host_topic_deleted'),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_services_uuid', 'services', ['uuid'], unique=True)
