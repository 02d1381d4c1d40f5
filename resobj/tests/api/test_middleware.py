"""Behind a TLS-terminating proxy the links point at the proxy.

With ``[oslo_middleware] enable_proxy_headers_parsing`` the scheme and
host of the ``Location`` a create answers come from the proxy's
``X-Forwarded-*`` (or ``Forwarded``) headers; without it they are
ignored, as a client could otherwise set them.
"""

import webob

from resobj.api import app as api_app
from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import base


class TestProxyHeaders(base.TestCase):

    def _location(self, parse_proxy_headers, **headers):
        fixture = self.useFixture(api_fixtures.AppFixture('sqlite'))
        fixture.conf.set_override('enable_proxy_headers_parsing',
                                  parse_proxy_headers,
                                  group='oslo_middleware')
        app = api_app.make_app(fixture.conf)
        headers.update({'X-Auth-Token': 'admin',
                        'OpenStack-API-Version': 'placement 1.20'})
        req = webob.Request.blank('/resource_providers', method='POST',
                                  headers=headers)
        req.content_type = 'application/json'
        req.json_body = {'name': 'behind-a-proxy'}
        resp = req.get_response(app)
        self.assertEqual(200, resp.status_int)
        uuid = resp.json['uuid']
        return resp.headers['Location'], uuid

    def test_forwarded_proto_and_host_make_the_location(self):
        location, uuid = self._location(
            True, **{'X-Forwarded-Proto': 'https',
                     'X-Forwarded-Host': 'placement.example.com'})
        self.assertEqual(
            'https://placement.example.com/resource_providers/' + uuid,
            location)

    def test_forwarded_header_makes_the_location(self):
        location, uuid = self._location(
            True, Forwarded='for=192.0.2.1;proto=https;'
                            'host=placement.example.com')
        self.assertEqual(
            'https://placement.example.com/resource_providers/' + uuid,
            location)

    def test_proxy_headers_are_ignored_unless_enabled(self):
        location, uuid = self._location(
            False, **{'X-Forwarded-Proto': 'https',
                      'X-Forwarded-Host': 'placement.example.com'})
        self.assertEqual('http://localhost/resource_providers/' + uuid,
                         location)
