"""Rows the objects under test do not write themselves, and a counter.

Providers, inventories, allocations and provider traits are other
objects' business; tests that need one to exist (to make a resource
class, trait or consumer "in use") insert it here, directly.
"""

import uuid

import fixtures
import sqlalchemy as sa

from resobj.db import facade
from resobj.db.models import allocation
from resobj.db.models import inventory
from resobj.db.models import resource_provider


@facade.writer
def insert_provider(context, name='rp'):
    table = resource_provider.ResourceProvider.__table__
    return context.session.execute(sa.insert(table).values(
        uuid=str(uuid.uuid4()), name=name,
        generation=0)).inserted_primary_key[0]


@facade.writer
def insert_inventory(context, provider_id, rc_id, total=8):
    context.session.execute(sa.insert(inventory.Inventory.__table__).values(
        resource_provider_id=provider_id, resource_class_id=rc_id,
        total=total, reserved=0, min_unit=1, max_unit=total, step_size=1,
        allocation_ratio=1.0))


@facade.writer
def insert_allocation(context, provider_id, consumer_id, rc_id, used=1):
    context.session.execute(sa.insert(allocation.Allocation.__table__).values(
        resource_provider_id=provider_id, consumer_id=consumer_id,
        resource_class_id=rc_id, used=used))


@facade.writer
def link_trait(context, provider_id, trait_id):
    context.session.execute(sa.insert(
        resource_provider.ResourceProviderTrait.__table__).values(
            resource_provider_id=provider_id, trait_id=trait_id))


@facade.reader
def count(context, table):
    return context.session.execute(
        sa.select(sa.func.count()).select_from(table)).scalar()


class StatementCounter(fixtures.Fixture):
    """Records the SQL statements the engine runs that mention ``table``.

    Only statements naming the table count: the drivers' and oslo.db's
    own (transaction and connection checks) are not what a test counts.
    """

    def __init__(self, engine, table):
        super().__init__()
        self.engine = engine
        self.table = table
        self.statements = []

    def _setUp(self):
        sa.event.listen(self.engine, 'before_cursor_execute', self._record)
        self.addCleanup(sa.event.remove, self.engine,
                        'before_cursor_execute', self._record)

    def _record(self, conn, cursor, statement, parameters, context,
                executemany):
        if self.table in statement:
            self.statements.append(statement)

    @property
    def count(self):
        return len(self.statements)
