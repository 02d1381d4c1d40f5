"""Helpers for resource-provider tests, and rows the objects do not write.

Allocations (with their consumer, project and user) are written here
directly, through the tables: their own objects are built elsewhere, and
these tests need only their rows.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj.db import facade
from resobj.db.models import allocation
from resobj.db.models import consumer
from resobj import objects
from resobj.tests.functional import db_base


def _insert(context, table, **values):
    return context.session.execute(
        sa.insert(table).values(**values)).inserted_primary_key[0]


@facade.writer
def allocate(context, provider_id, resource_class, *amounts):
    """Give ``provider_id`` one allocation of each amount, one consumer.

    Returns the consumer's id.
    """
    project_id = _insert(context, consumer.Project.__table__,
                         external_id=uuidutils.generate_uuid())
    user_id = _insert(context, consumer.User.__table__,
                      external_id=uuidutils.generate_uuid())
    consumer_id = _insert(context, consumer.Consumer.__table__,
                          uuid=uuidutils.generate_uuid(),
                          project_id=project_id, user_id=user_id)
    rc_id = rc_db.ids_by_names(context, [resource_class])[resource_class]
    context.session.execute(sa.insert(allocation.Allocation.__table__), [
        {'resource_provider_id': provider_id, 'consumer_id': consumer_id,
         'resource_class_id': rc_id, 'used': amount} for amount in amounts])
    return consumer_id


@facade.reader
def count_rows(context, model, **criteria):
    table = model.__table__
    return context.session.execute(
        sa.select(sa.func.count()).select_from(table).where(
            *(table.c[k] == v for k, v in criteria.items()))).scalar()


class ProviderTestCase(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        trait_db.ensure_sync(self.context)

    def make(self, name, parent=None, **inventory):
        provider = objects.ResourceProvider(
            self.context, name=name,
            parent_provider_uuid=parent.uuid if parent else None)
        provider.create()
        for resource_class, total in sorted(inventory.items()):
            provider.add_inventory(objects.Inventory(
                resource_class=resource_class, total=total,
                max_unit=total))
        return provider

    def get(self, provider):
        return objects.ResourceProvider.get_by_uuid(self.context,
                                                    provider.uuid)
