"""The conductor RPC client: version caps and failures, named."""

import time

import fixtures
from oslo_config import cfg
import oslo_messaging as messaging
from oslo_utils import uuidutils

from resobj.conductor import rpcapi
from resobj import conf as resobj_conf
from resobj import context
from resobj import exception
from resobj.objects import service as service_obj
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

    def _count_sent(self, api):
        """[(method, kwargs)] of every try ``api`` sends, and its cap."""
        sent = []
        prepare = api.client.prepare

        def counting_prepare(**kwargs):
            cctxt = prepare(**kwargs)
            call = cctxt.call

            def counted(ctxt, method, **kw):
                sent.append((method, kwargs.get('version'), kw))
                return call(ctxt, method, **kw)
            cctxt.call = counted
            return cctxt
        api.client.prepare = counting_prepare
        return sent

    def test_capped_calls_go_unkeyed_and_are_sent_again_as_configured(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='resobj.conductor.rpcapi', format='%(message)s'))
        self.conf.set_override('call_retries', 2, group='conductor')
        self.conf.set_override('conductor', '1.0', group='upgrade_levels')
        api = rpcapi.ConductorAPI(self.conf, self.transport, timeout=0.2)
        sent = self._count_sent(api)
        exc = self.assertRaises(
            exception.ConductorTimeout, api.object_class_action_versions,
            context.get_admin_context(), 'Service', 'get_all',
            {'Service': '1.4'}, (), {})
        self.assertEqual(3, exc.kwargs['attempts'])
        self.assertEqual([('object_class_action_versions', '1.0')] * 3,
                         [(method, version) for method, version, _ in sent])
        # The 1.0 form: no key.
        self.assertNotIn('idempotency_key', sent[0][2])
        # A warning for each attempt sent again, none for the last.
        self.assertEqual(
            ['No conductor answered object_class_action_versions within '
             '0.2 s (attempt %d of 3); sending it again' % n
             for n in (1, 2)], log.output.splitlines())

    def test_keyed_calls_are_tried_with_one_key_until_the_total(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='resobj.conductor.rpcapi', format='%(message)s'))
        self.useFixture(fixtures.MockPatchObject(rpcapi, 'FIRST_PAUSE',
                                                 0.05))
        self.conf.set_override('call_timeout', 1, group='conductor')
        api = rpcapi.ConductorAPI(self.conf, self.transport, timeout=1.3)
        sent = self._count_sent(api)
        started = time.monotonic()
        exc = self.assertRaises(
            exception.ConductorTimeout, api.object_action,
            context.get_admin_context(), None, 'save', (), {})
        took = time.monotonic() - started
        # Each try waits call_timeout; the tries end with the total.
        self.assertGreaterEqual(took, 1.3)
        self.assertLess(took, 3.0)
        self.assertGreaterEqual(len(sent), 2)
        self.assertEqual(len(sent), exc.kwargs['attempts'])
        self.assertEqual({('object_action', '1.1')},
                         {(method, version) for method, version, _ in sent})
        keys = {kw['idempotency_key'] for _, _, kw in sent}
        self.assertEqual(1, len(keys))
        self.assertTrue(uuidutils.is_uuid_like(keys.pop()))
        self.assertEqual(len(sent) - 1, len(log.output.splitlines()))
        # Another logical call: another key.
        sent.clear()
        self.assertRaises(exception.ConductorTimeout, api.object_action,
                          context.get_admin_context(), None, 'save', (), {})
        self.assertNotIn(sent[0][2]['idempotency_key'], keys)

    def _tries_fail_with(self, *errors):
        """Each try fails with the next of ``errors``, then the last."""
        errors = list(errors)
        sent = []

        def call(cctxt, ctxt, method, **kwargs):
            sent.append(kwargs.get('idempotency_key'))
            raise errors.pop(0) if len(errors) > 1 else errors[0]
        self.useFixture(fixtures.MockPatch('resobj.rpc.call', call))
        self.useFixture(fixtures.MockPatchObject(rpcapi, 'FIRST_PAUSE',
                                                 0.05))
        return sent

    def test_an_unreachable_broker_before_any_try_is_unavailable(self):
        sent = self._tries_fail_with(
            messaging.MessageDeliveryFailure('no broker'))
        api = rpcapi.ConductorAPI(self.conf, self.transport, timeout=1)
        exc = self.assertRaises(
            exception.ConductorUnavailable, api.object_action,
            context.get_admin_context(), None, 'save', (), {})
        self.assertIn('no broker', str(exc))
        # At once: nothing can have reached a conductor.
        self.assertEqual(1, len(sent))

    def test_an_unreachable_broker_after_a_lost_try_is_tried_again(self):
        # The first try may have been carried out: the repeats, with the
        # same key, go on until the total, and the caller is told that
        # nobody knows rather than that nothing happened.
        sent = self._tries_fail_with(
            messaging.MessagingTimeout('lost'),
            messaging.MessageDeliveryFailure('no broker'))
        api = rpcapi.ConductorAPI(self.conf, self.transport, timeout=0.5)
        self.assertRaises(exception.ConductorTimeout, api.object_action,
                          context.get_admin_context(), None, 'save', (), {})
        self.assertGreaterEqual(len(sent), 3)
        self.assertEqual(1, len(set(sent)))

    def test_backports_are_never_keyed(self):
        api = rpcapi.ConductorAPI(self.conf, self.transport, timeout=0.2)
        sent = self._count_sent(api)
        self.assertRaises(exception.ConductorTimeout,
                          api.object_backport_versions,
                          context.get_admin_context(), None, {})
        self.assertEqual([('object_backport_versions', '1.0')],
                         [(method, version) for method, version, _ in sent])

    def test_every_service_version_maps_to_a_known_rpc_version(self):
        self.assertEqual(rpcapi.VERSION, rpcapi.SERVICE_VERSION_RPC[-1][1])
        self.assertLessEqual(rpcapi.SERVICE_VERSION_RPC[-1][0],
                             service_obj.SERVICE_VERSION)

    def test_history_names_every_version_up_to_the_current(self):
        self.assertIn('* %s - ' % rpcapi.VERSION, rpcapi.__doc__)
