"""Allocation: an amount of one resource class a consumer holds on a
provider; AllocationList writes and reads them, one or many consumers at
once.
"""

from resobj.db.api import allocation as alloc_db
from resobj.db.api import reshaper as reshaper_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

# Set by resobj.objects.configure(conf)
# ([resource_providers] allocation_conflict_retry_count).
_conflict_retries = 10


def set_conflict_retries(count):
    global _conflict_retries
    _conflict_retries = count


@base.ResobjObjectRegistry.register
class Allocation(base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds consumer_type; dropped below 1.1 (an older peer
    #              writing back keeps the stored type: types only change
    #              when set)
    # Version 1.2: adds consumer_generation (as read; dropped below 1.2)
    VERSION = '1.2'

    fields = {
        'resource_provider_uuid': fields.UUIDField(),
        'resource_class': fields.StringField(),
        'consumer_uuid': fields.UUIDField(),
        'project_id': fields.StringField(),
        'user_id': fields.StringField(),
        'consumer_type': fields.StringField(nullable=True),
        'used': fields.NonNegativeIntegerField(),
        # The consumer's generation when read; what a compare-and-swap
        # write of its allocations (replace_all) states it saw.
        'consumer_generation': fields.NonNegativeIntegerField(
            nullable=True),
    }

    ADDED_IN = {'consumer_type': '1.1', 'consumer_generation': '1.2'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        base.drop_fields_added_after(primitive, target_version,
                                     self.ADDED_IN)


def _requests(allocations, consumer_generations, emptied):
    """Group allocations per consumer into DB API requests."""
    requests = {}
    for alloc in allocations:
        owner = (alloc.project_id, alloc.user_id,
                 alloc.consumer_type if alloc.obj_attr_is_set(
                     'consumer_type') else None)
        request = requests.setdefault(alloc.consumer_uuid, {
            'consumer_uuid': alloc.consumer_uuid, 'project_id': owner[0],
            'user_id': owner[1], 'consumer_type': owner[2],
            'allocations': []})
        if owner != (request['project_id'], request['user_id'],
                     request['consumer_type']):
            raise exception.Invalid(
                'Consumer %s has allocations with different projects, '
                'users or types' % alloc.consumer_uuid)
        request['allocations'].append({
            'resource_provider_uuid': alloc.resource_provider_uuid,
            'resource_class': alloc.resource_class, 'used': alloc.used})
    for uuid, (project_id, user_id) in emptied.items():
        requests.setdefault(uuid, {
            'consumer_uuid': uuid, 'project_id': project_id,
            'user_id': user_id, 'allocations': []})
    for uuid, generation in (consumer_generations or {}).items():
        if uuid in requests:
            requests[uuid]['generation'] = generation
    return list(requests.values())


@base.ResobjObjectRegistry.register
class AllocationList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Allocation 1.0
    # Version 1.1: Allocation 1.1
    # Version 1.2: Allocation 1.2
    # Version 1.3: adds reshape()
    VERSION = '1.3'

    fields = {
        'objects': fields.ListOfObjectsField('Allocation'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1'), ('1.2', '1.2'),
                    ('1.3', '1.2')],
    }

    @base.remotable
    def replace_all(self, consumer_generations=None, emptied=None):
        """Make this list the whole allocation of the consumers it names.

        One transaction for every consumer in the list: each consumer's
        previous allocations are replaced, capacity is checked, provider
        and consumer generations are bumped. ``consumer_generations`` maps
        a consumer uuid to the generation the caller saw (None: a new
        consumer); a mismatch raises ConcurrentUpdateDetected. ``emptied``
        maps consumer uuids to (project_id, user_id) for consumers whose
        allocations are to be removed in the same transaction. Returns
        {consumer uuid: new generation, None if removed}.
        """
        generations, _ = alloc_db.replace_all(
            self.obj_context,
            _requests(self.objects, consumer_generations, emptied or {}),
            max_retries=_conflict_retries)
        return generations

    @base.remotable
    def reshape(self, inventories, consumer_generations=None, emptied=None):
        """Make ``inventories`` and this list true at once.

        ``inventories``: [[ResourceProvider, InventoryList], ...], each
        provider holding the generation the caller saw (pairs, not a dict:
        they cross RPC to the conductor of a service without database
        access). ``consumer_generations`` and ``emptied`` are as for
        replace_all. The providers are not refreshed: re-read them for
        their new generations.
        """
        inventory_values = {
            rp.uuid: (rp.generation, [rp._own(inv) for inv in inventory])
            for rp, inventory in inventories}
        reshaper_db.reshape(
            self.obj_context, inventory_values,
            _requests(self.objects, consumer_generations, emptied or {}))

    @classmethod
    @base.remotable
    def get_all_by_consumer_id(cls, context, consumer_uuid):
        return cls._from_rows(context,
                              alloc_db.get_all_by_consumer(context,
                                                           consumer_uuid))

    @classmethod
    @base.remotable
    def get_all_by_resource_provider_uuid(cls, context, provider_uuid):
        return cls._from_rows(context,
                              alloc_db.get_all_by_provider(context,
                                                           provider_uuid))

    @classmethod
    @base.remotable
    def delete_all(cls, context, consumer_uuid):
        """Remove a consumer's allocations and the consumer."""
        alloc_db.delete_all(context, consumer_uuid)

    @classmethod
    def _from_rows(cls, context, rows):
        allocations = cls(context, objects=[
            Allocation(context, resource_provider_uuid=row[
                'resource_provider_uuid'],
                resource_class=row['resource_class'],
                consumer_uuid=row['consumer_uuid'], used=row['used'],
                project_id=row['project_id'], user_id=row['user_id'],
                consumer_type=row['consumer_type'],
                consumer_generation=row.get('consumer_generation'))
            for row in rows])
        allocations.obj_reset_changes(recursive=True)
        return allocations


# Read views for the HTTP API. They return plain dicts, not objects: the
# API formats them directly and nothing here crosses a process boundary.

def get_consumer_view(context, consumer_uuid):
    """A consumer's allocations grouped by provider, with generations.

    Returns {'allocations': {rp uuid: {'generation': provider generation,
    'resources': {class: used}}}, 'project_id', 'user_id',
    'consumer_generation', 'consumer_type'}; only 'allocations' (empty)
    when the consumer holds nothing.
    """
    rows = alloc_db.get_all_by_consumer(context, consumer_uuid)
    view = {'allocations': {}}
    for row in rows:
        entry = view['allocations'].setdefault(
            row['resource_provider_uuid'],
            {'generation': row['resource_provider_generation'],
             'resources': {}})
        entry['resources'][row['resource_class']] = row['used']
        view.update(project_id=row['project_id'], user_id=row['user_id'],
                    consumer_generation=row['consumer_generation'],
                    consumer_type=row['consumer_type'])
    return view


def get_provider_view(context, provider_uuid):
    """Everything allocated on one provider, per consumer.

    Returns {consumer uuid: {'resources': {class: used},
    'consumer_generation'}}.
    """
    view = {}
    for row in alloc_db.get_all_by_provider(context, provider_uuid):
        entry = view.setdefault(row['consumer_uuid'], {
            'resources': {},
            'consumer_generation': row['consumer_generation']})
        entry['resources'][row['resource_class']] = row['used']
    return view
