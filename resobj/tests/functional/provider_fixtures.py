"""Helpers for resource-provider tests, and rows the objects do not write.

Allocations (with their consumer, project and user) are written here
directly, through the tables: their own objects are built elsewhere, and
these tests need only their rows.
"""

from oslo_utils import uuidutils

from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj.db import facade
from resobj import objects
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base


@facade.writer
def allocate(context, provider_id, resource_class, *amounts):
    """Give ``provider_id`` one allocation of each amount, one consumer.

    The consumer has a project and user of its own. Returns its id.
    """
    consumer_id = fx.consumer(context, project=uuidutils.generate_uuid(),
                              user=uuidutils.generate_uuid())
    rc_id = rc_db.ids_by_names(context, [resource_class])[resource_class]
    fx.allocate(context, *[(provider_id, consumer_id, rc_id, amount)
                           for amount in amounts])
    return consumer_id


def make_provider(context, name, parent=None, **inventory):
    """A new provider with one inventory per class: {class: total}."""
    provider = objects.ResourceProvider(
        context, name=name,
        parent_provider_uuid=parent.uuid if parent else None)
    provider.create()
    for resource_class, total in sorted(inventory.items()):
        provider.add_inventory(objects.Inventory(
            resource_class=resource_class, total=total, max_unit=total))
    return provider


class ProviderTestCase(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        rc_db.ensure_sync(self.context)
        trait_db.ensure_sync(self.context)

    def make(self, name, parent=None, **inventory):
        return make_provider(self.context, name, parent, **inventory)

    def get(self, provider):
        return objects.ResourceProvider.get_by_uuid(self.context,
                                                    provider.uuid)
