"""The real OpenStack CLI (osc-placement) against a live resobj-api.

Starts ``resobj-api`` (one worker, a free port, SQLite in a temporary
state directory) and drives ``openstack`` with ``admin_token`` auth
through a provider's life: create, list, show, rename; inventory set,
list, show, delete; a resource class and a trait; provider traits;
allocations set, show, unset, delete; provider and project usages;
delete. Assertions are on the CLI's ``-f json`` output, so they hold
only if resobj-api answers as the clients expect.
``resobj.tests.keystone.test_openstack_cli`` drives the same lifecycle
with password auth through Keystone's catalog.

Skipped only when the ``openstack`` executable is not installed
(test-requirements.txt installs it).
"""

import json
import os
import shutil
import subprocess
import sys

from oslo_utils import uuidutils

from resobj.tests.api import server
from resobj.tests import base


def openstack_cli():
    # Beside this Python (the test's virtualenv) first, then on PATH.
    path = os.path.join(os.path.dirname(sys.executable), 'openstack')
    return path if os.access(path, os.X_OK) else shutil.which('openstack')


class CLILifecycle:
    """The lifecycle, for a test case with a ``server`` fixture.

    :meth:`auth_args` says how the CLI reaches resobj-api.
    """

    def auth_args(self):
        raise NotImplementedError

    def _server_log(self):
        return self.server.log()[-4000:]

    def run_openstack(self, argv):
        """``openstack ARGV``: (exit status, stdout, stderr)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        result = subprocess.run([self.openstack] + argv, capture_output=True,
                                text=True, env=env, timeout=120)
        return result.returncode, result.stdout, result.stderr

    def cli(self, *args, parse=True):
        """Run ``openstack ARGS`` (as admin, 1.39); its parsed JSON."""
        argv = self.auth_args() + [
            '--os-placement-api-version', '1.39'] + list(args)
        if parse:
            argv += ['-f', 'json']
        status, stdout, stderr = self.run_openstack(argv)
        self.assertEqual(0, status, '%s failed:\n%s%s\n%s' % (
            ' '.join(args), stdout, stderr, self._server_log()))
        return json.loads(stdout) if parse else stdout

    def test_lifecycle(self):
        consumer = uuidutils.generate_uuid()
        project = uuidutils.generate_uuid()
        user = uuidutils.generate_uuid()

        # Providers.
        rp = self.cli('resource', 'provider', 'create', 'cli-host')
        self.assertEqual('cli-host', rp['name'])
        self.assertEqual(0, rp['generation'])
        self.assertEqual(rp['uuid'], rp['root_provider_uuid'])
        uuid = rp['uuid']
        listed = self.cli('resource', 'provider', 'list')
        self.assertEqual([(uuid, 'cli-host')],
                         [(p['uuid'], p['name']) for p in listed])
        renamed = self.cli('resource', 'provider', 'set', uuid,
                           '--name', 'cli-host-renamed')
        self.assertEqual('cli-host-renamed', renamed['name'])
        shown = self.cli('resource', 'provider', 'show', uuid,
                         '--allocations')
        self.assertEqual('cli-host-renamed', shown['name'])
        self.assertEqual({}, shown['allocations'])

        # Inventory.
        inventory = self.cli(
            'resource', 'provider', 'inventory', 'set', uuid,
            '--resource', 'VCPU=8', '--resource', 'VCPU:allocation_ratio=2.0',
            '--resource', 'MEMORY_MB=4096', '--resource',
            'MEMORY_MB:max_unit=2048')
        by_class = {i['resource_class']: i for i in inventory}
        self.assertEqual({'VCPU', 'MEMORY_MB'}, set(by_class))
        self.assertEqual(2.0, by_class['VCPU']['allocation_ratio'])
        self.assertEqual(2048, by_class['MEMORY_MB']['max_unit'])
        listed = self.cli('resource', 'provider', 'inventory', 'list', uuid)
        self.assertEqual({'VCPU': (8, 0), 'MEMORY_MB': (4096, 0)},
                         {i['resource_class']: (i['total'], i['used'])
                          for i in listed})
        vcpu = self.cli('resource', 'provider', 'inventory', 'show', uuid,
                        'VCPU')
        self.assertEqual(8, vcpu['total'])
        self.assertEqual(2147483647, vcpu['max_unit'])

        # A custom resource class, a custom trait, provider traits.
        self.cli('resource', 'class', 'create', 'CUSTOM_CLI_GOLD',
                 parse=False)
        classes = [c['name'] for c in self.cli('resource', 'class', 'list')]
        self.assertIn('CUSTOM_CLI_GOLD', classes)
        self.assertIn('VCPU', classes)
        self.cli('trait', 'create', 'CUSTOM_CLI_FAST', parse=False)
        traits = [t['name'] for t in self.cli('trait', 'list')]
        self.assertIn('CUSTOM_CLI_FAST', traits)
        set_traits = self.cli('resource', 'provider', 'trait', 'set', uuid,
                              '--trait', 'CUSTOM_CLI_FAST',
                              '--trait', 'HW_CPU_X86_SSE')
        self.assertEqual(['CUSTOM_CLI_FAST', 'HW_CPU_X86_SSE'],
                         sorted(t['name'] for t in set_traits))
        listed = self.cli('resource', 'provider', 'trait', 'list', uuid)
        self.assertEqual(['CUSTOM_CLI_FAST', 'HW_CPU_X86_SSE'],
                         sorted(t['name'] for t in listed))

        # Allocations and usages.
        allocation = self.cli(
            'resource', 'provider', 'allocation', 'set', consumer,
            '--allocation', 'rp=%s,VCPU=2,MEMORY_MB=512' % uuid,
            '--project-id', project, '--user-id', user,
            '--consumer-type', 'INSTANCE')
        self.assertEqual(1, len(allocation))
        self.assertEqual(uuid, allocation[0]['resource_provider'])
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 512},
                         allocation[0]['resources'])
        self.assertEqual(project, allocation[0]['project_id'])
        self.assertEqual('INSTANCE', allocation[0]['consumer_type'])
        shown = self.cli('resource', 'provider', 'allocation', 'show',
                         consumer)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 512},
                         shown[0]['resources'])
        self.assertEqual(user, shown[0]['user_id'])
        usage = self.cli('resource', 'provider', 'usage', 'show', uuid)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 512},
                         {u['resource_class']: u['usage'] for u in usage})
        # At 1.38 project usages are grouped by consumer type.
        usage = self.cli('resource', 'usage', 'show', project)
        self.assertEqual(
            {'INSTANCE': {'consumer_count': 1, 'VCPU': 2, 'MEMORY_MB': 512}},
            {u['resource_class']: u['usage'] for u in usage})
        usage = self.cli('resource', 'usage', 'show', project,
                         '--user-id', uuidutils.generate_uuid())
        self.assertEqual([], usage)

        unset = self.cli('resource', 'provider', 'allocation', 'unset',
                         consumer, '--provider', uuid,
                         '--resource-class', 'MEMORY_MB')
        self.assertEqual({'VCPU': 2}, unset[0]['resources'])
        usage = self.cli('resource', 'provider', 'usage', 'show', uuid)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 0},
                         {u['resource_class']: u['usage'] for u in usage})
        self.cli('resource', 'provider', 'allocation', 'delete', consumer,
                 parse=False)
        self.assertEqual([], self.cli('resource', 'provider', 'allocation',
                                      'show', consumer))

        # Inventory delete, provider delete.
        self.cli('resource', 'provider', 'inventory', 'delete', uuid,
                 '--resource-class', 'MEMORY_MB', parse=False)
        listed = self.cli('resource', 'provider', 'inventory', 'list', uuid)
        self.assertEqual(['VCPU'], [i['resource_class'] for i in listed])
        self.cli('resource', 'provider', 'delete', uuid, parse=False)
        self.assertEqual([], self.cli('resource', 'provider', 'list'))


class TestOpenStackCLI(CLILifecycle, base.TestCase):
    """With the admin token of noauth2, at resobj-api's URL."""

    def setUp(self):
        super().setUp()
        self.openstack = openstack_cli()
        if self.openstack is None:
            self.skipTest('the openstack CLI (python-openstackclient and '
                          'osc-placement) is not installed')
        self.server = self.useFixture(server.ServerFixture(workers=1))

    def auth_args(self):
        return ['--os-auth-type', 'admin_token', '--os-token', 'admin',
                '--os-endpoint', self.server.url]
