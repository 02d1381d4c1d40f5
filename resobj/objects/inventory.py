"""Inventory: how much of one resource class one provider offers.

An inventory names its provider by uuid, not by a ResourceProvider
object: the provider's generation changes with every inventory change,
so a copy embedded in each inventory would go stale at once, and a list
would carry one copy per class. Inventories are written through their
provider (``ResourceProvider.add_inventory`` and friends), which holds
the generation those writes compare and bump.
"""

from resobj.db.api import inventory as inventory_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

CUSTOM_PREFIX = 'CUSTOM_'


@base.ResobjObjectRegistry.register
class Inventory(base.ResobjObject):
    # Version 1.0: initial version; standard resource classes only
    # Version 1.1: custom resource classes (CUSTOM_*); backporting an
    #              inventory of one to 1.0 raises ObjectBackportError
    VERSION = '1.1'

    fields = {
        'resource_provider_uuid': fields.UUIDField(),
        'resource_class': fields.StringField(),
        'total': fields.NonNegativeIntegerField(),
        'reserved': fields.NonNegativeIntegerField(
            default=inventory_db.DEFAULTS['reserved']),
        'min_unit': fields.NonNegativeIntegerField(
            default=inventory_db.DEFAULTS['min_unit']),
        'max_unit': fields.NonNegativeIntegerField(
            default=inventory_db.DEFAULTS['max_unit']),
        'step_size': fields.NonNegativeIntegerField(
            default=inventory_db.DEFAULTS['step_size']),
        'allocation_ratio': fields.NonNegativeFloatField(
            default=inventory_db.DEFAULTS['allocation_ratio']),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        resource_class = primitive.get('resource_class') or ''
        if base.version_tuple(target_version) < (1, 1) and \
                resource_class.startswith(CUSTOM_PREFIX):
            # A 1.0 peer knows only the standard classes; renaming or
            # dropping the inventory would misstate the provider.
            raise exception.ObjectBackportError(
                objname=self.obj_name(), target=target_version,
                reason='custom resource class %s needs version 1.1'
                       % resource_class)

    @property
    def capacity(self):
        """What may be allocated in all: int((total - reserved) * ratio)."""
        return int((self.total - self.reserved) * self.allocation_ratio)

    def db_values(self):
        """The values the DB API writes, with defaults for unset fields."""
        # Sets only the unset ones.
        self.obj_set_defaults(*inventory_db.DEFAULTS)
        return {name: getattr(self, name) for name in
                ('resource_class',) + inventory_db.VALUE_COLUMNS
                if self.obj_attr_is_set(name)}


@base.ResobjObjectRegistry.register
class InventoryList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Inventory 1.0
    # Version 1.1: Inventory 1.1
    VERSION = '1.1'

    fields = {
        'objects': fields.ListOfObjectsField('Inventory'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1')],
    }

    @classmethod
    @base.remotable
    def get_all_by_resource_provider(cls, context, resource_provider):
        """The inventories of ``resource_provider``, by class name."""
        rows = inventory_db.get_all_by_provider(context,
                                                resource_provider.id)
        return base.obj_make_list(context, cls(context), [
            dict(row, resource_provider_uuid=resource_provider.uuid)
            for row in rows])

    def find(self, resource_class):
        """The inventory of ``resource_class``, or None."""
        for inventory in self.objects:
            if inventory.resource_class == resource_class:
                return inventory
        return None
