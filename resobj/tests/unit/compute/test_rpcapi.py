"""The compute RPC client: keyed, retried state-changing calls (1.1)."""

import fixtures
from oslo_config import cfg
import oslo_messaging as messaging

from resobj.compute import manager
from resobj.compute import rpcapi
from resobj import conf as resobj_conf
from resobj import context
from resobj import exception
from resobj import rpc
from resobj.tests import base


class TestComputeAPI(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        resobj_conf.register_opts(self.conf)
        rpc.register_opts(self.conf)
        self.conf([], project='resobj', default_config_files=[])
        self.conf.set_override('transport_url', 'fake:/')
        self.conf.set_override('call_retries', 2, group='compute')
        self.transport = rpc.get_transport(self.conf)
        self.addCleanup(self.transport.cleanup)
        self.context = context.get_admin_context()
        self.sent = []

        def call(cctxt, ctxt, method, **kwargs):
            self.sent.append((cctxt.target.version, cctxt.timeout, kwargs))
            raise messaging.MessagingTimeout('lost')
        self.useFixture(fixtures.MockPatch('resobj.rpc.call', call))

    def api(self):
        api = rpcapi.ComputeAPI(self.conf, self.transport, self.context)
        # No compute runs: nothing older to cap for.
        self.useFixture(fixtures.MockPatchObject(
            rpcapi, 'version_cap', lambda conf, ctxt: None))
        return api

    def test_a_lost_call_is_sent_again_with_the_same_key(self):
        exc = self.assertRaises(exception.ComputeTimeout,
                                self.api().delete_instance, self.context,
                                'cmp1', 'an-instance')
        self.assertIn('did not answer delete_instance', str(exc))
        self.assertEqual(3, len(self.sent))
        keys = {kwargs['idempotency_key'] for _v, _t, kwargs in self.sent}
        self.assertEqual(1, len(keys))
        self.assertEqual({('1.1', self.conf.compute.call_timeout)},
                         {(v, t) for v, t, _k in self.sent})

    def _fail_with(self, *errors):
        """Tries fail with ``errors`` in turn, the last one after that."""
        errors = list(errors)

        def call(cctxt, ctxt, method, **kwargs):
            self.sent.append((cctxt.target.version, cctxt.timeout, kwargs))
            raise errors.pop(0) if len(errors) > 1 else errors[0]
        self.useFixture(fixtures.MockPatch('resobj.rpc.call', call))
        self.useFixture(fixtures.MockPatchObject(
            rpcapi, 'UNREACHABLE_PAUSE', 0))

    def test_a_broker_out_of_reach_is_tried_again_with_the_same_key(self):
        self._fail_with(messaging.MessagingTimeout('lost'),
                        messaging.MessageDeliveryFailure('no broker'))
        exc = self.assertRaises(exception.ComputeTimeout,
                                self.api().delete_instance, self.context,
                                'cmp1', 'an-instance')
        # The first try may have been carried out: the caller is told
        # that nobody knows, not that nothing happened.
        self.assertIn('did not answer delete_instance', str(exc))
        self.assertEqual(3, len(self.sent))
        self.assertEqual(1, len({k['idempotency_key']
                                 for _v, _t, k in self.sent}))

    def test_no_try_left_this_process_unavailable(self):
        self._fail_with(messaging.MessageDeliveryFailure('no broker'))
        exc = self.assertRaises(exception.ComputeUnavailable,
                                self.api().build_instance, self.context,
                                'cmp1', 'an-instance', 'node1')
        self.assertIn('Cannot reach the compute service of cmp1 for '
                      'build_instance', str(exc))
        self.assertIn('not carried out', str(exc))
        # At once: nothing can have reached the compute.
        self.assertEqual(1, len(self.sent))

    def test_two_logical_calls_have_two_keys(self):
        api = self.api()
        for _ in range(2):
            self.assertRaises(exception.ComputeTimeout, api.delete_instance,
                              self.context, 'cmp1', 'an-instance')
        self.assertEqual(2, len({k['idempotency_key']
                                 for _v, _t, k in self.sent}))

    def test_capped_to_1_0_no_key_and_no_retry(self):
        self.conf.set_override('compute', '1.0', group='upgrade_levels')
        self.assertRaises(exception.ComputeTimeout,
                          self.api().delete_instance, self.context,
                          'cmp1', 'an-instance')
        self.assertEqual([('1.0', self.conf.rpc_response_timeout,
                           {'instance': 'an-instance'})],
                         self.sent)

    def test_a_read_only_call_is_neither_keyed_nor_retried(self):
        self.assertRaises(exception.ComputeTimeout,
                          self.api().check_shared_storage, self.context,
                          'cmp1', 'an-instance', 'node', 'pool')
        self.assertEqual(1, len(self.sent))
        self.assertNotIn('idempotency_key', self.sent[0][2])


class StubManager:

    def __init__(self):
        self.deleted = []

    def delete_instance(self, ctxt, instance):
        self.deleted.append(instance.uuid)


class TestComputeEndpoint(base.TestCase):

    def test_a_repeated_key_is_carried_out_once(self):
        stub = StubManager()
        endpoint = manager.ComputeEndpoint(stub, 'cmp1')
        instance = type('Inst', (), {'uuid': 'i-1'})()
        self.useFixture(fixtures.MockPatch(
            'resobj.objects.Instance.get_by_uuid',
            lambda ctxt, uuid: instance))
        ctxt = context.get_admin_context()
        for _ in range(3):
            endpoint.delete_instance(ctxt, instance, idempotency_key='k1')
        endpoint.delete_instance(ctxt, instance, idempotency_key='k2')
        self.assertEqual(['i-1', 'i-1'], stub.deleted)

    def test_a_delete_of_an_instance_already_gone_does_nothing(self):
        stub = StubManager()
        endpoint = manager.ComputeEndpoint(stub, 'cmp1')
        instance = type('Inst', (), {'uuid': 'i-1'})()

        def gone(ctxt, uuid):
            raise exception.InstanceNotFound(key=uuid)
        self.useFixture(fixtures.MockPatch(
            'resobj.objects.Instance.get_by_uuid', gone))
        # A compute restarted since the first try: no record of its key.
        endpoint.delete_instance(context.get_admin_context(), instance,
                                 idempotency_key='k1')
        self.assertEqual([], stub.deleted)

    def test_a_1_0_call_runs_as_in_1_0(self):
        # No key: neither recorded nor checked, every call carried out.
        stub = StubManager()
        endpoint = manager.ComputeEndpoint(stub, 'cmp1')
        instance = type('Inst', (), {'uuid': 'i-1'})()
        looked_up = []
        self.useFixture(fixtures.MockPatch(
            'resobj.objects.Instance.get_by_uuid',
            lambda ctxt, uuid: looked_up.append(uuid)))
        ctxt = context.get_admin_context()
        endpoint.delete_instance(ctxt, instance)
        endpoint.delete_instance(ctxt, instance)
        self.assertEqual(['i-1', 'i-1'], stub.deleted)
        self.assertEqual([], looked_up)
        self.assertEqual(0, len(endpoint.outcomes))
