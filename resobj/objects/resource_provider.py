"""ResourceProvider: something that offers resources, in a tree.

A provider's ``generation`` orders changes: every inventory or trait
change (and an aggregate change when asked) is written only if the
generation the object holds is still the stored one, and bumps it. A
change from a stale object raises ResourceProviderConcurrentUpdateDetected
and changes nothing; re-read the provider and retry.
"""

from oslo_utils import uuidutils

from resobj.db.api import inventory as inventory_db
from resobj.db.api import resource_provider as rp_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

# What save() writes; every other field is the database's or fixed.
SETTABLE_FIELDS = ('name', 'parent_provider_uuid')


@base.ResobjObjectRegistry.register
class ResourceProvider(base.ResobjObject):
    # Version 1.0: initial version: flat providers
    # Version 1.1: adds parent_provider_uuid and root_provider_uuid (nested
    #              providers); backporting a provider that has a parent to
    #              1.0 raises ObjectBackportError, a root drops both
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'name': fields.StringField(),
        'generation': fields.NonNegativeIntegerField(default=0),
        'parent_provider_uuid': fields.UUIDField(nullable=True),
        'root_provider_uuid': fields.UUIDField(),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    ADDED_IN = {'parent_provider_uuid': '1.1', 'root_provider_uuid': '1.1'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if base.version_tuple(target_version) < (1, 1) and \
                primitive.get('parent_provider_uuid') is not None:
            # A 1.0 peer would take the child for a root and could, for
            # example, place a whole request on it without its tree.
            raise exception.ObjectBackportError(
                objname=self.obj_name(), target=target_version,
                reason='provider %s has parent %s; version 1.0 has no '
                       'nested providers' % (
                           primitive.get('uuid'),
                           primitive['parent_provider_uuid']))
        base.drop_fields_added_after(primitive, target_version,
                                     self.ADDED_IN)

    @staticmethod
    def _from_db_object(context, provider, db_row):
        return base.ResobjObject._from_db_object(context, provider, db_row)

    def _refresh(self, db_row):
        self._from_db_object(self.obj_context, self, db_row)

    def _set_generation(self, generation):
        self.generation = generation
        self.obj_reset_changes(['generation'])

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context, uuid):
        return cls._from_db_object(context, cls(),
                                   rp_db.get_by_uuid(context, uuid))

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        if not self.obj_attr_is_set('name') or not self.name:
            raise exception.ObjectActionError(action='create',
                                              reason='name is required')
        if not self.obj_attr_is_set('uuid'):
            self.uuid = uuidutils.generate_uuid()
        parent = self.parent_provider_uuid if self.obj_attr_is_set(
            'parent_provider_uuid') else None
        self._refresh(rp_db.create(self.obj_context, self.uuid, self.name,
                                   parent_provider_uuid=parent))

    @base.remotable
    def save(self):
        """Write a changed name or parent; refuse any other change.

        The generation is neither checked nor bumped, as in placement. A
        new parent re-roots the provider's whole subtree; a parent that
        is the provider or one of its descendants raises
        InvalidResourceProviderParent.
        """
        changes = self.obj_get_changes()
        other = sorted(set(changes) - set(SETTABLE_FIELDS))
        if other:
            raise exception.ObjectActionError(
                action='save', reason='%s cannot be changed' % ', '.join(
                    other))
        if changes:
            self._refresh(rp_db.update(self.obj_context, self.id, changes))

    @base.remotable
    def destroy(self):
        rp_db.destroy(self.obj_context, self.id)

    @base.remotable
    def increment_generation(self):
        self._set_generation(rp_db.increment_generation(
            self.obj_context, self.id, self.generation))

    @base.remotable
    def set_aggregates(self, aggregate_uuids, increment_generation=False):
        """Make ``aggregate_uuids`` the provider's aggregates.

        With ``increment_generation`` the change is compared against and
        bumps the generation (placement's API does so from 1.19).
        """
        seen = self.generation if increment_generation else None
        self._set_generation(rp_db.set_aggregates(
            self.obj_context, self.id, list(aggregate_uuids),
            seen_generation=seen))

    @base.remotable
    def get_aggregates(self):
        return rp_db.get_aggregates(self.obj_context, self.id)

    @base.remotable
    def set_traits(self, traits):
        """Make the trait names ``traits`` the provider's traits.

        Compared against and bumps the generation only if they change.
        """
        self._set_generation(rp_db.set_traits(
            self.obj_context, self.id, self.generation, list(traits)))

    @base.remotable
    def get_traits(self):
        return rp_db.get_traits(self.obj_context, self.id)

    def _own(self, inventory):
        """The DB values of ``inventory``, which must be this provider's."""
        if inventory.obj_attr_is_set('resource_provider_uuid') and \
                inventory.resource_provider_uuid != self.uuid:
            raise exception.ObjectActionError(
                action='inventory', reason='inventory of %s belongs to '
                'provider %s, not %s' % (inventory.resource_class,
                                         inventory.resource_provider_uuid,
                                         self.uuid))
        values = inventory.db_values()
        inventory.resource_provider_uuid = self.uuid
        return values

    @base.remotable
    def add_inventory(self, inventory):
        self._set_generation(inventory_db.add(
            self.obj_context, self.id, self.generation, self._own(inventory)))

    @base.remotable
    def update_inventory(self, inventory):
        self._set_generation(inventory_db.update(
            self.obj_context, self.id, self.generation, self._own(inventory)))

    @base.remotable
    def delete_inventory(self, resource_class):
        self._set_generation(inventory_db.delete(
            self.obj_context, self.id, self.generation, resource_class))

    @base.remotable
    def set_inventory(self, inventory_list):
        """Make ``inventory_list`` (an InventoryList) all its inventory."""
        self._set_generation(inventory_db.set_inventories(
            self.obj_context, self.id, self.generation,
            [self._own(inventory) for inventory in inventory_list]))


@base.ResobjObjectRegistry.register
class ResourceProviderList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, ResourceProvider 1.0
    # Version 1.1: ResourceProvider 1.1
    VERSION = '1.1'

    fields = {
        'objects': fields.ListOfObjectsField('ResourceProvider'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1')],
    }

    @classmethod
    @base.remotable
    def get_all_by_filters(cls, context, filters=None):
        """Providers matching ``filters``, ordered by id.

        See ``resobj.db.api.resource_provider.get_all_by_filters`` for
        the filters.
        """
        return base.obj_make_list(
            context, cls(context),
            rp_db.get_all_by_filters(context, filters))
