"""resobj.rpc on oslo.messaging's in-process fake transport.

The fake transport is for unit tests only; the RabbitMQ tests are in
tests/functional/conductor/test_service.py.
"""

import time

import kombu.exceptions as kombu_exceptions
from oslo_config import cfg
import oslo_messaging as messaging

from resobj.compute import exception as compute_exception
from resobj import context
from resobj import exception
from resobj import rpc
from resobj.tests import base


class _Endpoint:
    target = messaging.Target(version='1.0')

    def echo(self, ctxt, value):
        return {'value': value, 'user': ctxt.user_id,
                'read_deleted': ctxt.read_deleted}

    def fail(self, ctxt):
        raise exception.ServiceNotFound(key='s-1')

    @rpc.endpoint_method
    def refuse(self, ctxt):
        # A class the N-1 release lacks (exception.new_since_n_minus_1).
        raise exception.ConsumerGenerationConflict(consumer='c-1', actual=2,
                                                   given=1)


class _FakeTransportCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        rpc.register_opts(self.conf)
        self.conf([], project='resobj', default_config_files=[])
        self.conf.set_override('transport_url', 'fake:/')
        self.transport = rpc.get_transport(self.conf)
        self.addCleanup(self.transport.cleanup)

    def _serve(self):
        server = rpc.get_server(self.transport, 'unit-topic', 'h1',
                                [_Endpoint()])
        server.start()

        def stop():
            server.stop()
            server.wait()
        self.addCleanup(stop)
        return rpc.get_client(self.transport, 'unit-topic', '1.0',
                              timeout=10)


class TestRPC(_FakeTransportCase):

    def test_messaging_groups_registered_on_a_private_conf(self):
        # A call needs these; oslo.messaging registers the metrics and
        # tracing groups on its global CONF only (rpc._unlisted_opts).
        for group in ('oslo_messaging_metrics', 'oslo_messaging_tracing',
                      'oslo_messaging_rabbit',
                      'oslo_messaging_notifications'):
            self.assertIn(group, self.conf)
        for name in ('transport_url', 'rpc_response_timeout',
                     'executor_thread_pool_size'):
            self.assertIn(name, self.conf)

    def test_every_group_the_library_registers_globally_is_registered(self):
        # What oslo.messaging registers on cfg.CONF at import is what a
        # private ConfigOpts lacks unless resobj registers it: a new such
        # group (or option) must be added to rpc._unlisted_opts.
        for group in cfg.CONF:
            if not group.startswith('oslo_messaging'):
                continue
            self.assertIn(group, self.conf)
            self.assertLessEqual(set(cfg.CONF[group]),
                                 set(self.conf[group]), group)

    def test_the_library_registers_its_own_options_again_without_error(self):
        # The listed options are copies: the library registering its own
        # on the same conf (a rabbit transport, a server) must find them
        # equal, not a duplicate.
        transport = messaging.get_rpc_transport(
            self.conf, url='rabbit://guest:guest@127.0.0.1:1/')
        self.addCleanup(transport.cleanup)
        rpc.get_server(transport, 'unit-topic', 'h1', [_Endpoint()])
        self.assertEqual(1.0, self.conf.oslo_messaging_rabbit
                         .kombu_reconnect_delay)

    def test_resobj_reconnects_more_often_than_the_library(self):
        self.assertEqual(2, self.conf.oslo_messaging_rabbit
                         .rabbit_interval_max)
        self.assertEqual(3, self.conf.rpc_connection_retries)

    def test_a_message_gives_up_on_a_broker_it_cannot_reach(self):
        # Nothing listens on port 1: the connection is refused at each
        # try, and the sender gets an error after the configured tries
        # rather than waiting for a broker. (A cast: a call would first
        # open its reply queue's connection, which oslo.messaging tries
        # for ever; a running service has it open already.)
        self.conf.set_override('rpc_connection_retries', 1)
        transport = messaging.get_rpc_transport(
            self.conf, url='rabbit://guest:guest@127.0.0.1:1/')
        self.addCleanup(transport.cleanup)
        client = rpc.get_client(transport, 'unit-topic', '1.0', timeout=60)
        started = time.monotonic()
        # MessageDeliveryFailure once a connection broke; a connection
        # the pool opens anew fails with the driver's own error.
        self.assertRaises((messaging.MessageDeliveryFailure,
                           kombu_exceptions.OperationalError), client.cast,
                          context.RequestContext(), 'echo', value=1)
        self.assertLess(time.monotonic() - started, 30)

    def test_a_driver_error_on_a_new_connection_is_a_delivery_failure(self):
        # What oslo.messaging's RabbitMQ driver raises when a connection
        # it opens anew is reset: resobj's callers handle it as the
        # broker out of reach.
        class Unreachable:
            def call(self, ctxt, method, **kwargs):
                raise kombu_exceptions.OperationalError(
                    '[Errno 104] Connection reset by peer')

        exc = self.assertRaises(messaging.MessageDeliveryFailure, rpc.call,
                                Unreachable(), context.RequestContext(),
                                'echo')
        self.assertIn('Cannot reach the message broker: [Errno 104]',
                      str(exc))

    def test_call_carries_the_context(self):
        client = self._serve()
        ctxt = context.RequestContext(user_id='u1', read_deleted='yes')
        self.assertEqual({'value': 7, 'user': 'u1', 'read_deleted': 'yes'},
                         client.call(ctxt, 'echo', value=7))

    def test_resobj_exceptions_cross_as_themselves(self):
        client = self._serve()
        exc = self.assertRaises(exception.ServiceNotFound, rpc.call,
                                client.prepare(),
                                context.get_admin_context(), 'fail')
        self.assertEqual({'key': 's-1'}, exc.kwargs)
        # The class itself, with its own message: the server's traceback
        # is not the caller's error text.
        self.assertIs(exception.ServiceNotFound, type(exc))
        self.assertEqual(str(exception.ServiceNotFound(key='s-1')),
                         str(exc))
        self.assertNotIn('Traceback', str(exc))


class TestErrorsForN1Peers(_FakeTransportCase):
    """Error classes the N-1 release lacks travel as a base it has."""

    def test_a_marked_class_leaves_as_its_nearest_unmarked_base(self):
        # Expected errors are handed to oslo.messaging wrapped; it
        # serialises the class and kwargs of the wrapped one.
        expected = self.assertRaises(messaging.ExpectedException,
                                     _Endpoint().refuse,
                                     context.get_admin_context())
        exc = expected.exc_info[1]
        self.assertIs(exception.ConcurrentUpdateDetected, type(exc))
        self.assertEqual(
            {'consumer': 'c-1', 'actual': 2, 'given': 1,
             rpc.SENT_AS_BASE:
             'resobj.exception:ConsumerGenerationConflict'}, exc.kwargs)
        self.assertIn('consumer c-1 is at generation 2', str(exc))
        # The server's log and trace still show the original.
        self.assertIsInstance(exc.__cause__,
                              exception.ConsumerGenerationConflict)

    def test_a_class_n_minus_1_has_leaves_as_itself(self):
        exc = exception.ServiceNotFound(key='s-1')
        self.assertIs(exc, rpc.for_n_minus_1(exc))

    def test_a_subclass_of_a_marked_class_is_marked(self):
        class Newer(exception.ConsumerGenerationConflict):
            pass
        sent = rpc.for_n_minus_1(Newer(consumer='c', actual=1, given=0))
        self.assertIs(exception.ConcurrentUpdateDetected, type(sent))

    def test_a_peer_that_has_the_class_gets_it_back(self):
        client = self._serve()
        exc = self.assertRaises(exception.ConsumerGenerationConflict,
                                rpc.call, client.prepare(),
                                context.get_admin_context(), 'refuse')
        self.assertIs(exception.ConsumerGenerationConflict, type(exc))
        self.assertEqual({'consumer': 'c-1', 'actual': 2, 'given': 1},
                         exc.kwargs)
        self.assertEqual(str(exception.ConsumerGenerationConflict(
            consumer='c-1', actual=2, given=1)), str(exc))

    def _received(self, sent_as):
        sent = exception.ConcurrentUpdateDetected(
            'the message', what='x', generation=1,
            **{rpc.SENT_AS_BASE: sent_as})
        return rpc._as_raised(sent)

    def test_the_name_is_looked_up_in_allowed_modules_only(self):
        for name in ('os:error', 'resobj.exception:NoSuchClass',
                     'resobj.exception:new_since_n_minus_1',
                     # Not under the class that arrived.
                     'resobj.exception:ServiceNotFound', 'garbage'):
            got = self._received(name)
            self.assertIs(exception.ConcurrentUpdateDetected, type(got),
                          name)
            self.assertEqual('the message', got.message)

    def test_a_class_of_another_allowed_module(self):
        got = self._received('resobj.compute.exception:ReshapeConflict')
        # ReshapeConflict is a Conflict, not a ConcurrentUpdateDetected.
        self.assertIs(exception.ConcurrentUpdateDetected, type(got))
        sent = exception.Conflict('refused', providers='p', detail='d', **{
            rpc.SENT_AS_BASE: 'resobj.compute.exception:ReshapeConflict'})
        got = rpc._as_raised(sent)
        self.assertIs(compute_exception.ReshapeConflict, type(got))
        self.assertEqual({'providers': 'p', 'detail': 'd'}, got.kwargs)
