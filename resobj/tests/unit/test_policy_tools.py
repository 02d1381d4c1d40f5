"""oslo.policy's command-line tools work with resobj's namespace.

``oslopolicy-sample-generator``, ``oslopolicy-policy-generator`` and
``oslopolicy-policy-upgrade`` find the rules through the
``oslo.policy.policies`` and ``oslo.policy.enforcer`` entry points
(``setup.cfg``); ``oslopolicy-checker`` then reads the generated file.
Each is run here through the same functions the commands call.
"""

import importlib.metadata
import os
import subprocess
import sys

import fixtures
from oslo_config import cfg
from oslo_policy import generator
import yaml

from resobj.api import policies
from resobj.tests import base


class TestPolicyTools(base.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path

    def _path(self, name):
        return os.path.join(self.dir, name)

    def test_entry_points_name_resobjs_functions(self):
        found = {(group, e.value)
                 for group in ('oslo.policy.policies', 'oslo.policy.enforcer')
                 for e in importlib.metadata.entry_points(group=group)
                 if e.name == 'resobj'}
        self.assertIn(('oslo.policy.policies',
                       'resobj.api.policies:list_rules'), found)
        self.assertIn(('oslo.policy.enforcer',
                       'resobj.api.policy:get_enforcer'), found)

    def test_sample_lists_every_rule_with_scope_and_deprecation(self):
        out = self._path('policy.yaml.sample')
        generator.generate_sample(
            ['--namespace', 'resobj', '--output-file', out],
            conf=cfg.ConfigOpts())
        with open(out) as f:
            text = f.read()
        for rule in policies.list_rules():
            self.assertIn('#"%s": "%s"' % (rule.name, rule.check_str), text)
        self.assertIn('"service_api":"role:admin" has been deprecated',
                      text)
        self.assertEqual(
            len([r for r in policies.list_rules() if r.scope_types]),
            text.count('Intended scope(s): project'))

    def test_effective_policy_holds_every_default(self):
        out = self._path('policy.yaml')
        # In its own process: the command parses the global cfg.CONF.
        subprocess.run(
            [sys.executable, '-c',
             'from oslo_policy import generator; generator.generate_policy()',
             '--namespace', 'resobj', '--output-file', out],
            check=True, capture_output=True)
        with open(out) as f:
            effective = yaml.safe_load(f)
        self.assertEqual({r.name: r.check_str
                          for r in policies.list_rules()}, effective)

    def test_upgrade_keeps_a_legacy_policy_file(self):
        # Legacy placement policy files override admin_api and use it;
        # nothing was renamed, so the upgrade keeps them as they are.
        old = self._path('old.yaml')
        with open(old, 'w') as f:
            f.write('"admin_api": "role:admin or role:operator"\n'
                    '"placement:traits:list": "rule:admin_api"\n')
        out = self._path('new.yaml')
        generator.upgrade_policy(
            ['--namespace', 'resobj', '--policy', old,
             '--output-file', out],
            conf=cfg.ConfigOpts())
        with open(out) as f:
            self.assertEqual(
                {'admin_api': 'role:admin or role:operator',
                 'placement:traits:list': 'rule:admin_api'},
                yaml.safe_load(f))
