"""[upgrade_levels] conductor = auto: the cap follows the live conductors."""

from resobj.conductor import rpcapi
from resobj import objects
from resobj.objects import service as service_obj
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional import db_base


class TestAutoVersionCap(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.conf = self.useFixture(resobj_fixtures.ConfFixture())
        self.conf.config(conductor='auto', group='upgrade_levels')

    def conductor(self, host, version):
        objects.Service(self.context, host=host, binary=rpcapi.BINARY,
                        version=version).create()

    def cap(self):
        return rpcapi.version_cap(self.conf.conf, self.context)

    def test_no_conductor_no_cap(self):
        self.assertIsNone(self.cap())

    def test_cap_of_the_oldest_conductor_until_none_is_older(self):
        self.conductor('new', service_obj.SERVICE_VERSION)
        self.assertIsNone(self.cap())
        self.conductor('old', service_obj.SERVICE_VERSION - 1)
        self.assertEqual(rpcapi.SERVICE_VERSION_RPC[0][1], self.cap())

    def test_explicit_cap_is_kept(self):
        self.conf.config(conductor='1.0', group='upgrade_levels')
        self.assertEqual('1.0', self.cap())

    def test_every_rpc_version_is_mapped_in_order(self):
        versions = [v for _, v in rpcapi.SERVICE_VERSION_RPC]
        self.assertEqual(rpcapi.VERSION, versions[-1])
        services = [s for s, _ in rpcapi.SERVICE_VERSION_RPC]
        self.assertEqual(sorted(services), services)
        self.assertLessEqual(services[-1], service_obj.SERVICE_VERSION)
