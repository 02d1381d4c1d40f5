"""The WSGI application: negotiation, authentication, dispatch, errors.

``make_app(conf)`` builds it. One request passes through, in order: the
collector's pause (``collector``: clean-up after the response is sent);
the standard middleware (``middleware``: proxy headers, request id, CORS);
the microversion (400/406 before anything else); the authentication
middleware; the request context; content negotiation; the route table;
the handler. Every exception on the way out becomes an error body in the
API's format, with the request id and version headers.
"""

import time

from oslo_log import log as logging
from oslo_middleware import request_id as request_id_middleware
import webob
import webob.request

from resobj.api import auth
from resobj.api import collector
from resobj.api import errors
from resobj.api import keystone
from resobj.api import microversion
from resobj.api import middleware
from resobj.api import policy
from resobj.api import router
from resobj.api import util
from resobj.api import wellformed
from resobj import context as resobj_context
from resobj import exception

LOG = logging.getLogger(__name__)

_BODY_METHODS = ('POST', 'PUT', 'PATCH')


class Application:
    def __init__(self, conf):
        self._router = router.Router()
        self._max_body = conf.api.max_request_body_size
        self._policy = policy.Policy(conf)
        if conf.api.auth_strategy == 'keystone':
            self._stack = keystone.middleware(self._handle, conf)
        else:
            self._stack = auth.NoAuth(self._handle)
        # Outermost: a request's clean-up waits until its response is
        # sent (see resobj.api.collector).
        self._pipeline = collector.Application(
            middleware.wrap(self._serve, conf))

    def __call__(self, environ, start_response):
        return self._pipeline(environ, start_response)

    def _serve(self, environ, start_response):
        # resobj-api's server says when the request arrived whole; under
        # another server, the request's bounds count from now.
        environ.setdefault(util.ARRIVED, time.monotonic())
        # Set by the request_id middleware, which also returns it.
        request_id = environ[request_id_middleware.ENV_REQUEST_ID]
        # Until the caller is known, the thread's log lines name the
        # request alone; nothing of the request this thread served before.
        resobj_context.RequestContext(request_id=request_id, overwrite=True)
        try:
            return self._respond(environ, start_response, request_id)
        finally:
            resobj_context.clear_current()

    def _respond(self, environ, start_response, request_id):
        version = microversion.MIN

        def start(status, response_headers, exc_info=None):
            response_headers = [
                h for h in response_headers
                if h[0].lower() not in ('openstack-api-version', 'vary')]
            if version is not None:
                response_headers.append(
                    (microversion.HEADER,
                     microversion.header_value(version)))
            response_headers.append(('Vary', microversion.VARY))
            return start_response(status, response_headers, exc_info)

        try:
            # None while unknown: an answer to a bad version header names
            # no version, as placement's does.
            version = None
            version = _negotiate(environ)
            # After the version: the refusal carries a code from 1.23 on,
            # as every other error does.
            _check_length(environ, self._max_body)
            environ[util.MICROVERSION] = version
            environ[util.POLICY] = self._policy
            return self._stack(environ, start)
        except errors.HTTPError as error:
            response = _error_response(error, request_id, version)
            return response(environ, start)
        except Exception:
            # Never the server's HTML page: clients parse every error.
            LOG.exception('Unexpected error on %s %s',
                          environ.get('REQUEST_METHOD'),
                          environ.get('PATH_INFO'))
            return _error_response(errors.HTTPError(
                500, 'An unexpected error occurred; see the server log.'),
                request_id, version)(environ, start)

    def _handle(self, environ, start_response):
        req = webob.Request(environ)
        version = environ[util.MICROVERSION]
        try:
            # Stored for the thread's log lines, in place of the one
            # __call__ stored: they name the caller from here on.
            ctx = resobj_context.RequestContext.from_environ(
                environ, overwrite=True, arrived=environ[util.ARRIVED])
            if not auth.is_root(environ) and not ctx.user_id:
                raise errors.HTTPError(401, 'The request has no user.')
            environ[util.CONTEXT] = ctx
            # Routing first: an unknown URL is a 404 whatever the Accept.
            handler, urlvars = self._router.find(_path(req), req.method,
                                                 version)
            _check_content(req)
            wellformed.check_url(urlvars)
            wellformed.check_query(req)
            req.urlvars = urlvars
            resp = handler(req)
        except errors.HTTPError:
            raise
        except webob.request.DisconnectionError as exc:
            # The client left; nobody reads the answer, nothing failed.
            LOG.info('%s %s: %s', req.method, req.path_qs, exc)
            raise errors.bad_request(str(exc), errors.REQUEST_INCOMPLETE)
        except exception.ResobjException as exc:
            error = errors.from_exception(exc)
            if isinstance(exc, exception.DatabaseUnavailable):
                # The client's detail does not name the server; the log
                # says what the driver said.
                LOG.warning('%s %s: %s (%s)', req.method, req.path_qs, exc,
                            exc.kwargs.get('cause', 'no details'))
            if error is None:
                LOG.exception('Unexpected error on %s %s', req.method,
                              req.path_qs)
                error = errors.HTTPError(500, 'An unexpected error '
                                         'occurred; see the server log.')
            raise error
        except Exception:
            LOG.exception('Unexpected error on %s %s', req.method,
                          req.path_qs)
            raise errors.HTTPError(500, 'An unexpected error occurred; see '
                                   'the server log.')
        return resp(environ, start_response)


def _check_length(environ, limit):
    """413 for a body announced larger than ``limit``, before it is read.

    resobj-api's server refuses it before the application runs; this
    check holds under any other WSGI server.
    """
    length = environ.get('CONTENT_LENGTH')
    if not length:
        return
    try:
        length = int(length)
    except ValueError:
        raise errors.bad_request('Content-Length %r is not a number.'
                                 % length, errors.REQUEST_MALFORMED)
    if length > limit:
        raise errors.HTTPError(
            413, 'The request body is larger than %d bytes ([api] '
            'max_request_body_size).' % limit, errors.REQUEST_TOO_LARGE)


def _negotiate(environ):
    try:
        return microversion.parse(environ.get('HTTP_OPENSTACK_API_VERSION'))
    except microversion.MalformedVersion as exc:
        raise errors.bad_request('Invalid microversion: %s' % exc)
    except microversion.UnacceptableVersion as exc:
        # Placement's words, its explanation's quirks included.
        raise errors.HTTPError(
            406, 'The resource could not be generated that was acceptable '
            'to your browser (content of type application/json. \n\n '
            'Invalid microversion: %s' % exc, explained=True,
            extra={'min_version': str(microversion.MIN),
                   'max_version': str(microversion.MAX)})


def _path(req):
    try:
        return req.path_info
    except UnicodeDecodeError:
        # A percent-escape that is not UTF-8 names no resource.
        raise errors.bad_request('The request path is not valid UTF-8.',
                                 errors.BAD_CHARACTER)


# Accept values that take JSON, as every client of the API sends them:
# answered without webob's parse of the header, which costs about as
# much as the rest of this function's checks together. An empty one
# takes anything, as in placement.
_ACCEPTS_JSON = frozenset(['application/json', '*/*', ''])


def _check_content(req):
    accept = req.environ.get('HTTP_ACCEPT')
    if accept is not None and accept.strip().lower() not in _ACCEPTS_JSON:
        if req.accept and not req.accept.acceptable_offers(
                ['application/json']):
            raise errors.HTTPError(406, 'Only application/json is provided')
    if req.method in _BODY_METHODS or req.content_length:
        if req.content_length and not req.content_type:
            raise errors.bad_request(
                'A request with a body needs a Content-Type header.')


# Error bodies carry a ``code`` from this version on.
_ERROR_CODES = (1, 23)


def _error_response(error, request_id, version):
    resp = webob.Response(status=error.status)
    resp.body = error.body(request_id, with_code=(
        version is not None and version >= _ERROR_CODES))
    resp.content_type = 'application/json'
    resp.charset = None
    for name, value in error.headers.items():
        resp.headers[name] = value
    return resp


def make_app(conf):
    """The WSGI application for a parsed ``conf`` with resobj's options.

    Configures the object layer from ``conf``; the database must already
    be configured (``facade.configure``) and at the current revision.
    """
    from resobj import objects
    objects.configure(conf)
    return Application(conf)
