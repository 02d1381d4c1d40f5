"""Authentication in front of the API: noauth2 and keystone.

Only paths that answer before any database access are exercised here;
the gabbi tests cover authenticated requests end to end, and
``resobj.tests.keystone`` resobj-api behind a real Keystone.
"""

import json
import logging
import socket
import time

import fixtures
from oslo_config import cfg
import webob

from resobj.api import app as api_app
from resobj.api import errors
from resobj.api import keystone
from resobj.api import service
from resobj import exception
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures

KEYSTONE = 'http://keystone.example.org/identity'


class TestAuth(base.TestCase):

    def _app(self, auth_strategy):
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        conf.config(group='api', auth_strategy=auth_strategy)
        # Never contacted by these tests, which send no token.
        resobj_fixtures.configure_keystone(conf, KEYSTONE)
        return api_app.Application(conf.conf)

    def _get(self, app, path, **headers):
        return webob.Request.blank(path, headers=headers).get_response(app)

    def _error(self, resp):
        body = json.loads(resp.body)
        self.assertEqual(['errors'], list(body))
        error = body['errors'][0]
        self.assertEqual(resp.status_int, error['status'])
        self.assertEqual(resp.headers['x-openstack-request-id'],
                         error['request_id'])
        return error

    def test_noauth2_root_needs_no_token(self):
        resp = self._get(self._app('noauth2'), '/')
        self.assertEqual(200, resp.status_int)
        self.assertEqual('1.39', resp.json['versions'][0]['max_version'])

    def test_noauth2_without_token_is_401_in_error_format(self):
        resp = self._get(self._app('noauth2'), '/resource_providers')
        self.assertEqual(401, resp.status_int)
        self.assertIn('X-Auth-Token', self._error(resp)['detail'])

    def test_keystone_root_needs_no_token(self):
        resp = self._get(self._app('keystone'), '/')
        self.assertEqual(200, resp.status_int)

    def test_keystone_without_token_is_401_in_error_format(self):
        resp = self._get(self._app('keystone'), '/resource_providers',
                         **{'OpenStack-API-Version': 'placement 1.23'})
        self.assertEqual(401, resp.status_int)
        error = self._error(resp)
        self.assertEqual('placement.undefined_code', error['code'])
        self.assertIn('requires authentication', error['detail'])
        self.assertEqual('placement 1.23',
                         resp.headers['OpenStack-API-Version'])
        self.assertEqual('Keystone uri="%s"' % KEYSTONE,
                         resp.headers['WWW-Authenticate'])


class TestKeystoneConfiguration(base.TestCase):
    """What resobj-api refuses to start with, and Keystone's absence."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        self.conf.config(group='api', auth_strategy='keystone')

    def _refused(self):
        exc = self.assertRaises(exception.ConfigurationError,
                                api_app.Application, self.conf.conf)
        self.assertNotIn('\n', str(exc))
        return str(exc)

    def test_no_auth_plugin_is_refused(self):
        # auth_token would start, then answer every token with a 500
        # (MissingAuthPlugin).
        self.conf.config(group='keystone_authtoken',
                         www_authenticate_uri=KEYSTONE)
        self.assertIn('set [keystone_authtoken] auth_type', self._refused())

    def test_password_plugin_without_auth_url_is_refused(self):
        resobj_fixtures.configure_keystone(self.conf, KEYSTONE)
        self.conf.conf.clear_override('auth_url', group='keystone_authtoken')
        self.assertEqual('Invalid configuration: [keystone_authtoken] '
                         'auth_type = password needs auth_url',
                         self._refused())

    def test_unknown_plugin_is_refused(self):
        self.conf.config(group='keystone_authtoken', auth_type='pasword')
        exc = self.assertRaises(exception.ConfigurationError,
                                keystone.register_plugin_opts,
                                self.conf.conf)
        self.assertIn("[keystone_authtoken] auth_type: keystoneauth has no "
                      "plugin 'pasword' (it has ", str(exc))
        self.assertIn(' password, ', str(exc))

    def test_plugin_options_in_the_auth_section(self):
        self.conf.config(group='keystone_authtoken',
                         auth_section='placement_user')
        self.conf.conf.register_opt(
            keystone.ks_loading.get_auth_common_conf_options()[0],
            group='placement_user')
        self.conf.config(group='placement_user', auth_type='password')
        keystone.register_plugin_opts(self.conf.conf)
        self.conf.config(group='placement_user', auth_url=KEYSTONE)
        # The plugin's options are read from that section only.
        self.assertRaises(cfg.NoSuchOptError, self.conf.config,
                          group='keystone_authtoken', auth_url=KEYSTONE)
        api_app.Application(self.conf.conf)

    def _unreachable_keystone_app(self):
        # A bound socket that does not listen: connections are refused.
        closed = socket.socket()
        self.addCleanup(closed.close)
        closed.bind(('127.0.0.1', 0))
        url = 'http://127.0.0.1:%d/v3' % closed.getsockname()[1]
        resobj_fixtures.configure_keystone(self.conf, url,
                                           http_request_max_retries=0)
        return api_app.Application(self.conf.conf)

    def _with_token(self, app, token='a-token'):
        return webob.Request.blank(
            '/resource_providers', headers={
                'X-Auth-Token': token,
                'OpenStack-API-Version': 'placement 1.23'}).get_response(app)

    def test_keystone_unreachable_is_one_warning(self):
        logs = self.useFixture(fixtures.FakeLogger(
            level=logging.INFO, format='%(levelname)s %(message)s'))
        # Long after any outage an earlier test of this process reported.
        self.useFixture(fixtures.MockPatch(
            'resobj.api.keystone.time.monotonic',
            return_value=time.monotonic() + 10 ** 6))
        app = self._unreachable_keystone_app()
        for i in range(3):
            self.assertEqual(503, self._with_token(app, 'token-%d' % i)
                             .status_int)
        lines = [line for line in logs.output.splitlines()
                 if 'validate' in line]
        self.assertEqual(1, len(lines), logs.output)
        self.assertIn('Keystone could not be asked to validate a token',
                      lines[0])
        self.assertTrue(lines[0].startswith('WARNING '), lines[0])
        self.assertIn('answer 503', lines[0])
        self.assertNotIn('Traceback', logs.output)

    def test_keystone_unreachable_is_503(self):
        app = self._unreachable_keystone_app()
        resp = self._with_token(app)
        self.assertEqual(503, resp.status_int)
        error = json.loads(resp.body)['errors'][0]
        self.assertEqual(errors.IDENTITY_UNAVAILABLE, error['code'])
        self.assertIn('Keystone is unavailable', error['detail'])
