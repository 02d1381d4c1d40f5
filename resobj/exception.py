"""The resobj exception hierarchy.

Errors are translated exactly once per layer: the DB API turns oslo.db
errors into these, objects raise these, and (later) the HTTP layer turns
these into HTTP errors with a stable code. Each class formats ``msg_fmt``
with the keyword arguments it was raised with, so callers can also read
those arguments back (``exc.kwargs``).
"""


class ResobjException(Exception):
    """Base of every resobj error.

    Subclasses set ``msg_fmt``; raising with missing keyword arguments is a
    programming error and raises ``KeyError`` rather than hiding the
    message, so tests catch it.
    """

    msg_fmt = 'An unknown resobj error occurred.'
    # False for a class the oldest release a cloud may still run beside
    # this one lacks (see new_since_n_minus_1).
    known_to_n_minus_1 = True

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            message = self.msg_fmt % kwargs
        self.message = message
        super().__init__(message)

    def __str__(self):
        return self.message


def new_since_n_minus_1(cls):
    """Mark ``cls`` as an error the previous release (N-1) does not have.

    A peer running N-1 code rebuilds an error it receives over RPC by its
    class name; a class it lacks would reach it as a bare RemoteError
    that none of its handlers catch. resobj.rpc therefore sends a marked
    class as its nearest unmarked base, with its own name attached for
    peers that know it. Subclasses of a marked class inherit the mark.
    The upgrade tests check the marks against the N-1 tree.
    """
    cls.known_to_n_minus_1 = False
    return cls


class NotFound(ResobjException, LookupError):
    msg_fmt = 'Resource could not be found.'


class Conflict(ResobjException):
    msg_fmt = 'Conflict with the current state of the resource.'


class Invalid(ResobjException, ValueError):
    msg_fmt = 'Invalid input.'


class ConfigurationError(ResobjException):
    msg_fmt = 'Invalid configuration: %(reason)s'


class StateDirectoryNotWritable(ConfigurationError):
    msg_fmt = ('State directory %(path)s is not writable: %(reason)s '
               '(set [DEFAULT] state_dir or [database] connection)')


class UnknownConfigOption(ConfigurationError):
    msg_fmt = 'Unknown option %(option)s in %(path)s'


class DatabaseUnavailable(ResobjException):
    """The database server cannot be reached, or stopped answering.

    The message says what failed without naming the server; ``cause``
    (``exc.kwargs['cause']``), when given, is the driver's own words,
    host and port included, for logs and the command line.
    """

    msg_fmt = 'The database is unavailable: %(reason)s'


@new_since_n_minus_1
class DatabaseDeadlock(ResobjException):
    """A deadlock or serialization failure that retries did not resolve.

    Not a Conflict with the resource: the same request may succeed when
    sent again.
    """

    msg_fmt = ('The database aborted the transaction to resolve a conflict '
               'with concurrent ones (%(reason)s); try again')


class DatabaseAccessForbidden(ResobjException):
    msg_fmt = 'This process may not use the database: %(reason)s'


class ConductorTimeout(ResobjException):
    msg_fmt = ('No conductor on topic %(topic)s answered %(method)s within '
               '%(timeout)s s, %(attempts)d time(s) sent; the call may or '
               'may not have been carried out ([conductor] call_timeout '
               'and call_retries say how often it is sent again)')


@new_since_n_minus_1
class CallOutcomeExists(Conflict):
    """A keyed call's outcome is recorded already: it ran before.

    Raised inside the repeat's transaction, which then rolls back; the
    conductor answers the repeat with the recorded answer. Never sent to
    a caller.
    """

    msg_fmt = 'The call with idempotency key %(key)s was carried out already'


class ConductorUnavailable(ResobjException):
    msg_fmt = 'Cannot reach a conductor on topic %(topic)s: %(reason)s'


class ComputeTimeout(ResobjException):
    msg_fmt = ('The compute service of %(host)s did not answer %(method)s '
               'within %(timeout)s s')


@new_since_n_minus_1
class ComputeUnavailable(ResobjException):
    msg_fmt = ('Cannot reach the compute service of %(host)s for '
               '%(method)s: %(reason)s; it was not carried out')


class RPCVersionCapped(ResobjException):
    msg_fmt = ('%(method)s needs %(api)s RPC API version %(version)s, but '
               '[upgrade_levels] %(api)s caps it at %(cap)s')


class DatabaseSchemaError(ResobjException):
    msg_fmt = 'Database schema error: %(reason)s'


class ObjectActionError(ResobjException):
    msg_fmt = 'Object action %(action)s failed because: %(reason)s'


class ReservedNeedsInventory(ObjectActionError):
    """A reserved amount changed while the inventory gate is closed.

    A subclass so that a caller that can keep the amount elsewhere (the
    resource tracker) tells this refusal from any other.
    """


class ObjectBackportError(ResobjException):
    msg_fmt = ('Cannot backport %(objname)s to version %(target)s: '
               '%(reason)s')


class UnsupportedObject(ResobjException):
    msg_fmt = ('Cannot load object %(objname)s version %(objver)s: '
               'this resobj does not know that object')


class IncompatibleObjectVersion(ResobjException):
    msg_fmt = ('Cannot load object %(objname)s version %(objver)s: this '
               'resobj supports up to %(supported)s and no backport was '
               'available')


class MalformedPrimitive(Invalid):
    """A primitive that no resobj could have sent: it cannot be loaded.

    ``objname`` is the object whose primitive is wrong (as far as it can
    be told), ``field`` the field or envelope key (``resobj_object.name``,
    ``resobj_object.version``...) that is.
    """

    msg_fmt = ('Malformed primitive of %(objname)s, field %(field)s: '
               '%(reason)s')


class WrongObjectPrimitive(MalformedPrimitive):
    """A primitive of another object than the one asked for.

    For example ``Allocation.obj_from_primitive()`` given a Service's, or
    an ``Instance`` whose ``flavor`` holds a Service.
    """

    msg_fmt = ('Malformed primitive of %(objname)s, field %(field)s: a '
               '%(actual)s primitive where a %(expected)s is required')


class ServiceNotFound(NotFound):
    msg_fmt = 'Service %(key)s could not be found.'


class ServiceExists(Conflict):
    msg_fmt = 'Service %(host)s/%(binary)s already exists.'


# Compute nodes
class ComputeNodeNotFound(NotFound):
    msg_fmt = 'Compute node %(key)s could not be found.'


class ComputeNodeExists(Conflict):
    msg_fmt = 'Compute node %(host)s/%(nodename)s already exists.'


class ComputeNodeInUse(Conflict):
    msg_fmt = ('Compute node %(node)s cannot be deleted: its resource '
               'provider %(provider)s still has allocations of '
               '%(consumers)d consumer(s) (e.g. %(example)s). Delete or '
               'move those instances first.')


class ComputeNodeUUIDMismatch(Invalid):
    msg_fmt = ('Compute node %(node)s has uuid %(current)s; its virt '
               'driver reports %(new)s. Refusing to change it.')


# PCI devices

class PciDeviceNotFound(NotFound):
    msg_fmt = 'PCI device %(key)s could not be found.'


class PciDeviceExists(Conflict):
    msg_fmt = ('PCI device %(address)s already exists on compute node '
               '%(compute_node_id)s.')


class PciDeviceComputeNodeNotFound(NotFound):
    msg_fmt = ('Compute node %(compute_node_id)s of PCI device %(address)s '
               'does not exist.')


class PciDeviceInvalidStatus(Conflict):
    msg_fmt = ('Cannot %(transition)s PCI device %(address)s: it is '
               '%(status)s, and %(transition)s is allowed only from '
               '%(allowed)s.')


class PciDeviceInvalidOwner(Conflict):
    msg_fmt = ('Cannot %(transition)s PCI device %(address)s for instance '
               '%(instance_uuid)s: it belongs to instance %(owner)s.')


class PciDeviceStatusChanged(Conflict):
    msg_fmt = ('PCI device %(address)s was expected to be %(expected)s '
               'but another writer changed it first (now %(actual)s); '
               'nothing was saved.')


class InvalidPciStats(Invalid):
    msg_fmt = 'Invalid pci_stats: %(reason)s'


@new_since_n_minus_1
class InvalidFlavorExtraSpec(Invalid):
    msg_fmt = ('Flavor %(flavor)s: extra spec %(key)s=%(value)r is '
               'invalid: %(reason)s')


@new_since_n_minus_1
class NUMAReshapeFailed(ResobjException):
    msg_fmt = ('Reshape of compute node %(node)s to NUMA cell providers '
               'failed: %(reason)s')


# Flavors and migrations


class FlavorNotFound(NotFound):
    msg_fmt = 'Flavor %(key)s could not be found.'


class FlavorExists(Conflict):
    msg_fmt = ('A live flavor already has flavorid %(flavorid)s or name '
               '%(name)s.')


class MigrationNotFound(NotFound):
    msg_fmt = 'Migration %(key)s could not be found.'


class MigrationExists(Conflict):
    msg_fmt = 'A migration with uuid %(uuid)s already exists.'


class OnlineMigrationError(ResobjException):
    msg_fmt = 'Online data migration %(name)s failed: %(reason)s'


# Instances
class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(key)s could not be found.'


class InstanceExists(Conflict):
    msg_fmt = 'Instance %(uuid)s already exists.'


class UnexpectedTaskState(Conflict):
    msg_fmt = ('Instance %(uuid)s is in task state %(actual)r, not '
               '%(expected)r as the update required; nothing was changed.')


# Resource classes and traits
class ResourceClassNotFound(NotFound):
    msg_fmt = 'No such resource class %(name)s.'


class TraitNotFound(NotFound):
    msg_fmt = 'No such trait %(name)s.'


# Resource classes, traits and consumers (objects)
class InvalidResourceClassName(Invalid):
    msg_fmt = ('Invalid resource class name %(name)r: a custom class is '
               'named CUSTOM_ followed by upper-case letters, digits and '
               'underscores, at most 255 characters in all.')


class ResourceClassExists(Conflict):
    msg_fmt = 'Resource class %(name)s already exists.'


class ResourceClassInUse(Conflict):
    msg_fmt = ('Resource class %(name)s is in use by inventories or '
               'allocations and cannot be deleted.')


class ResourceClassCannotUpdateStandard(Invalid):
    msg_fmt = 'Cannot update standard resource class %(name)s.'


class ResourceClassCannotDeleteStandard(Invalid):
    msg_fmt = 'Cannot delete standard resource class %(name)s.'


class MaxDBRetriesExceeded(ResobjException):
    msg_fmt = ('Gave up after %(attempts)s attempts to %(action)s: every '
               'one collided with a concurrent writer.')


class InvalidTraitName(Invalid):
    msg_fmt = ('Invalid trait name %(name)r: a custom trait is named '
               'CUSTOM_ followed by upper-case letters, digits and '
               'underscores, at most 255 characters in all.')


class TraitExists(Conflict):
    msg_fmt = 'Trait %(name)s already exists.'


class TraitInUse(Conflict):
    msg_fmt = ('Trait %(name)s is associated with a resource provider and '
               'cannot be deleted.')


class TraitCannotDeleteStandard(Invalid):
    msg_fmt = 'Cannot delete standard trait %(name)s.'


class InvalidExternalId(Invalid):
    msg_fmt = ('Invalid %(kind)s id %(external_id)r: it must be a '
               'non-empty string of at most 255 characters.')


class ProjectNotFound(NotFound):
    msg_fmt = 'Project %(external_id)s could not be found.'


class UserNotFound(NotFound):
    msg_fmt = 'User %(external_id)s could not be found.'


class InvalidConsumerType(Invalid):
    msg_fmt = ('Invalid consumer type %(name)r: it must be upper-case '
               'letters, digits and underscores, at most 255 characters.')


class ConsumerNotFound(NotFound):
    msg_fmt = 'Consumer %(key)s could not be found.'


class ConsumerExists(Conflict):
    msg_fmt = 'Consumer %(uuid)s already exists.'


class ConsumerInUse(Conflict):
    msg_fmt = 'Consumer %(uuid)s still has allocations and cannot be deleted.'


class ConcurrentUpdateDetected(Conflict):
    """A compare-and-swap on a generation matched no row.

    Subclass it (with its own ``msg_fmt``) for other generations, e.g. a
    resource provider's; callers that retry catch this base.
    """

    msg_fmt = ('%(what)s was changed by another writer since it was read '
               '(expected generation %(generation)s); re-read it and '
               'retry.')


# Allocations
@new_since_n_minus_1
class ConsumerGenerationConflict(ConcurrentUpdateDetected):
    """A write named a consumer generation the consumer no longer has.

    ``actual`` is None when the consumer does not exist (any more, or
    yet); ``given`` is what the request said (None for "new").
    """
    msg_fmt = ('consumer generation conflict - consumer %(consumer)s is at '
               'generation %(actual)s, the request was made at %(given)s; '
               're-read it and retry.')


class InvalidInventory(Conflict):
    msg_fmt = ('Resource provider %(resource_provider)s has no inventory '
               'of %(resource_class)s.')


class InvalidAllocationConstraintsViolated(Conflict):
    msg_fmt = ('Unable to allocate %(amount)s of %(resource_class)s on '
               'resource provider %(resource_provider)s: the amount must be '
               'between %(min_unit)s and %(max_unit)s and a multiple of '
               '%(step_size)s.')


class InvalidAllocationCapacityExceeded(Conflict):
    msg_fmt = ('Unable to allocate %(requested)s of %(resource_class)s on '
               'resource provider %(resource_provider)s: %(used)s of its '
               'capacity %(capacity)s are used.')


# Resource providers and inventories
class ResourceProviderNotFound(NotFound):
    msg_fmt = 'Resource provider %(key)s could not be found.'


class ResourceProviderConcurrentUpdateDetected(ConcurrentUpdateDetected):
    msg_fmt = ('Resource provider %(provider)s changed concurrently: '
               'generation %(generation)s is no longer current; re-read it '
               'and retry.')


class ResourceProviderExists(Conflict):
    msg_fmt = ('A resource provider with name %(name)s or uuid %(uuid)s '
               'already exists.')


class InvalidResourceProviderParent(Invalid):
    msg_fmt = ('Resource provider %(uuid)s cannot have parent %(parent)s: '
               '%(reason)s')


class CannotDeleteParentResourceProvider(Conflict):
    msg_fmt = ('Cannot delete resource provider %(uuid)s: it has child '
               'providers.')


class ResourceProviderInUse(Conflict):
    msg_fmt = ('Cannot delete resource provider %(uuid)s: it has '
               'allocations.')


class InvalidInventoryValue(Invalid):
    msg_fmt = ('Invalid inventory of %(resource_class)s for resource '
               'provider %(provider)s: %(reason)s')


class InventoryNotFound(NotFound):
    msg_fmt = ('Resource provider %(provider)s has no inventory of '
               '%(resource_class)s.')


class InventoryExists(Conflict):
    msg_fmt = ('Resource provider %(provider)s already has inventory of '
               '%(resource_class)s.')


class InventoryInUse(Conflict):
    msg_fmt = ('Inventory of %(resource_classes)s on resource provider '
               '%(provider)s is in use by allocations.')


class UnsupportedCandidateRequest(Invalid):
    """An allocation candidate request uses a feature resobj lacks.

    Raised instead of answering with candidates that might be wrong.
    """
    msg_fmt = ('Unsupported allocation candidate request: %(feature)s')
