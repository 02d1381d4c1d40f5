"""The conductor RPC client: version caps and failures, named."""

import fixtures
from oslo_config import cfg

from resobj.conductor import rpcapi
from resobj import conf as resobj_conf
from resobj import context
from resobj import exception
from resobj import rpc
from resobj.tests import base


class TestConductorAPI(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        resobj_conf.register_opts(self.conf)
        rpc.register_opts(self.conf)
        self.conf([], project='resobj', default_config_files=[])
        self.conf.set_override('transport_url', 'fake:/')
        self.transport = rpc.get_transport(self.conf)
        self.addCleanup(self.transport.cleanup)

    def test_version_cap_refuses_a_newer_call(self):
        self.conf.set_override('conductor', '0.9', group='upgrade_levels')
        api = rpcapi.ConductorAPI(self.conf, self.transport)
        exc = self.assertRaises(
            exception.RPCVersionCapped, api.object_backport_versions,
            context.get_admin_context(), None, {})
        self.assertIn('object_backport_versions needs conductor RPC API '
                      'version 1.0, but [upgrade_levels] conductor caps it '
                      'at 0.9', str(exc))

    def test_no_conductor_answering_is_a_named_timeout(self):
        log = self.useFixture(fixtures.FakeLogger(name='resobj'))
        api = rpcapi.ConductorAPI(self.conf, self.transport, timeout=0.2)
        exc = self.assertRaises(
            exception.ConductorTimeout, api.object_class_action_versions,
            context.get_admin_context(), 'Service', 'get_all',
            {'Service': '1.3'}, (), {})
        self.assertIn('No conductor on topic resobj-conductor answered '
                      'object_class_action_versions within 0.2 s, 1 '
                      'time(s) sent', str(exc))
        # Said once, by whoever handles the error: not logged here too.
        self.assertEqual('', log.output)

    def test_timed_out_calls_are_sent_again_as_configured(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='resobj.conductor.rpcapi', format='%(message)s'))
        self.conf.set_override('call_retries', 2, group='conductor')
        api = rpcapi.ConductorAPI(self.conf, self.transport, timeout=0.2)
        sent = []
        prepare = api.client.prepare

        def counting_prepare(**kwargs):
            cctxt = prepare(**kwargs)
            call = cctxt.call

            def counted(ctxt, method, **kw):
                sent.append(method)
                return call(ctxt, method, **kw)
            cctxt.call = counted
            return cctxt
        api.client.prepare = counting_prepare
        exc = self.assertRaises(
            exception.ConductorTimeout, api.object_class_action_versions,
            context.get_admin_context(), 'Service', 'get_all',
            {'Service': '1.4'}, (), {})
        self.assertEqual(3, exc.kwargs['attempts'])
        self.assertEqual(['object_class_action_versions'] * 3, sent)
        # A warning for each attempt sent again, none for the last.
        self.assertEqual(
            ['No conductor answered object_class_action_versions within '
             '0.2 s (attempt %d of 3); sending it again' % n
             for n in (1, 2)], log.output.splitlines())

    def test_history_names_every_version_up_to_the_current(self):
        self.assertIn('* %s - ' % rpcapi.VERSION, rpcapi.__doc__)
