"""Authentication in front of the API: noauth2 and keystone.

Only paths that answer before any database access are exercised here;
the gabbi tests cover authenticated requests end to end.
"""

import json

import webob

from resobj.api import app as api_app
from resobj.api import service
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures

KEYSTONE = 'http://keystone.example.org/identity'


class TestAuth(base.TestCase):

    def _app(self, auth_strategy):
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        conf.config(group='api', auth_strategy=auth_strategy)
        # Where auth_token tells clients to get a token; never contacted
        # by these tests, which send none.
        conf.config(group='keystone_authtoken',
                    www_authenticate_uri=KEYSTONE)
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
