"""Policy: placement's defaults, and an operator's file overriding them.

Authorisation runs before a handler touches the database, so refusals
are tested here without one; allowed requests are in the gabbi tests.
"""

import json
import os

import fixtures
import webob

from resobj.api import app as api_app
from resobj.api import policies
from resobj.api import service
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures


class TestPolicy(base.TestCase):

    def _app(self, policy_file=None):
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        if policy_file:
            conf.config(group='oslo_policy', policy_file=policy_file)
        return api_app.Application(conf.conf)

    def _get(self, app, path, token, **headers):
        headers.update({'X-Auth-Token': token,
                        'OpenStack-API-Version': 'placement 1.39'})
        return webob.Request.blank(path, headers=headers).get_response(app)

    def test_rule_names_are_unique_and_documented(self):
        rules = policies.list_rules()
        names = [rule.name for rule in rules]
        self.assertEqual(len(names), len(set(names)))
        self.assertIn('placement:allocations:update', names)
        self.assertIn('placement:usages', names)
        for rule in rules:
            self.assertTrue(rule.description, rule.name)

    def test_non_admin_is_refused(self):
        resp = self._get(self._app(), '/resource_classes', 'alice:p1')
        self.assertEqual(403, resp.status_int)
        error = json.loads(resp.body)['errors'][0]
        self.assertIn('placement:resource_classes:list', error['detail'])

    def test_reader_may_not_read_another_projects_usages(self):
        resp = self._get(self._app(), '/usages?project_id=p2', 'alice:p1',
                         **{'X-Roles': 'reader'})
        self.assertEqual(403, resp.status_int)

    def test_policy_file_overrides_a_default(self):
        path = os.path.join(self.useFixture(
            fixtures.TempDir()).path, 'policy.yaml')
        with open(path, 'w') as f:
            f.write('"placement:resource_classes:list": "!"\n')
        resp = self._get(self._app(path), '/resource_classes', 'admin')
        self.assertEqual(403, resp.status_int)
