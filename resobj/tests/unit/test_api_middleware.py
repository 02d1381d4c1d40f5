"""The standard middleware in front of the API: CORS, request id, proxy.

Only answers given before any database access are exercised here; the
``Location`` header behind a proxy is in ``resobj.tests.api.test_middleware``.
"""

import json
import os
import re
import subprocess
import sys

import fixtures
from oslo_config import cfg
import webob

from resobj.api import app as api_app
from resobj.api import middleware
from resobj.api import service
from resobj import context as resobj_context
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures

ORIGIN = 'https://dashboard.example.com'
REQUEST_ID = re.compile(
    r'^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')


class TestMiddleware(base.TestCase):

    def _app(self, auth_strategy='noauth2', **cors):
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        conf.config(group='cors', allowed_origin=[ORIGIN], **cors)
        conf.config(group='api', auth_strategy=auth_strategy)
        # Never contacted here: no request carries a token.
        resobj_fixtures.configure_keystone(conf, 'http://keystone.example.org')
        return api_app.Application(conf.conf)

    def _send(self, app, path, method='GET', **headers):
        return webob.Request.blank(path, method=method,
                                   headers=headers).get_response(app)

    def _preflight(self, app, origin, method='PUT', **headers):
        return self._send(app, '/resource_providers/x', 'OPTIONS',
                          Origin=origin,
                          **{'Access-Control-Request-Method': method},
                          **headers)

    def test_preflight_from_an_allowed_origin_needs_no_token(self):
        resp = self._preflight(
            self._app(), ORIGIN,
            **{'Access-Control-Request-Headers':
               'X-Auth-Token,OpenStack-API-Version,Content-Type'})
        self.assertEqual(200, resp.status_int)
        self.assertEqual(ORIGIN, resp.headers['Access-Control-Allow-Origin'])
        self.assertEqual('PUT', resp.headers['Access-Control-Allow-Methods'])
        self.assertEqual('X-Auth-Token,OpenStack-API-Version,Content-Type',
                         resp.headers['Access-Control-Allow-Headers'])
        self.assertEqual('true',
                         resp.headers['Access-Control-Allow-Credentials'])
        self.assertTrue(REQUEST_ID.match(
            resp.headers['x-openstack-request-id']))

    def test_preflight_needs_no_keystone_token_either(self):
        app = self._app('keystone')
        resp = self._preflight(app, ORIGIN)
        self.assertEqual(200, resp.status_int)
        self.assertEqual(ORIGIN, resp.headers['Access-Control-Allow-Origin'])
        # The actual request still needs one.
        resp = self._send(app, '/resource_providers', Origin=ORIGIN)
        self.assertEqual(401, resp.status_int)
        self.assertEqual(ORIGIN, resp.headers['Access-Control-Allow-Origin'])

    def test_preflight_from_another_origin_is_not_allowed(self):
        resp = self._preflight(self._app(), 'https://evil.example.com')
        self.assertNotIn('Access-Control-Allow-Origin', resp.headers)

    def test_preflight_with_a_header_not_allowed_is_not_allowed(self):
        resp = self._preflight(
            self._app(), ORIGIN,
            **{'Access-Control-Request-Headers': 'X-Not-Allowed'})
        self.assertNotIn('Access-Control-Allow-Origin', resp.headers)

    def test_response_to_an_allowed_origin_exposes_the_api_headers(self):
        # Even the 401 (no token): a browser client must read the error.
        resp = self._send(self._app(), '/resource_providers', Origin=ORIGIN)
        self.assertEqual(401, resp.status_int)
        self.assertEqual(ORIGIN, resp.headers['Access-Control-Allow-Origin'])
        exposed = resp.headers['Access-Control-Expose-Headers'].split(',')
        for header in ('X-Openstack-Request-Id', 'OpenStack-API-Version'):
            self.assertIn(header, exposed)
        self.assertEqual({'openstack-api-version', 'origin'},
                         {v.strip().lower()
                          for v in resp.headers['Vary'].split(',')})

    def test_operator_may_change_the_allowed_headers(self):
        app = self._app(allow_headers=['X-Auth-Token'])
        resp = self._preflight(
            app, ORIGIN,
            **{'Access-Control-Request-Headers': 'OpenStack-API-Version'})
        self.assertNotIn('Access-Control-Allow-Origin', resp.headers)

    def test_without_an_allowed_origin_no_cors_headers(self):
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        app = api_app.Application(conf.conf)
        resp = self._preflight(app, ORIGIN)
        self.assertNotIn('Access-Control-Allow-Origin', resp.headers)
        # Not answered before authentication, as a preflight is with
        # CORS.
        self.assertEqual(401, resp.status_int)
        # As placement, without CORS an OPTIONS is a method the route
        # does not have, whatever its headers.
        resp = self._preflight(app, ORIGIN, **{'X-Auth-Token': 'admin'})
        self.assertEqual(405, resp.status_int)
        self.assertEqual('GET, PUT, DELETE', resp.headers['Allow'])
        self.assertEqual(405, self._send(app, '/', 'OPTIONS').status_int)

    def test_request_id_is_returned_and_in_the_error_body(self):
        resp = self._send(self._app(), '/resource_providers')
        request_id = resp.headers['x-openstack-request-id']
        self.assertTrue(REQUEST_ID.match(request_id))
        body = json.loads(resp.body)
        self.assertEqual(request_id, body['errors'][0]['request_id'])
        # Only the one header, as placement answers.
        self.assertNotIn('openstack-request-id', resp.headers)

    def test_inbound_request_id_is_the_global_request_id(self):
        seen = {}

        def inner(environ, start_response):
            seen['ctx'] = resobj_context.RequestContext.from_environ(
                environ)
            return webob.Response()(environ, start_response)

        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        app = middleware.wrap(inner, conf.conf)
        inbound = 'req-11111111-2222-3333-4444-555555555555'
        resp = self._send(app, '/', **{'X-Openstack-Request-Id': inbound})
        self.assertNotEqual(inbound, resp.headers['x-openstack-request-id'])
        self.assertEqual(inbound, seen['ctx'].global_request_id)
        self.assertEqual(resp.headers['x-openstack-request-id'],
                         seen['ctx'].request_id)


class TestMiddlewareOptions(base.TestCase):

    def test_options_are_known_to_the_service(self):
        # [cors] and [oslo_middleware] in a configuration file used to be
        # refused as unknown options.
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'resobj.conf')
        with open(path, 'w') as f:
            f.write('[cors]\nallowed_origin = %s\n'
                    '[oslo_middleware]\n'
                    'enable_proxy_headers_parsing = true\n' % ORIGIN)
        conf = service.load_conf([path])
        self.assertEqual([ORIGIN], conf.cors.allowed_origin)
        self.assertTrue(conf.oslo_middleware.enable_proxy_headers_parsing)
        self.assertEqual(middleware.CORS_DEFAULTS['allow_headers'],
                         conf.cors.allow_headers)

    def test_listed_for_the_sample_configuration(self):
        groups = {group for group, _opts in middleware.list_opts()}
        self.assertEqual({'cors', 'oslo_middleware'}, groups)
        generator = os.path.join(os.path.dirname(__file__), '..', '..',
                                 '..', 'etc', 'resobj-config-generator.conf')
        with open(generator) as f:
            namespaces = re.findall(r'^namespace = (\S+)$', f.read(), re.M)
        self.assertIn('oslo.middleware.cors', namespaces)
        self.assertIn('oslo.middleware.http_proxy_to_wsgi', namespaces)

    def test_sample_configuration_shows_resobjs_cors_defaults(self):
        # In its own process: the generator applies the defaults hook
        # (setup.cfg's oslo.config.opts.defaults) to oslo.middleware's
        # option objects, process-wide.
        out = subprocess.run(
            [sys.executable, '-c',
             'from oslo_config import generator; generator.main()',
             '--namespace', 'resobj', '--namespace', 'oslo.middleware.cors',
             '--namespace', 'oslo.middleware.http_proxy_to_wsgi'],
            check=True, capture_output=True, text=True).stdout
        self.assertIn('#allow_headers = %s' % ','.join(
            middleware.CORS_DEFAULTS['allow_headers']), out)
        self.assertIn('#expose_headers = %s' % ','.join(
            middleware.CORS_DEFAULTS['expose_headers']), out)
        self.assertIn('#enable_proxy_headers_parsing = false', out)

    def test_defaults_are_per_configuration_object(self):
        conf = cfg.ConfigOpts()
        middleware.register_opts(conf)
        conf([], default_config_files=[])
        self.assertEqual(middleware.CORS_DEFAULTS['expose_headers'],
                         conf.cors.expose_headers)
        other = cfg.ConfigOpts()
        for group, opts in middleware.list_opts():
            other.register_opts(opts, group=group)
        other([], default_config_files=[])
        self.assertEqual([], other.cors.allow_headers)
