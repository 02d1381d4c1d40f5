"""[upgrade_levels] compute = auto: the cap follows the live computes."""

import datetime

import fixtures
from oslo_config import cfg
from oslo_utils import timeutils

from resobj.compute import rpcapi
from resobj import conf as resobj_conf
from resobj import objects
from resobj.objects import compute_node as cn_obj
from resobj import rpc
from resobj.tests import backends
from resobj.tests.functional import db_base


class TestAutoVersionCap(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.conf = cfg.ConfigOpts()
        resobj_conf.register_opts(self.conf)
        rpc.register_opts(self.conf)
        self.conf([], project='resobj', default_config_files=[])
        self.conf.set_override('compute', 'auto', group='upgrade_levels')

    def compute(self, host, version):
        objects.Service(self.context, host=host, binary=cn_obj.COMPUTE_BINARY,
                        version=version).create()

    def test_no_compute_yet_no_cap(self):
        self.assertIsNone(rpcapi.version_cap(self.conf, self.context))

    def test_cap_of_the_oldest_compute(self):
        self.compute('new', objects.service.SERVICE_VERSION)
        self.compute('old', 1)
        self.assertEqual('1.0', rpcapi.version_cap(self.conf, self.context))

    def test_no_cap_once_every_compute_runs_this_release(self):
        self.compute('new', objects.service.SERVICE_VERSION)
        self.assertIsNone(rpcapi.version_cap(self.conf, self.context))

    def test_a_running_client_follows_the_live_computes(self):
        # The cap a ComputeAPI sends under, read again after
        # auto_interval: an older compute that starts caps it, and it is
        # lifted once that one is down.
        now = [1000.0]
        self.useFixture(fixtures.MockPatch(
            'resobj.upgrade_levels.time.monotonic', lambda: now[0]))
        # A transport that is never used: the cap is read before a call
        # is sent, and none is.
        self.conf.set_override('transport_url', backends.transport_url())
        transport = rpc.get_transport(self.conf)
        self.addCleanup(transport.cleanup)
        api = rpcapi.ComputeAPI(self.conf, transport, self.context)
        self.compute('new', objects.service.SERVICE_VERSION)
        self.assertIsNone(api.version_cap)
        old = objects.Service(self.context, host='old',
                              binary=cn_obj.COMPUTE_BINARY, version=1,
                              last_seen_up=timeutils.utcnow())
        old.create()
        self.assertIsNone(api.version_cap)
        now[0] += self.conf.upgrade_levels.auto_interval
        self.assertEqual('1.0', api.version_cap)
        old.last_seen_up = timeutils.utcnow() - datetime.timedelta(
            seconds=self.conf.service_down_time + 1)
        old.save()
        now[0] += self.conf.upgrade_levels.auto_interval
        self.assertIsNone(api.version_cap)

    def test_explicit_cap_is_kept(self):
        self.conf.set_override('compute', '1.0', group='upgrade_levels')
        self.assertEqual('1.0', rpcapi.version_cap(self.conf, self.context))

    def test_every_rpc_version_is_mapped_in_order(self):
        versions = [v for _, v in rpcapi.SERVICE_VERSION_RPC]
        self.assertEqual(rpcapi.VERSION, versions[-1])
        services = [s for s, _ in rpcapi.SERVICE_VERSION_RPC]
        self.assertEqual(sorted(services), services)
        self.assertLessEqual(services[-1], objects.service.SERVICE_VERSION)
