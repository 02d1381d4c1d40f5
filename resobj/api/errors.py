"""HTTP errors: stable codes, the exception handlers raise, the body.

Every error response, from a handler or from the framework (404, 405,
406, 415, 400 on a bad header), has the same body::

    {"errors": [{"status": 409, "title": "Conflict", "detail": "...",
                 "code": "placement.concurrent_update",
                 "request_id": "req-..."}]}

The ``code`` member exists from microversion 1.23, as in placement.
The codes are part of the API: clients branch on them, so a code is never
reused for another meaning. They are placement's, so its clients work
unchanged; the few that placement lacks start with ``resobj.``.
"""

import http.client

from oslo_serialization import jsonutils

UNDEFINED = 'placement.undefined_code'
CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'
INVENTORY_INUSE = 'placement.inventory.inuse'
PROVIDER_INUSE = 'placement.resource_provider.inuse'
PROVIDER_CANNOT_DELETE_PARENT = \
    'placement.resource_provider.cannot_delete_parent'
PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'
QUERY_DUPLICATE_KEY = 'placement.query.duplicate_key'
QUERY_BAD_VALUE = 'placement.query.bad_value'
QUERY_MISSING_VALUE = 'placement.query.missing_value'
# resobj's own: placement has no code for these.
BAD_CHARACTER = 'resobj.input.bad_character'
# What the HTTP server answers before the application runs (see
# resobj/api/httpserver.py), and the application's own body-size check.
REQUEST_MALFORMED = 'resobj.request.malformed'
REQUEST_TIMEOUT = 'resobj.request.timeout'
REQUEST_TOO_LARGE = 'resobj.request.too_large'
REQUEST_HEADERS_TOO_LARGE = 'resobj.request.headers_too_large'
REQUEST_UNSUPPORTED_ENCODING = 'resobj.request.unsupported_encoding'
REQUEST_INCOMPLETE = 'resobj.request.incomplete'
SERVER_BUSY = 'resobj.server.busy'
DATABASE_UNAVAILABLE = 'resobj.database.unavailable'
# Keystone could not be asked whether a token is valid.
IDENTITY_UNAVAILABLE = 'resobj.identity.unavailable'

# The sentence webob puts before the detail, which some clients (and the
# reference's error bodies) carry; kept so a detail reads the same.
_EXPLANATION = {
    400: 'The server could not comply with the request since it is either '
         'malformed or otherwise incorrect.',
    401: 'This server could not verify that you are authorized to access '
         'the document you requested.',
    403: 'Access was denied to this resource.',
    404: 'The resource could not be found.',
    405: 'The method specified is not allowed for this resource.',
    406: 'The resource could not be generated that was acceptable to your '
         'browser (content of type %s).',
    409: 'There was a conflict when trying to complete your request.',
    415: 'The request media type %s is not supported by this server.',
    500: 'The server has either erred or is incapable of performing the '
         'requested operation.',
}


class HTTPError(Exception):
    """An error response; handlers raise it, the app formats it."""

    def __init__(self, status, detail, code=UNDEFINED, headers=None,
                 extra=None, explained=False):
        super().__init__(detail)
        # True when ``detail`` is the whole text, without the status's
        # explanation in front (placement's 405 puts it after).
        self.explained = explained
        self.status = status
        self.detail = detail
        self.code = code
        self.headers = dict(headers or {})
        # Extra members of the error object (min_version on a 406).
        self.extra = dict(extra or {})

    @property
    def title(self):
        return http.client.responses.get(self.status, 'Error')

    def body(self, request_id, with_code=True):
        explanation = '' if self.explained else _EXPLANATION.get(
            self.status, '')
        if '%s' in explanation:
            explanation = explanation % 'application/json'
        detail = ('%s\n\n %s' % (explanation, self.detail)
                  if explanation else self.detail)
        error = {'status': self.status, 'title': self.title,
                 'detail': detail, 'request_id': request_id}
        if with_code:
            error['code'] = self.code
        error.update(self.extra)
        return jsonutils.dump_as_bytes({'errors': [error]})


def bad_request(detail, code=UNDEFINED):
    return HTTPError(400, detail, code)


def not_found(detail, code=UNDEFINED):
    return HTTPError(404, detail, code)


def conflict(detail, code=UNDEFINED):
    return HTTPError(409, detail, code)


def _table():
    from resobj import exception as exc
    # Most specific first: the first class an exception is an instance
    # of decides.
    return [
        (exc.ConcurrentUpdateDetected, 409, CONCURRENT_UPDATE),
        (exc.MaxDBRetriesExceeded, 409, CONCURRENT_UPDATE),
        (exc.DatabaseDeadlock, 409, CONCURRENT_UPDATE),
        (exc.ResourceProviderExists, 409, DUPLICATE_NAME),
        # Placement has no code for a duplicate class.
        (exc.ResourceClassExists, 409, UNDEFINED),
        (exc.TraitExists, 409, DUPLICATE_NAME),
        (exc.InventoryInUse, 409, INVENTORY_INUSE),
        # Placement's code for a duplicate inventory (a lost race to it).
        (exc.InventoryExists, 409, CONCURRENT_UPDATE),
        (exc.ResourceProviderInUse, 409, PROVIDER_INUSE),
        (exc.CannotDeleteParentResourceProvider, 409,
         PROVIDER_CANNOT_DELETE_PARENT),
        (exc.Conflict, 409, UNDEFINED),
        (exc.NotFound, 404, UNDEFINED),
        (exc.Invalid, 400, UNDEFINED),
        (exc.DatabaseUnavailable, 503, DATABASE_UNAVAILABLE),
    ]


def _consumer_conflict(kwargs):
    # Placement's words, which clients match: the consumer's generation
    # first ("null" when it has none), then what the request said.
    actual = kwargs['actual']
    return 'consumer generation conflict - expected %s but got %s' % (
        'null' if actual is None else actual, kwargs['given'])


def _wording():
    """{exception class: detail}: placement's words for these errors.

    Clients, log scrapers and runbooks match them; they were observed
    from its answers. A str is formatted with the exception's keyword
    arguments.
    """
    from resobj import exception as exc
    return {
        exc.ConsumerGenerationConflict: _consumer_conflict,
        exc.CannotDeleteParentResourceProvider:
            'Unable to delete parent resource provider %(uuid)s: It has '
            'child resource providers.',
        exc.InventoryInUse:
            "Inventory for '%(resource_classes)s' on resource provider "
            "'%(provider)s' in use.",
        exc.ResourceClassExists:
            'Conflicting resource class already exists: %(name)s',
        exc.TraitNotFound: 'No such trait(s): %(name)s.',
        exc.TraitInUse:
            'The trait %(name)s is in use by a resource provider.',
        exc.InvalidInventory:
            "Unable to allocate inventory: Inventory for "
            "'%(resource_class)s' on resource provider "
            "'%(resource_provider)s' invalid.",
        exc.InvalidAllocationCapacityExceeded:
            "Unable to allocate inventory: Unable to create allocation for "
            "'%(resource_class)s' on resource provider "
            "'%(resource_provider)s'. The requested amount would exceed "
            "the capacity.",
        exc.InvalidAllocationConstraintsViolated:
            "Unable to allocate inventory: Unable to create allocation for "
            "'%(resource_class)s' on resource provider "
            "'%(resource_provider)s'. The requested amount would violate "
            "inventory constraints.",
        exc.ResourceProviderInUse:
            'Unable to delete resource provider %(uuid)s: Resource provider '
            'has allocations.',
        exc.ResourceClassInUse:
            'Error in delete resource class: Cannot delete resource class '
            '%(name)s. Class is in use in inventory.',
        exc.ResourceClassCannotDeleteStandard:
            'Error in delete resource class: Cannot delete standard '
            'resource class %(name)s.',
        # Without a final stop, as placement writes it.
        exc.ResourceClassCannotUpdateStandard:
            'Cannot update standard resource class %(name)s',
    }


_TABLE = None
_WORDING = None


def from_exception(error):
    """The HTTPError for a resobj exception, or None if it has none."""
    global _TABLE, _WORDING
    if _TABLE is None:
        _TABLE = _table()
        _WORDING = _wording()
    for cls, status, code in _TABLE:
        if isinstance(error, cls):
            return HTTPError(status, placement_detail(error), code)
    return None


def placement_detail(error):
    """The detail placement gives for ``error``, else its message."""
    global _WORDING
    if _WORDING is None:
        _WORDING = _wording()
    wording = _WORDING.get(type(error))
    if wording is None:
        return str(error)
    if callable(wording):
        return wording(error.kwargs)
    return wording % error.kwargs
