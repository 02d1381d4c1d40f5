"""resobj.rpc on oslo.messaging's in-process fake transport.

The fake transport is for unit tests only; the RabbitMQ tests are in
tests/functional/conductor/test_service.py.
"""

from oslo_config import cfg
import oslo_messaging as messaging

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


class TestRPC(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        rpc.register_opts(self.conf)
        self.conf([], project='resobj', default_config_files=[])
        self.conf.set_override('transport_url', 'fake:/')
        self.transport = rpc.get_transport(self.conf)
        self.addCleanup(self.transport.cleanup)

    def test_messaging_groups_registered_on_a_private_conf(self):
        # oslo.messaging registers these on its global CONF only; a call
        # needs them (rpc.register_opts relies on ConfFixture for it).
        for group in ('oslo_messaging_metrics', 'oslo_messaging_tracing',
                      'oslo_messaging_rabbit'):
            self.assertIn(group, self.conf)

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
