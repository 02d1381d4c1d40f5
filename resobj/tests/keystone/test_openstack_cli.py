"""The OpenStack CLI through Keystone, as a cloud's users run it.

resobj-api (``auth_strategy = keystone``) is registered in a real
Keystone's catalog as the ``placement`` service; ``openstack``
authenticates with a password, finds resobj-api in the catalog and
drives the lifecycle of ``resobj.tests.api.test_openstack_cli``. The
commands run in one process (``openstack_batch.py``), each as the
``openstack`` executable runs it, authenticating anew.
"""

import json
import os
import subprocess
import sys
import tempfile
import uuid

from resobj.tests.api import server as api_server
from resobj.tests.api import test_openstack_cli
from resobj.tests import base
from resobj.tests.keystone import server

BATCH = os.path.join(os.path.dirname(__file__), 'openstack_batch.py')


class TestOpenStackCLIThroughKeystone(test_openstack_cli.CLILifecycle,
                                      base.TestCase):

    def setUp(self):
        super().setUp()
        if test_openstack_cli.openstack_cli() is None:
            self.skipTest('the openstack CLI (python-openstackclient and '
                          'osc-placement) is not installed')
        self.keystone = self.useFixture(
            server.KeystoneFixture(server.venv()))
        password = uuid.uuid4().hex
        self.keystone.user('placement', password,
                           self.keystone.project('service'), 'service')
        self.server = self.useFixture(api_server.ServerFixture(
            workers=1,
            extra_conf=server.service_conf(self.keystone, password)))
        self.keystone.register('placement', 'placement', self.server.url)
        self._batch_errors = tempfile.TemporaryFile()
        self.addCleanup(self._batch_errors.close)
        self.batch = subprocess.Popen(
            [sys.executable, BATCH], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._batch_errors, text=True,
            env={k: v for k, v in os.environ.items()
                 if not k.startswith('OS_')})
        self.addCleanup(self._stop_batch)
        self.commands = 0

    def _stop_batch(self):
        self.batch.stdin.close()
        try:
            self.batch.wait(60)
        except subprocess.TimeoutExpired:
            self.batch.kill()
            self.batch.wait()
        self.batch.stdout.close()

    def test_lifecycle(self):
        before = self.keystone.answered('POST', '/v3/auth/tokens', 201)
        super().test_lifecycle()
        # Each command authenticated with the password, as the openstack
        # executable does: every one of them went through Keystone.
        self.assertGreaterEqual(
            self.keystone.answered('POST', '/v3/auth/tokens', 201) - before,
            self.commands)

    def run_openstack(self, argv):
        self.commands += 1
        self.batch.stdin.write(json.dumps(argv) + '\n')
        self.batch.stdin.flush()
        line = self.batch.stdout.readline()
        if not line:
            self._batch_errors.seek(0)
            self.fail('openstack_batch.py exited with %s:\n%s' % (
                self.batch.wait(), self._batch_errors.read()[-4000:]))
        result = json.loads(line)
        return result['status'], result['stdout'], result['stderr']

    def auth_args(self):
        # Nothing names resobj-api: the catalog does.
        return ['--os-auth-type', 'password',
                '--os-auth-url', self.keystone.url,
                '--os-username', 'admin',
                '--os-password', self.keystone.admin_password,
                '--os-project-name', 'admin',
                '--os-user-domain-name', 'Default',
                '--os-project-domain-name', 'Default',
                '--os-region-name', 'RegionOne',
                '--os-interface', 'public']
