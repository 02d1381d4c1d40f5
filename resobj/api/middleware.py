"""The standard OpenStack middleware in front of the application.

From the outside in, as placement has them:

1. ``http_proxy_to_wsgi`` -- behind a TLS-terminating proxy, with
   ``[oslo_middleware] enable_proxy_headers_parsing``, takes the scheme,
   host and path prefix from ``Forwarded`` / ``X-Forwarded-*`` so the
   links and ``Location`` headers the API writes point at the proxy.
   Without that option it would change nothing, and it is left out.
2. ``request_id`` -- gives each request its ``req-<uuid>`` id (a valid
   inbound ``X-OpenStack-Request-ID`` becomes the global request id) and
   returns it in ``X-OpenStack-Request-ID``, error or not.
3. ``cors`` -- answers a browser's preflight from an origin in ``[cors]
   allowed_origin`` itself, before authentication (a preflight carries
   no token), and adds the CORS headers to the actual responses. Left
   out, as placement leaves it out, when no origin is allowed: it would
   answer every ``OPTIONS`` with an empty 200, where the routes answer
   405 and name the methods they allow.

Inside them the application negotiates the microversion, authenticates
and dispatches (``resobj.api.app``).
"""

from oslo_middleware import cors
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import opts as middleware_opts
from oslo_middleware import request_id

# Placement's CORS defaults: the headers its clients send and read.
CORS_DEFAULTS = {
    'allow_headers': ['X-Auth-Token', 'X-Openstack-Request-Id',
                      'X-Identity-Status', 'X-Roles', 'X-Service-Catalog',
                      'X-User-Id', 'X-Tenant-Id', 'OpenStack-API-Version'],
    'expose_headers': ['X-Auth-Token', 'X-Openstack-Request-Id',
                       'X-Subject-Token', 'X-Service-Token',
                       'OpenStack-API-Version'],
}


def list_opts():
    """The middleware's option groups, as oslo.middleware lists them."""
    return (middleware_opts.list_opts_cors() +
            middleware_opts.list_opts_http_proxy_to_wsgi())


def register_opts(conf):
    """Register the middleware's options, with resobj's CORS defaults."""
    for group, opts in list_opts():
        conf.register_opts(opts, group=group)
    for name, value in CORS_DEFAULTS.items():
        conf.set_default(name, value, group='cors')


def set_lib_defaults():
    """The ``oslo.config.opts.defaults`` hook, for the sample config.

    oslo-config-generator reads the library's option objects, so the
    defaults go on them (process-wide); the service itself sets them per
    configuration object in :func:`register_opts`.
    """
    cors.set_defaults(**CORS_DEFAULTS)


def wrap(app, conf):
    """``app`` behind the standard middleware, configured from ``conf``."""
    # Each is given the ConfigOpts: without it oslo.middleware reads the
    # process-wide cfg.CONF.
    # Read once, at start-up, as the proxy option below.
    if conf.cors.allowed_origin:
        app = cors.CORS(app, conf)
    app = request_id.RequestId(app, conf)
    if not conf.oslo_middleware.enable_proxy_headers_parsing:
        # Disabled, the middleware passes every request through
        # unchanged, at the cost of one more webob request and response
        # per request. The option is read once, at start-up (it is not
        # mutable).
        return app
    return http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
