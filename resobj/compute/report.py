"""The reporting interface the tracker writes placement data through.

Two implementations pass one test suite
(resobj/tests/functional/compute/test_report_clients.py):
``report_local.LocalReportClient`` calls the objects in process and
``report_http.HTTPReportClient`` talks to any placement-compatible
service. Shapes are plain dicts, as on the wire:

* inventories: ``{class: {total, reserved, min_unit, max_unit,
  step_size, allocation_ratio}}``;
* a consumer's allocations: ``{provider uuid: {class: amount}}``.

Consumer generations make the tracker's writes compare-and-swap: a
write states the generation it read (None: "the consumer must not
exist"), or ``ANY`` to let the client read the current one first.
"""

import abc
import operator

from resobj.compute import exception

# Not a generation: "whatever it is now" (the client reads it first).
ANY = object()

INVENTORY_KEYS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
                  'allocation_ratio')

SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'

# How often a write whose provider generation moved is re-read and
# tried again before giving up.
GENERATION_RETRIES = 4


def same_inventory(a, b):
    """Whether two inventory dicts describe the same inventory."""
    if set(a) != set(b):
        return False
    for rc in a:
        for key in INVENTORY_KEYS:
            x, y = a[rc].get(key), b[rc].get(key)
            if key == 'allocation_ratio':
                if abs(float(x) - float(y)) > 1e-6:
                    return False
            elif int(x) != int(y):
                return False
    return True


class ConsumerAllocations:
    """A consumer's allocations as read: amounts, generation and owner."""

    __slots__ = ('allocations', 'generation', 'project_id', 'user_id')

    def __init__(self, allocations=None, generation=None, project_id=None,
                 user_id=None):
        self.allocations = allocations or {}
        self.generation = generation
        self.project_id = project_id
        self.user_id = user_id

    def __repr__(self):
        return 'ConsumerAllocations(%r, generation=%r)' % (
            self.allocations, self.generation)


class ReportClient(metaclass=abc.ABCMeta):

    @abc.abstractmethod
    def ensure_provider(self, uuid, name, parent=None):
        """Create provider ``uuid`` named ``name`` unless it exists.

        ``parent``: the uuid of the provider it is a child of (a NUMA
        cell's provider under its compute node's).
        """

    @abc.abstractmethod
    def get_inventory(self, provider):
        """(generation, inventories) of ``provider``."""

    @abc.abstractmethod
    def _put_inventory(self, provider, generation, inventories):
        """Replace all inventory; GenerationMoved if generation is stale."""

    def set_inventory(self, provider, inventories):
        """Make ``inventories`` all of ``provider``'s inventory.

        Reads first and writes nothing when it is already so (no
        generation bump, nothing to conflict on); a write that loses a
        race on the provider generation is re-read and retried. Returns
        whether anything was written.
        """
        return self._set_with_generation(
            provider, self.get_inventory, self._put_inventory, inventories,
            same_inventory, exception.InventoryConflict)

    @abc.abstractmethod
    def get_aggregates(self, provider):
        """(generation, set of aggregate uuids) of ``provider``."""

    @abc.abstractmethod
    def _put_aggregates(self, provider, generation, aggregates):
        """Replace the aggregates; GenerationMoved if generation is stale."""

    def set_aggregates(self, provider, aggregates):
        """Make ``aggregates`` (uuids) all of ``provider``'s aggregates.

        As set_inventory: read first, write only a change, retry a lost
        generation race. Returns whether anything was written.
        """
        return self._set_with_generation(
            provider, self.get_aggregates, self._put_aggregates,
            set(aggregates), operator.eq, exception.ProviderConflict,
            what='Aggregates')

    @abc.abstractmethod
    def get_traits(self, provider):
        """(generation, set of trait names) of ``provider``."""

    @abc.abstractmethod
    def _put_traits(self, provider, generation, traits):
        """Replace the traits; GenerationMoved if generation is stale."""

    def set_traits(self, provider, traits):
        """Make ``traits`` (names) all of ``provider``'s traits.

        As set_inventory. Returns whether anything was written.
        """
        return self._set_with_generation(
            provider, self.get_traits, self._put_traits, set(traits),
            operator.eq, exception.ProviderConflict, what='Traits')

    @staticmethod
    def _set_with_generation(provider, read, write, wanted, same, error,
                             **error_kw):
        """Read, compare, write with the generation read; retry a race."""
        for _attempt in range(GENERATION_RETRIES):
            generation, current = read(provider)
            if same(current, wanted):
                return False
            try:
                write(provider, generation, wanted)
                return True
            except GenerationMoved:
                continue
        raise error(provider=provider, attempts=GENERATION_RETRIES,
                    **error_kw)

    @abc.abstractmethod
    def get_sharing_providers(self, provider, resource_class):
        """Uuids of providers sharing ``resource_class`` with ``provider``.

        In one of its aggregates, with MISC_SHARES_VIA_AGGREGATE and
        inventory of the class.
        """

    @abc.abstractmethod
    def get_provider_allocations(self, provider):
        """{consumer uuid: ConsumerAllocations} on ``provider``.

        Each lists that provider's amounts only.
        """

    @abc.abstractmethod
    def get_allocations(self, consumer):
        """The consumer's ConsumerAllocations.

        Empty, with generation None, when it holds nothing.
        """

    @abc.abstractmethod
    def replace_allocations(self, consumers):
        """Write several consumers' allocations atomically.

        ``consumers`` maps a consumer uuid to ``{'allocations': {rp:
        {rc: n}} ({} removes them), 'project_id', 'user_id',
        'generation'}`` with generation as read, None for a new
        consumer, or ANY. AllocationConflict when refused
        (``generation=True`` when a consumer generation moved).
        """

    def put_allocations(self, consumer, allocations, project_id, user_id,
                        generation=ANY):
        """Replace one consumer's allocations (see replace_allocations)."""
        self.replace_allocations({consumer: {
            'allocations': allocations, 'project_id': project_id,
            'user_id': user_id, 'generation': generation}})

    @abc.abstractmethod
    def reshape(self, inventories, consumers):
        """Move inventory and allocations between providers atomically.

        ``inventories``: {provider uuid: (generation as read, {class:
        inventory dict})}, each the provider's whole new inventory;
        ``consumers``: as for replace_allocations, each consumer's whole
        new allocations (generations as read). Nothing changes unless
        everything does: ReshapeConflict when a provider or consumer
        generation moved or the result does not fit.
        """

    @abc.abstractmethod
    def delete_allocations(self, consumer):
        """Remove the consumer's allocations; False if it had none."""

    @abc.abstractmethod
    def get_usages(self, provider):
        """{class: used} of ``provider``."""


class GenerationMoved(Exception):
    """A provider generation changed under a write (internal)."""
