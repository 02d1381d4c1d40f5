"""Reshaping: new inventories and allocations for several providers in
one transaction (see resobj.db.api.reshaper for why)."""

from resobj.db.api import reshaper as reshaper_db
from resobj.objects import allocation as alloc_obj


def reshape(context, inventories, allocations, consumer_generations=None,
            emptied=None):
    """Make ``inventories`` and ``allocations`` true at once.

    ``inventories``: {ResourceProvider: InventoryList}, each provider
    holding the generation the caller saw. ``allocations`` is an
    AllocationList; ``consumer_generations`` and ``emptied`` are as for
    ``AllocationList.replace_all``. On success the providers are not
    refreshed: re-read them for their new generations.
    """
    inventory_values = {
        rp.uuid: (rp.generation, [rp._own(inv) for inv in inventory_list])
        for rp, inventory_list in inventories.items()}
    reshaper_db.reshape(
        context, inventory_values,
        alloc_obj._requests(allocations.objects, consumer_generations,
                            emptied or {}))
