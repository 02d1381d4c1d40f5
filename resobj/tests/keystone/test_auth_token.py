"""resobj-api behind a real Keystone, configured as documented.

One Keystone (``server.KeystoneFixture``) and one ``resobj-api`` (one
worker, ``auth_strategy = keystone``, the service user ``placement``
with the ``service`` role in project ``service``) serve the whole
class. Keystone's identity endpoint for services (``internal``) goes
through a proxy the tests cut to make Keystone unreachable.
"""

import datetime
import json
import time
import uuid

import requests

from resobj.api import errors
from resobj.api import policy_matrix
from resobj.tests.api import policy_requests
from resobj.tests.api import server as api_server
from resobj.tests import base
from resobj.tests.keystone import server


def _utc(text):
    """A time Keystone wrote (UTC, with or without its Z)."""
    return datetime.datetime.fromisoformat(text.rstrip('Z')).replace(
        tzinfo=datetime.timezone.utc)


class TestAuthToken(base.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keystone = server.KeystoneFixture(server.venv())
        cls.keystone.setUp()
        try:
            cls._make_cloud()
            cls.api = api_server.ServerFixture(
                workers=1, extra_conf=server.service_conf(
                    cls.keystone, cls.service_password))
            cls.api.setUp()
        except BaseException:
            cls.keystone.cleanUp()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.api.cleanUp()
        finally:
            cls.keystone.cleanUp()
        super().tearDownClass()

    @classmethod
    def _make_cloud(cls):
        """Projects and users as a cloud has them, and their passwords."""
        ks = cls.keystone
        cls.service_password = uuid.uuid4().hex
        cls.passwords = {'admin': ks.admin_password,
                         'placement': cls.service_password}
        cls.users = {}
        ks.user('placement', cls.service_password, ks.project('service'),
                'service')
        cls.demo = ks.project('demo')
        other = ks.project('other')
        for name, project, role in [('demo-admin', cls.demo, 'admin'),
                                    ('demo-member', cls.demo, 'member'),
                                    ('demo-reader', cls.demo, 'reader'),
                                    ('other-reader', other, 'reader'),
                                    ('system-reader', None, None)]:
            cls.passwords[name] = uuid.uuid4().hex
            cls.users[name] = ks.user(name, cls.passwords[name], project,
                                      role)
        ks.grant_system(cls.users['system-reader'], 'reader')

    def _auth(self, user, project=None, system=False):
        """The body of a password authentication of ``user``."""
        auth = {'identity': {'methods': ['password'], 'password': {
            'user': {'name': user, 'domain': {'id': 'default'},
                     'password': self.passwords[user]}}}}
        if project:
            auth['scope'] = {'project': {'name': project,
                                         'domain': {'id': 'default'}}}
        elif system:
            auth['scope'] = {'system': {'all': True}}
        return auth

    def _token(self, user, project=None, system=False):
        return self.keystone.issue(self._auth(user, project, system))[0]

    def _get(self, path, token=None, version='placement 1.39'):
        headers = {'OpenStack-API-Version': version}
        if token is not None:
            headers['X-Auth-Token'] = token
        return requests.get(self.api.url + path, headers=headers,
                            timeout=120)

    def _error(self, resp, status, code=errors.UNDEFINED):
        self.assertEqual(status, resp.status_code, resp.text)
        error = resp.json()['errors'][0]
        self.assertEqual(status, error['status'])
        self.assertEqual(code, error['code'])
        return error['detail']

    def test_no_token_is_401(self):
        resp = self._get('/resource_providers')
        self.assertIn('requires authentication', self._error(resp, 401))
        # Where a client gets a token: Keystone's public endpoint.
        self.assertEqual('Keystone uri="%s"' % self.keystone.url,
                         resp.headers['WWW-Authenticate'])
        # The version document needs none.
        self.assertEqual(200, self._get('/').status_code)

    def test_bad_token_is_401(self):
        fernet_like = 'gAAAAABp' + uuid.uuid4().hex * 4
        revoked = self._token('demo-admin', project='demo')
        self.keystone.call('DELETE', '/auth/tokens', expect=204,
                           headers={'X-Subject-Token': revoked})
        for token in ('not-a-token', fernet_like, revoked):
            self.assertIn('requires authentication', self._error(
                self._get('/resource_providers', token), 401))

    def test_expired_token_is_401(self):
        # Keystone caps a token issued with an application credential at
        # the credential's expiry.
        user = self.users['demo-admin']
        admin_token = self._token('demo-admin', project='demo')
        # Long enough for the first request on a loaded machine; the
        # class's other tests run beside the CLI test meanwhile.
        lifetime = 20
        credential = self.keystone.application_credential(
            user, admin_token, lifetime)
        auth = {'identity': {'methods': ['application_credential'],
                             'application_credential': {
                                 'id': credential['id'],
                                 'secret': credential['secret']}}}
        used, body = self.keystone.issue(auth)
        unused, _ = self.keystone.issue(auth)
        expires = _utc(credential['expires_at'])
        self.assertLessEqual(_utc(body['expires_at']), expires)
        # Valid until then; resobj-api keeps what Keystone said of it.
        self.assertEqual(200, self._get('/resource_providers',
                                        used).status_code)
        time.sleep(max(0, (expires - datetime.datetime.now(
            datetime.timezone.utc)).total_seconds()) + 1)
        # The token it validated before, and one Keystone must refuse.
        for token in (used, unused):
            self.assertIn('requires authentication', self._error(
                self._get('/resource_providers', token), 401))

    def _persona(self, name, body):
        """The policy matrix's caller this token is."""
        project = body.get('project', {}).get('id')
        return policy_matrix.Persona(
            name, name, sorted(role['name'] for role in body['roles']),
            None if project is None else (
                policy_matrix.PROJECT if project == self.demo['id']
                else policy_matrix.OTHER_PROJECT),
            'all' if body.get('system') else None)

    def test_tokens_are_allowed_what_the_policy_says(self):
        # Every caller of the matrix Keystone can issue a token for (a
        # project token needs a role), each route once.
        tokens = {
            'admin': ('demo-admin', 'demo', False),
            'service': ('placement', 'service', False),
            'member': ('demo-member', 'demo', False),
            'reader': ('demo-reader', 'demo', False),
            'other_reader': ('other-reader', 'other', False),
            'system_admin': ('admin', None, True),
            'system_reader': ('system-reader', None, True),
        }
        self.assertEqual(
            {p.name for p in policy_matrix.PERSONAS} - {'no_role'},
            set(tokens))
        matrix = policy_matrix.Matrix()
        mode = policy_matrix.MODES[0]
        wrong = []
        for persona in policy_matrix.PERSONAS:
            if persona.name not in tokens:
                continue
            user, project, system = tokens[persona.name]
            token, body = self.keystone.issue(
                self._auth(user, project, system))
            caller = self._persona(persona.name, body)
            # Keystone's roles imply others (admin: manager, member,
            # reader; member: reader), so a member may read its project's
            # usages: the rules decide on the token's roles.
            self.assertLessEqual(set(persona.roles), set(caller.roles))
            self.assertEqual(persona.system_scope, caller.system_scope)
            for operation in policy_matrix.operations():
                allowed = matrix.allowed(operation, caller, mode)
                resp = self._send(operation, token)
                self.assertNotEqual(500, resp.status_code, resp.text)
                self.assertNotEqual(401, resp.status_code, resp.text)
                if allowed == (resp.status_code == 403):
                    wrong.append('%s as %s: %s, the rules %s it' % (
                        policy_requests.key(operation), persona.name,
                        resp.status_code, 'allow' if allowed else 'refuse'))
                elif not allowed and operation.rule not in resp.json()[
                        'errors'][0]['detail']:
                    wrong.append('%s as %s: %s does not name %s' % (
                        policy_requests.key(operation), persona.name,
                        resp.text, operation.rule))
        self.assertEqual([], wrong)

    def _send(self, operation, token):
        path = policy_requests.path(operation).replace(
            'project_id=' + policy_matrix.PROJECT,
            'project_id=' + self.demo['id'])
        data = policy_requests.body(operation)
        headers = {'X-Auth-Token': token,
                   'OpenStack-API-Version': policy_requests.VERSION,
                   'Accept': 'application/json'}
        if data is not None:
            headers['Content-Type'] = 'application/json'
        return requests.request(operation.method, self.api.url + path,
                                data=data, headers=headers, timeout=120)

    def test_system_scoped_token_is_403(self):
        token = self._token('admin', system=True)
        resp = self._get('/resource_providers', token)
        self.assertEqual('placement:resource_providers:list',
                         self._error(resp, 403).split('\n\n ')[-1])

    def test_service_users_own_token(self):
        token = self._token('placement', project='service')
        self.assertEqual(200, self._get('/resource_providers',
                                        token).status_code)
        # Only a service reshapes: past the policy, to the body's check.
        resp = requests.post(
            self.api.url + '/reshaper', data=json.dumps({}),
            headers={'X-Auth-Token': token,
                     'OpenStack-API-Version': 'placement 1.39',
                     'Content-Type': 'application/json'}, timeout=120)
        self.assertEqual(400, resp.status_code, resp.text)

    def test_keystone_unreachable_is_503(self):
        known = self._token('demo-admin', project='demo')
        self.assertEqual(200, self._get('/resource_providers',
                                        known).status_code)
        self.keystone.proxy.cut()
        try:
            new = self._token('demo-admin', project='demo')
            detail = self._error(
                self._get('/resource_providers', new,
                          version='placement 1.23'),
                503, errors.IDENTITY_UNAVAILABLE)
            self.assertIn('Keystone is unavailable', detail)
            # A token validated before is still known.
            self.assertEqual(200, self._get('/resource_providers',
                                            known).status_code)
        finally:
            self.keystone.proxy.restore()
        self.assertEqual(200, self._get('/resource_providers',
                                        new).status_code)

    def test_service_user_misconfigured_is_503(self):
        # Credentials Keystone refuses; a region the catalog lacks, so
        # no identity endpoint to validate tokens at.
        wrong = server.service_conf(self.keystone, 'wrong-password')
        nowhere = server.service_conf(
            self.keystone, self.service_password) + 'region_name = Nowhere\n'
        token = self._token('demo-admin', project='demo')
        for conf, logged in [
                (wrong, 'Identity server rejected'),
                (nowhere, 'Could not validate a token with Keystone')]:
            api = self.useFixture(api_server.ServerFixture(
                workers=1, extra_conf=conf))
            resp = requests.get(
                api.url + '/resource_providers', timeout=120, headers={
                    'X-Auth-Token': token,
                    'OpenStack-API-Version': 'placement 1.23'})
            self.assertIn('Keystone is unavailable', self._error(
                resp, 503, errors.IDENTITY_UNAVAILABLE), api.log())
            # The log says why.
            self.assertIn(logged, api.log())
