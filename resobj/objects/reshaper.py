"""Reshaping: new inventories and allocations for several providers in
one transaction (see resobj.db.api.reshaper for why).

The work is AllocationList.reshape, a remotable method, so that a compute
service without database access reshapes through its conductor.
"""


def reshape(context, inventories, allocations, consumer_generations=None,
            emptied=None):
    """Make ``inventories`` and ``allocations`` true at once.

    ``inventories``: {ResourceProvider: InventoryList}, each provider
    holding the generation the caller saw. ``allocations`` is an
    AllocationList; ``consumer_generations`` and ``emptied`` are as for
    ``AllocationList.replace_all``. On success the providers are not
    refreshed: re-read them for their new generations.
    """
    allocations.reshape([[rp, inventory_list]
                         for rp, inventory_list in inventories.items()],
                        consumer_generations=consumer_generations,
                        emptied=emptied)
