"""What a request's headers say about its body and its answer.

Checked as placement checks them, in its order (the application calls
these; see :mod:`resobj.api.app`):

1. before routing, a body without a ``Content-Type`` is a 400
   (:func:`check_body_has_type`), on any route, known or not;
2. after routing, a ``GET`` whose answer is a JSON document is a 406
   when ``Accept`` rules JSON out (:func:`check_accept`); other
   requests are served whatever their ``Accept`` says, as in
   placement: their answer, or their error, is JSON;
3. then (after resobj's own checks of the URL's and the query's text,
   :mod:`resobj.api.wellformed`), before the handler looks anything up
   or checks the policy, a handler that reads a JSON body (marked
   :func:`reads_json`) refuses any other media type with a 415
   (:func:`check_media_type`).
"""

from resobj.api import errors
from resobj.api import microversion

# Accept values that take JSON, as every client of the API sends them:
# answered without webob's parse of the header, which costs about as
# much as the rest of the request's checks together. An empty one
# takes anything, as in placement.
_ACCEPTS_JSON = frozenset(['application/json', '*/*', ''])


def reads_json(max_version=None):
    """Mark a handler that reads a JSON body (up to ``max_version``).

    ``max_version``: the last microversion at which it does (a ``PUT
    /resource_classes/{name}`` has a body before 1.7 only).
    """
    def mark(handler):
        handler.reads_json_until = (
            microversion.Version(*max_version) if max_version
            else microversion.MAX)
        return handler
    return mark


def any_accept(handler):
    """Mark a ``GET`` handler that answers whatever ``Accept`` says.

    As placement answers ``GET /`` (the versions document, which a load
    balancer's health check asks for with any ``Accept``) and ``GET
    /traits/{name}`` (a 204 without a body).
    """
    handler.any_accept = True
    return handler


def check_body_has_type(req):
    """400 for a request with a body but no ``Content-Type``."""
    if req.content_length and not req.content_type:
        # Placement's words.
        raise errors.bad_request(
            'content-type header required when content-length > 0')


def check_accept(req, handler):
    """406 for a ``GET`` of a JSON document that ``Accept`` rules out."""
    if req.method != 'GET' or getattr(handler, 'any_accept', False):
        return
    accept = req.environ.get('HTTP_ACCEPT')
    if accept is None or accept.strip().lower() in _ACCEPTS_JSON:
        return
    if req.accept and not req.accept.acceptable_offers(['application/json']):
        raise errors.HTTPError(406, 'Only application/json is provided')


def check_media_type(req, handler, version):
    """415 for a body ``handler`` reads that is not JSON."""
    until = getattr(handler, 'reads_json_until', None)
    if until is not None and version <= until:
        require_json(req)


def require_json(req):
    """415 unless the request's media type is ``application/json``."""
    if (req.content_type or '').lower() != 'application/json':
        # Placement's words, the media type named in both sentences.
        raise errors.HTTPError(
            415, 'The request media type %(type)s is not supported by this '
            'server. \n\n The media type %(type)s is not supported, use '
            'application/json' % {'type': req.content_type or 'None'},
            explained=True)
