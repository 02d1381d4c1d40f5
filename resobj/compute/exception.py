"""Errors of the compute layer.

They derive from resobj's hierarchy (``resobj.exception``) so callers
can catch a Conflict or a NotFound whichever layer raised it.
"""

from resobj import exception


class ComputeResourcesUnavailable(exception.Conflict):
    """A claim does not fit; ``shortages`` says what is short and by how much.

    ``shortages`` is a list of dicts ``{'resource_class', 'provider',
    'requested', 'free', 'short'}``.
    """

    msg_fmt = ('Insufficient resources on %(node)s for %(consumer)s: '
               '%(reasons)s')

    def __init__(self, message=None, shortages=(), **kwargs):
        self.shortages = list(shortages)
        if 'reasons' not in kwargs:
            kwargs['reasons'] = '; '.join(
                '%(resource_class)s on %(provider)s: requested '
                '%(requested)d, free %(free)d, short by %(short)d' % s
                for s in self.shortages)
        # Among the kwargs, which oslo.messaging sends with the error:
        # the caller across RPC gets the shortages too.
        super().__init__(message, shortages=self.shortages, **kwargs)


class PciDeviceRequestFailed(ComputeResourcesUnavailable):
    msg_fmt = ('PCI devices unavailable on %(node)s for %(consumer)s: '
               '%(reasons)s')

    def __init__(self, message=None, shortages=(), **kwargs):
        if 'reasons' not in kwargs:
            kwargs['reasons'] = '; '.join(
                '%(spec)s: requested %(requested)d, available %(free)d, '
                'short by %(short)d' % s for s in shortages)
        super().__init__(message, shortages=shortages, **kwargs)


class SharingProviderNotFound(exception.NotFound):
    msg_fmt = ('Compute node %(node)s uses shared storage but no provider '
               'with MISC_SHARES_VIA_AGGREGATE and DISK_GB shares an '
               'aggregate with its provider %(provider)s.')


class PlacementError(exception.ResobjException):
    msg_fmt = ('Placement request %(method)s %(url)s failed: %(status)s '
               '%(detail)s')


class PlacementUnavailable(PlacementError):
    msg_fmt = ('Placement service at %(url)s unreachable after %(attempts)d '
               'attempts: %(reason)s')


@exception.new_since_n_minus_1
class ReshapeConflict(exception.Conflict):
    """Placement refused a reshape; nothing of it was written."""

    msg_fmt = 'Reshape of %(providers)s refused: %(detail)s'


class AllocationConflict(exception.Conflict):
    """Placement refused an allocation write (capacity, or a generation)."""

    msg_fmt = 'Allocations of %(consumers)s refused: %(detail)s'

    def __init__(self, message=None, generation=False, **kwargs):
        # True when a generation moved under the writer (retry after a
        # re-read); False for capacity and inventory constraints.
        self.generation = generation
        # Among the kwargs, to cross RPC (see ComputeResourcesUnavailable).
        super().__init__(message, generation=generation, **kwargs)


class ProviderConflict(exception.Conflict):
    msg_fmt = ('%(what)s of provider %(provider)s not written after '
               '%(attempts)d generation conflicts')


class InventoryConflict(ProviderConflict):
    msg_fmt = ('Inventory of provider %(provider)s not written after '
               '%(attempts)d generation conflicts')


class MigrationPreCheckError(exception.Invalid):
    msg_fmt = 'Migration pre-check failed for %(instance)s: %(reason)s'
