"""use_conductor: what a node without database access is told at start."""

import logging
import os

import fixtures
from oslo_config import cfg

from resobj.conductor import api
from resobj import conf as resobj_conf
from resobj.objects import base as objects_base
from resobj import rpc
from resobj.tests import base


class TestUseConductor(base.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.logs = self.useFixture(fixtures.FakeLogger(
            name='resobj.conductor.api', level=logging.WARNING))
        self.addCleanup(setattr, objects_base.ResobjObject,
                        'indirection_api',
                        objects_base.ResobjObject.indirection_api)

    def use_conductor(self, text):
        path = os.path.join(self.dir, 'node.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\ntransport_url = fake:/\n'
                    '[conductor]\nuse_local = false\n' + text)
        conf = cfg.ConfigOpts()
        resobj_conf.register_opts(conf)
        rpc.register_opts(conf)
        conf(['--config-file', path], project='resobj',
             default_config_files=[])
        transport = rpc.get_transport(conf)
        self.addCleanup(transport.cleanup)
        self.addCleanup(api.use_conductor(conf, transport))

    def test_database_settings_are_warned_of_once(self):
        self.use_conductor('[database]\nconnection = sqlite:////x.db\n'
                           'max_retries = 3\n')
        lines = self.logs.output.splitlines()
        self.assertEqual(1, len(lines), lines)
        self.assertIn('[database] options set but not used (connection, '
                      'max_retries)', lines[0])
        self.assertIn('use_local = false', lines[0])

    def test_no_database_settings_no_warning(self):
        self.use_conductor('')
        self.assertEqual('', self.logs.output)
