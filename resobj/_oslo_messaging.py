"""oslo.messaging's internals resobj relies on, where it has no public way.

Used through the one function here; ``resobj/tests/functional/
test_rpc_faults.py`` fails if oslo.messaging changes it, and
doc/source/contributor/architecture.rst lists it.
"""

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def requeue_after_stop(server):
    """Have the broker take back what it still hands a stopped ``server``.

    Call it between ``server.stop()`` and ``server.wait()``. Returns how
    many of the server's RabbitMQ consumers it changed (0 on another
    driver).

    ``stop()`` ends the server's polling but leaves its consumers
    subscribed until ``wait()`` closes the connection, so RabbitMQ goes on
    delivering the topic's calls to it meanwhile. Closing the connection
    reads those deliveries, and the RPC listener acknowledges each one it
    reads before anything could dispatch it: the call is gone, and its
    caller waits out its timeout. With the consumers' callback replaced,
    each such delivery is handed back to the queue instead, for another
    server on the topic. oslo.messaging offers no public way: the
    consumers are the RabbitMQ connection's ``_consumers``, reached
    through the listener adapter's ``_poll_style_listener`` and its
    connection context.
    """
    listener = getattr(server.listener, '_poll_style_listener', None)
    # The listener's connection context, then the RabbitMQ connection.
    context = getattr(listener, 'conn', None)
    consumers = getattr(getattr(context, 'connection', None), '_consumers',
                        None)
    if not consumers:
        return 0
    for consumer in consumers:
        consumer.callback = _requeue
    # Unsubscribed, the server gets nothing more: the broker hands the
    # topic's next calls to the other servers at once, not only after
    # this one has finished its own.
    for consumer, tag in list(consumers.items()):
        try:
            consumer.cancel(tag=tag)
        except Exception as exc:  # noqa: B902 - closing cancels it too
            LOG.debug('Could not unsubscribe from %(queue)s (%(error)s); '
                      'closing the connection does',
                      {'queue': consumer.queue_name, 'error': exc})
    return len(consumers)


def _requeue(message):
    try:
        message.requeue()
    except Exception as exc:  # noqa: B902 - the broker requeues it anyway
        # Unacknowledged, it goes back to the queue when the connection
        # closes, a moment later.
        LOG.debug('Could not hand back a call delivered while stopping '
                  '(%s); the broker takes it back at close', exc)
