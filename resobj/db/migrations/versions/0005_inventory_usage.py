"""Each inventory carries its usage, kept by triggers.

``inventories.used`` is the sum of the allocations of the inventory's
provider and class. Triggers on ``allocations`` and ``inventories`` keep
it (``resobj/db/models/inventory_usage.py``), so services of the
previous release, which write allocations without knowing the column,
keep it right during a rolling upgrade. The column is filled from the
allocations after the triggers exist: on PostgreSQL in the migration's
transaction, whose trigger DDL holds off allocation writes until the
commit; on MySQL, whose DDL commits at once, an allocation written while
the column is filled may be miscounted, which ``resobj-manage db
online_data_migrations`` (``inventory_usage``) corrects.

MySQL and MariaDB with binary logging on let only a user with SUPER
create triggers, unless ``log_bin_trust_function_creators`` is set.

Revision ID: 0005_inventory_usage
Revises: 0004_usage_covering_indexes
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

from resobj.db.models import inventory_usage

revision = '0005_inventory_usage'
down_revision = '0004_usage_covering_indexes'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('inventories', sa.Column(
        'used', sa.BigInteger(), nullable=False, server_default='0'))
    connection = op.get_bind()
    for statement in inventory_usage.statements(connection.dialect.name):
        connection.exec_driver_sql(statement)
    connection.exec_driver_sql(inventory_usage.RECOUNT)
