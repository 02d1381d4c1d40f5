"""Reshaping: move inventory and the allocations on it, atomically.

A virt driver that discovers its resources are better modelled as a
tree (say, VGPU moving from the root provider to a child per physical
GPU) must move inventory and allocations together: done as separate
calls, usage would be over capacity (or nowhere) in between, and a
failure half-way would lose allocations.
"""

from resobj.db.api import allocation as alloc_db
from resobj.db.api import inventory as inventory_db
from resobj.db.api import resource_provider as rp_db
from resobj.db import facade
from resobj import exception


def _interim(current, final):
    """The union of current and final inventory, final values winning.

    Allocations can then move from any old class to any new one without
    a class in use disappearing before its allocations leave it.
    """
    merged = {inv['resource_class']: {
        k: v for k, v in inv.items()
        if k in ('resource_class',) + inventory_db.VALUE_COLUMNS}
        for inv in current}
    for inv in final:
        merged[inv['resource_class']] = dict(inv)
    return [merged[name] for name in sorted(merged)]


@facade.writer
def reshape(context, inventories, allocation_requests):
    """Replace inventories and allocations in ONE transaction.

    ``inventories``: {provider uuid: (the generation the caller saw,
    [inventory dicts])}; ``allocation_requests``: as
    ``allocation.replace_all`` takes them. Every provider's generation
    is checked first (ResourceProviderConcurrentUpdateDetected), then the
    providers get the union of their old and new inventory (those whose
    new inventory is empty keep their old one), the
    allocations are replaced (and checked against that), and finally the
    new inventory alone is set, which fails with InventoryInUse if an
    allocation was left on a class being removed. Any failure leaves
    everything as it was.
    """
    providers = {}
    for uuid, (seen, wanted) in sorted(inventories.items()):
        row = rp_db.get_by_uuid(context, uuid)
        if row['generation'] != seen:
            raise exception.ResourceProviderConcurrentUpdateDetected(
                provider=uuid, generation=seen)
        if wanted:
            current = inventory_db.get_all_by_provider(context, row['id'])
            inventory_db.set_inventories(context, row['id'], seen,
                                         _interim(current, wanted))
        # else the interim inventory would be the current one: placement
        # skips that write, and so the generation moves once, not twice.
        providers[uuid] = row['id']
    alloc_db.replace_all(context, allocation_requests)
    for uuid, (_, wanted) in sorted(inventories.items()):
        provider_id = providers[uuid]
        inventory_db.set_inventories(
            context, provider_id, rp_db.get(context, provider_id)[
                'generation'], [dict(inv) for inv in wanted])
