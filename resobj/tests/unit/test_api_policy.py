"""Policy: placement's defaults, and an operator's file overriding them.

Authorisation runs before a handler touches the database, so refusals
are tested here without one; allowed requests are in the gabbi tests.
"""

import json
import os
import warnings

import fixtures
import webob

from resobj.api import app as api_app
from resobj.api import errors
from resobj.api import policies
from resobj.api import policy
from resobj.api import service
from resobj import context
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures


class TestPolicy(base.TestCase):

    def _app(self, policy_file=None, enforce_new_defaults=True):
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        if policy_file:
            conf.config(group='oslo_policy', policy_file=policy_file)
        conf.config(group='oslo_policy',
                    enforce_new_defaults=enforce_new_defaults)
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

    def test_system_scoped_admin_is_refused_naming_the_rule(self):
        resp = self._get(self._app(), '/resource_classes', 'admin',
                         **{'OpenStack-System-Scope': 'all'})
        self.assertEqual(403, resp.status_int)
        error = json.loads(resp.body)['errors'][0]
        # placement's detail for a token of the wrong scope.
        self.assertEqual('Access was denied to this resource.\n\n '
                         'placement:resource_classes:list', error['detail'])

    def test_system_scoped_admin_is_refused_in_legacy_mode_too(self):
        app = self._app(enforce_new_defaults=False)
        resp = self._get(app, '/resource_classes', 'admin',
                         **{'OpenStack-System-Scope': 'all'})
        self.assertEqual(403, resp.status_int)

    def _reshape(self, app, roles):
        req = webob.Request.blank('/reshaper', method='POST', headers={
            'X-Auth-Token': 'nova:service', 'X-Roles': roles,
            'OpenStack-API-Version': 'placement 1.39',
            'Content-Type': 'application/json'})
        req.body = b'{}'
        return req.get_response(app)

    def test_only_a_service_reshapes(self):
        app = self._app()
        self.assertEqual(403, self._reshape(app, 'admin').status_int)
        # Past the policy, the empty body is refused.
        self.assertEqual(400, self._reshape(app, 'service').status_int)

    def test_legacy_mode_lets_an_admin_reshape(self):
        app = self._app(enforce_new_defaults=False)
        self.assertEqual(400, self._reshape(app, 'admin').status_int)
        self.assertEqual(400, self._reshape(app, 'service').status_int)
        self.assertEqual(403, self._reshape(app, 'member').status_int)

    def test_noauth2_project_header_names_the_callers_project(self):
        # As placement's noauth2: X-Project-Id wins over the token's.
        resp = self._get(self._app(), '/usages?project_id=p1', 'alice:p1',
                         **{'X-Roles': 'reader', 'X-Project-Id': 'p2'})
        self.assertEqual(403, resp.status_int)

    def test_policy_file_overrides_a_default(self):
        path = os.path.join(self.useFixture(
            fixtures.TempDir()).path, 'policy.yaml')
        with open(path, 'w') as f:
            f.write('"placement:resource_classes:list": "!"\n')
        resp = self._get(self._app(path), '/resource_classes', 'admin')
        self.assertEqual(403, resp.status_int)


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class TestDecisionCache(base.TestCase):
    """Decisions are cached until the rules are next reloaded."""

    def test_cache_key_holds_every_current_credential(self):
        # A credential left out of the key could make two callers share
        # a decision; the deprecated aliases are derived from these.
        values = context.RequestContext(
            user_id='u', project_id='p', roles=['reader'],
            system_scope='all').to_policy_values()
        current = set()
        for key in values:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                values[key]
            if not any(issubclass(w.category, DeprecationWarning)
                       for w in caught):
                current.add(key)
        self.assertEqual(current, set(policy.CREDENTIAL_KEYS))

    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.useFixture(
            fixtures.TempDir()).path, 'policy.yaml')
        self._write('"placement:resource_classes:list": "role:admin"\n')
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        conf.config(group='oslo_policy', policy_file=self.path)
        self.clock = _Clock()
        self.policy = policy.Policy(conf.conf, clock=self.clock)

    def _write(self, text):
        with open(self.path, 'w') as f:
            f.write(text)
        # A new mtime even within the file system's time resolution.
        stat = os.stat(self.path)
        os.utime(self.path, (stat.st_atime + 10, stat.st_mtime + 10))

    def _allowed(self, ctx, rule='placement:resource_classes:list',
                 target=None):
        try:
            self.policy.authorize(ctx, rule, target)
        except errors.HTTPError as exc:
            self.assertEqual(403, exc.status)
            return False
        return True

    def test_same_question_is_answered_from_the_cache(self):
        admin = context.RequestContext(user_id='admin', project_id='p',
                                       roles=['admin'])
        calls = self.useFixture(fixtures.MockPatchObject(
            self.policy._enforcer, 'authorize',
            wraps=self.policy._enforcer.authorize)).mock
        self.assertTrue(self._allowed(admin))
        self.assertTrue(self._allowed(admin))
        self.assertEqual(1, calls.call_count)

    def test_credentials_and_target_are_part_of_the_question(self):
        admin = context.RequestContext(user_id='u', project_id='p',
                                       roles=['admin'])
        member = context.RequestContext(user_id='u', project_id='p',
                                        roles=['member'])
        self.assertTrue(self._allowed(admin))
        self.assertFalse(self._allowed(member))
        reader = context.RequestContext(user_id='r', project_id='p1',
                                        roles=['reader'])
        self.assertTrue(self._allowed(reader, 'placement:usages',
                                      {'project_id': 'p1'}))
        self.assertFalse(self._allowed(reader, 'placement:usages',
                                       {'project_id': 'p2'}))

    def test_edited_policy_file_applies_after_the_reload_interval(self):
        admin = context.RequestContext(user_id='admin', project_id='p',
                                       roles=['admin'])
        self.assertTrue(self._allowed(admin))
        self._write('"placement:resource_classes:list": "!"\n')
        self.assertTrue(self._allowed(admin))
        self.clock.now += policy.RELOAD_INTERVAL
        self.assertFalse(self._allowed(admin))
