"""oslo.messaging for resobj's services: transport, serializer, clients.

Every RPC client and server of resobj is built here, so that they all
carry objects the same way (``ResobjObjectSerializer``, with backports on
receipt), turn the request context into a dict and back, and rebuild the
same resobj exceptions on the calling side that the serving side raised.
"""

import functools
import importlib
import logging as py_logging

from kombu import exceptions as kombu_exceptions
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts

from resobj import _oslo_messaging
from resobj.conf import service as service_conf
from resobj import context as resobj_context
from resobj import exception
from resobj.objects import base as objects_base

LOG = logging.getLogger(__name__)

# Exceptions raised by a remote method are rebuilt as these classes in the
# caller (with the same kwargs); any other arrives as RemoteError.
ALLOWED_EXMODS = ['resobj.exception', 'resobj.compute.exception',
                  'oslo_versionedobjects.exception']
# The kwarg naming an error's own class ("module:Class") when it travels
# as a base class that N-1 peers know (exception.new_since_n_minus_1).
SENT_AS_BASE = 'resobj_error_class'


# Where resobj's defaults differ from oslo.messaging's. Tries to reach
# the broker again at most this many seconds apart: with the library's
# growing intervals, services came back several seconds after the broker
# did, and kept calls waiting meanwhile.
RABBIT_DEFAULTS = {'rabbit_interval_max': 2}


def register_opts(conf):
    """Register every oslo.messaging option group on ``conf``.

    The groups of oslo.messaging's public option listing (the one its
    sample configuration generator reads), plus the two it registers only
    on its global ``cfg.CONF`` (:func:`_unlisted_opts`): a transport or
    server on a private ``ConfigOpts`` without them fails with
    NoSuchOptError.
    """
    for group, opts in messaging_opts.list_opts() + _unlisted_opts():
        conf.register_opts(opts, group=group)
    conf.register_opt(service_conf.rpc_connection_retries_opt)
    for name, value in RABBIT_DEFAULTS.items():
        conf.set_default(name, value, group='oslo_messaging_rabbit')


def _unlisted_opts():
    """[(group, options)] oslo.messaging reads but ``list_opts`` leaves out.

    The metrics and tracing options are defined in private modules and
    registered on the library's global configuration at import; nothing
    public names them. The one private use of oslo.messaging's options
    (resobj/tests/unit/test_rpc.py fails if it stops matching what the
    library registers).
    """
    from oslo_messaging._metrics import client as metrics
    from oslo_messaging._tracing import client as tracing
    return [('oslo_messaging_metrics', metrics.oslo_messaging_metrics),
            ('oslo_messaging_tracing', tracing.oslo_messaging_tracing)]


class RequestContextSerializer(messaging.Serializer):
    """Objects through ResobjObjectSerializer; the context as a dict."""

    def __init__(self, base=None):
        self._base = base or objects_base.ResobjObjectSerializer()

    def serialize_entity(self, context, entity):
        return self._base.serialize_entity(context, entity)

    def deserialize_entity(self, context, entity):
        return self._base.deserialize_entity(context, entity)

    def serialize_context(self, context):
        return context.to_dict()

    def deserialize_context(self, context):
        return resobj_context.RequestContext.from_dict(context)


# oslo.messaging's RabbitMQ driver logs each failed attempt to reach the
# broker at ERROR, as if the service had failed; it tries again, and
# the service goes on. These are its messages for it (its logger and
# words: no public API names them; functional/test_outage_logs.py cuts
# a broker link for real and fails if they are no longer recognised).
_RABBIT_LOGGER = 'oslo.messaging._drivers.impl_rabbit'
_RABBIT_RETRIES = (
    'Connection failed: %s (retrying in %s seconds)',
    '[%(connection_id)s] AMQP server on %(hostname)s:%(port)s is '
    'unreachable: %(err_str)s. Trying again in %(sleep_time)d seconds.',
)


class _BrokerRetryIsAWarning(py_logging.Filter):
    """A failed attempt to reach the broker, one warning line."""

    def filter(self, record):
        if record.levelno == py_logging.ERROR and \
                record.msg in _RABBIT_RETRIES:
            record.levelno, record.levelname = py_logging.WARNING, 'WARNING'
        return True


def _quiet_broker_retries():
    logger = py_logging.getLogger(_RABBIT_LOGGER)
    if not any(isinstance(f, _BrokerRetryIsAWarning)
               for f in logger.filters):
        logger.addFilter(_BrokerRetryIsAWarning())


def get_transport(conf):
    """The RPC transport of ``conf``'s ``[DEFAULT] transport_url``."""
    _quiet_broker_retries()
    return messaging.get_rpc_transport(conf,
                                       allowed_remote_exmods=ALLOWED_EXMODS)


def get_client(transport, topic, version, version_cap=None, timeout=None):
    """An RPC client for ``topic``, sending at most ``version_cap``.

    While the broker cannot be reached, a call gives up after
    ``[DEFAULT] rpc_connection_retries`` tries with MessageDeliveryFailure,
    rather than waiting for the broker past its own timeout.
    """
    target = messaging.Target(topic=topic, version=version)
    retries = transport.conf.rpc_connection_retries
    return messaging.get_rpc_client(
        transport, target, version_cap=version_cap, timeout=timeout,
        retry=None if retries < 0 else retries,
        serializer=RequestContextSerializer())


def get_server(transport, topic, host, endpoints):
    """An RPC server on ``topic`` (and ``topic.host``) for ``endpoints``.

    Calls run on oslo.messaging's threading executor, as many at once as
    ``[DEFAULT] executor_thread_pool_size``.
    """
    target = messaging.Target(topic=topic, server=host)
    return messaging.get_rpc_server(
        transport, target, endpoints,
        serializer=RequestContextSerializer())


def stop_server(server):
    """Stop ``server`` taking calls; return once it answered those it took.

    A call the broker still hands it while it finishes is given back to
    the queue, for another server on the topic, rather than dropped
    (:func:`resobj._oslo_messaging.requeue_after_stop`).
    """
    server.stop()
    _oslo_messaging.requeue_after_stop(server)
    server.wait()


def endpoint_method(fn):
    """Decorate a method of an RPC endpoint (a conductor's, a compute's).

    resobj's own errors are answers to the caller (not found, conflict),
    not faults of the server: oslo.messaging logs them at debug level
    rather than as an error with a traceback. An error class the N-1
    release lacks is sent as its nearest base that release has
    (:func:`for_n_minus_1`), so a peer not yet upgraded still catches it
    by that base; :func:`call` turns it back into its own class for a
    peer that has it.
    """
    @functools.wraps(fn)
    def wrapper(endpoint, context, *args, **kwargs):
        # The lines logged while this call is served name the request
        # the caller sent, and none of the call this thread served
        # before (oslo.messaging's executor threads serve one call after
        # another).
        context.update_store()
        try:
            return fn(endpoint, context, *args, **kwargs)
        except exception.ResobjException as exc:
            if isinstance(exc, exception.DatabaseUnavailable):
                # The caller gets the error and says what it does; here,
                # one line, with the driver's words the caller does not
                # get.
                LOG.warning('%(method)s: %(error)s (%(cause)s); the '
                            'caller gets the error',
                            {'method': fn.__name__, 'error': exc,
                             'cause': exc.kwargs.get('cause',
                                                     'no details')})
            sent = for_n_minus_1(exc)
            if sent is exc:
                raise
            raise sent from exc
        finally:
            resobj_context.clear_current()
    return messaging.expected_exceptions(exception.ResobjException)(wrapper)


def for_n_minus_1(exc):
    """``exc`` as an error an N-1 peer can rebuild: itself or a base.

    The base carries the same message and kwargs, and the class's own
    name under SENT_AS_BASE.
    """
    cls = type(exc)
    if cls.known_to_n_minus_1:
        return exc
    base = next(c for c in cls.__mro__
                if issubclass(c, exception.ResobjException)
                and c.known_to_n_minus_1)
    kwargs = dict(exc.kwargs)
    kwargs[SENT_AS_BASE] = '%s:%s' % (cls.__module__, cls.__name__)
    return base(exc.message, **kwargs)


def prepare(client, api, method, version, cap, **options):
    """``client`` prepared to send ``method`` at ``version``.

    RPCVersionCapped, naming the option, when ``[upgrade_levels] <api>``
    (``cap``) rules that version out: nothing is sent. ``options`` go to
    ``client.prepare`` (a ``server``, for instance).
    """
    cctxt = client.prepare(version=version, version_cap=cap, **options)
    if not cctxt.can_send_version(version):
        raise exception.RPCVersionCapped(api=api, method=method,
                                         version=version, cap=cap)
    return cctxt


def call(cctxt, context, method, **kwargs):
    """``cctxt.call``, raising a remote resobj error as the caller's own.

    oslo.messaging rebuilds the remote error as a subclass of its class
    whose message ends with the remote traceback. A not-found or a
    conflict is an answer, not a fault: the caller gets the class with
    its own message and kwargs, and the remote traceback goes to the
    debug log.
    """
    try:
        return cctxt.call(context, method, **kwargs)
    except kombu_exceptions.OperationalError as exc:
        # oslo.messaging's RabbitMQ driver lets kombu's error through
        # when a connection it opens anew cannot reach the broker; the
        # callers handle an unreachable broker as MessageDeliveryFailure.
        raise messaging.MessageDeliveryFailure(
            'Cannot reach the message broker: %s' % exc) from exc
    except exception.ResobjException as exc:
        local = _as_raised(exc)
        if local is exc:
            raise
        LOG.debug('%(method)s failed remotely: %(error)s',
                  {'method': method, 'error': exc})
        raise local from None


def _as_raised(exc):
    """``exc`` as its own class would raise it, without the trace.

    That is the class in ALLOWED_EXMODS oslo.messaging rebuilt, or the
    one it was sent for (SENT_AS_BASE) when this side has that class.
    """
    kwargs = dict(exc.kwargs)
    own = _sent_for(kwargs.pop(SENT_AS_BASE, None))
    for cls in type(exc).__mro__:
        if cls.__module__ in ALLOWED_EXMODS:
            if own is not None and issubclass(own, cls):
                return own(exc.message, **kwargs)
            if cls is type(exc):
                return exc
            return cls(exc.message, **exc.kwargs)
    return exc


def _sent_for(name):
    """The class SENT_AS_BASE names, if this side has it."""
    module, _, cls = (name or '').partition(':')
    if module not in ALLOWED_EXMODS:
        return None
    found = getattr(importlib.import_module(module), cls, None)
    is_error = isinstance(found, type) and issubclass(
        found, exception.ResobjException)
    return found if is_error else None
