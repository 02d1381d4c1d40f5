"""In-process reporting: the placement data written through the objects.

For a tracker running beside the database (resobj-sim without a URL,
tests, or a deployment where the compute service owns placement data).
Same contract as the HTTP client (resobj.compute.report).
"""

import contextlib

from resobj.compute import exception
from resobj.compute import report
from resobj import exception as resobj_exc
from resobj import objects
from resobj.objects import reshaper

_CAPACITY_ERRORS = (resobj_exc.InvalidAllocationCapacityExceeded,
                    resobj_exc.InvalidAllocationConstraintsViolated,
                    resobj_exc.InvalidInventory,
                    resobj_exc.ResourceProviderNotFound,
                    resobj_exc.ResourceClassNotFound)


class LocalReportClient(report.ReportClient):

    def __init__(self, context):
        objects.register_all()
        self.context = context

    def _provider(self, uuid):
        return objects.ResourceProvider.get_by_uuid(self.context, uuid)

    def ensure_provider(self, uuid, name, parent=None):
        try:
            self._provider(uuid)
            return
        except resobj_exc.ResourceProviderNotFound:
            pass
        for candidate in (name, '%s-%s' % (name, uuid)):
            try:
                objects.ResourceProvider(
                    self.context, uuid=uuid, name=candidate[:200],
                    parent_provider_uuid=parent).create()
                return
            except resobj_exc.ResourceProviderExists:
                try:
                    self._provider(uuid)
                    return  # created concurrently with our uuid
                except resobj_exc.ResourceProviderNotFound:
                    continue  # the name was taken: try the unique one

    def get_inventory(self, provider):
        rp = self._provider(provider)
        inventories = objects.InventoryList.get_all_by_resource_provider(
            self.context, rp)
        return rp.generation, {
            inv.resource_class: {key: getattr(inv, key)
                                 for key in report.INVENTORY_KEYS}
            for inv in inventories}

    def _put_inventory(self, provider, generation, inventories):
        with self._fresh(provider, generation) as rp:
            rp.set_inventory(objects.InventoryList(self.context, objects=[
                objects.Inventory(self.context,
                                  resource_provider_uuid=provider,
                                  resource_class=rc, **values)
                for rc, values in sorted(inventories.items())]))

    def get_aggregates(self, provider):
        rp = self._provider(provider)
        return rp.generation, set(rp.get_aggregates())

    def _put_aggregates(self, provider, generation, aggregates):
        with self._fresh(provider, generation) as rp:
            rp.set_aggregates(sorted(aggregates), increment_generation=True)

    def get_traits(self, provider):
        rp = self._provider(provider)
        return rp.generation, set(rp.get_traits())

    def _put_traits(self, provider, generation, traits):
        with self._fresh(provider, generation) as rp:
            rp.set_traits(sorted(traits))

    @contextlib.contextmanager
    def _fresh(self, provider, generation):
        """The provider to write, if its generation is still ``generation``.

        The write in the block compares against the same generation in
        the database, so a change after this read is caught there; either
        way the caller sees GenerationMoved.
        """
        rp = self._provider(provider)
        if rp.generation != generation:
            raise report.GenerationMoved()
        try:
            yield rp
        except resobj_exc.ResourceProviderConcurrentUpdateDetected:
            raise report.GenerationMoved()

    def get_sharing_providers(self, provider, resource_class):
        aggregates = self._provider(provider).get_aggregates()
        if not aggregates:
            return []
        found = objects.ResourceProviderList.get_all_by_filters(
            self.context, {'member_of': [aggregates],
                           'required_traits': [{report.SHARING_TRAIT}]})
        out = []
        for rp in found:
            if rp.uuid == provider:
                continue
            inventories = objects.InventoryList.get_all_by_resource_provider(
                self.context, rp)
            if inventories.find(resource_class) is not None:
                out.append(rp.uuid)
        return out

    @staticmethod
    def _group(allocations):
        out = {}
        for alloc in allocations:
            entry = out.get(alloc.consumer_uuid)
            if entry is None:
                entry = out[alloc.consumer_uuid] = report.ConsumerAllocations(
                    {}, alloc.consumer_generation, alloc.project_id,
                    alloc.user_id)
            entry.allocations.setdefault(
                alloc.resource_provider_uuid, {})[alloc.resource_class] = \
                alloc.used
        return out

    def get_provider_allocations(self, provider):
        try:
            allocations = \
                objects.AllocationList.get_all_by_resource_provider_uuid(
                    self.context, provider)
        except resobj_exc.ResourceProviderNotFound:
            return {}
        return self._group(allocations)

    def get_allocations(self, consumer):
        found = self._group(objects.AllocationList.get_all_by_consumer_id(
            self.context, consumer))
        return found.get(consumer, report.ConsumerAllocations())

    def _allocation_request(self, consumers):
        """(AllocationList, consumer generations, emptied) to write.

        ``consumers`` is as replace_allocations takes it.
        """
        items, generations, emptied = [], {}, {}
        for consumer, spec in consumers.items():
            if spec.get('generation', report.ANY) is not report.ANY:
                generations[consumer] = spec['generation']
            if not spec['allocations']:
                emptied[consumer] = (spec['project_id'], spec['user_id'])
            for rp, amounts in spec['allocations'].items():
                for rc, used in amounts.items():
                    items.append(objects.Allocation(
                        self.context, resource_provider_uuid=rp,
                        resource_class=rc, consumer_uuid=consumer,
                        project_id=spec['project_id'],
                        user_id=spec['user_id'], used=used))
        return (objects.AllocationList(self.context, objects=items),
                generations, emptied)

    def replace_allocations(self, consumers):
        allocations, generations, emptied = self._allocation_request(
            consumers)
        try:
            allocations.replace_all(consumer_generations=generations,
                                    emptied=emptied)
        except resobj_exc.ConcurrentUpdateDetected as exc:
            # A consumer generation moved (provider ones are retried by
            # replace_all itself until they run out).
            raise exception.AllocationConflict(
                consumers=', '.join(sorted(consumers)), detail=str(exc),
                generation=True)
        except _CAPACITY_ERRORS as exc:
            raise exception.AllocationConflict(
                consumers=', '.join(sorted(consumers)), detail=str(exc))

    def reshape(self, inventories, consumers):
        providers = {}
        for uuid, (generation, wanted) in sorted(inventories.items()):
            rp = self._provider(uuid)
            # The generation the caller read, which the reshape checks.
            rp.generation = generation
            providers[rp] = objects.InventoryList(self.context, objects=[
                objects.Inventory(self.context, resource_provider_uuid=uuid,
                                  resource_class=rc, **values)
                for rc, values in sorted(wanted.items())])
        allocations, generations, emptied = self._allocation_request(
            consumers)
        try:
            reshaper.reshape(self.context, providers, allocations,
                             consumer_generations=generations,
                             emptied=emptied)
        except (resobj_exc.ConcurrentUpdateDetected,
                resobj_exc.ResourceProviderConcurrentUpdateDetected,
                resobj_exc.InventoryInUse) + _CAPACITY_ERRORS as exc:
            raise exception.ReshapeConflict(
                providers=', '.join(sorted(inventories)), detail=str(exc))

    def delete_allocations(self, consumer):
        try:
            objects.AllocationList.delete_all(self.context, consumer)
        except resobj_exc.ConsumerNotFound:
            return False
        return True

    def get_usages(self, provider):
        return objects.UsageList.get_all_by_resource_provider_uuid(
            self.context, provider).as_dict()
