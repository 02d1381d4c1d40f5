"""A uuid in a URL path is read by the rule of a uuid in a body.

The test walks the route table (``router.ROUTES``): at every route and
method with a uuid in its path, each form a body refuses (``{...}``,
``urn:uuid:``, misplaced dashes, a decimal digit of another script)
naming an existing provider or consumer is answered exactly as an
unknown uuid is, and changes nothing; the forms a body takes (lower or
upper case, dashed or not) name the object itself.
"""

import json
import urllib.parse

from oslo_utils import uuidutils
import webob

from resobj.api import microversion
from resobj.api import router
from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import base

# Digits 0 and 1 in both, for the other scripts' digits to stand in.
RP_UUID = '4a8ab0bc-1d2e-4f10-8a9b-0c1d2e3f4a51'
CONSUMER_UUID = '7f0e1d2c-3b4a-4c5d-9e0f-1a2b3c4d5e60'
AGG_UUID = uuidutils.generate_uuid()
LATEST = str(microversion.MAX)

# Forms of a uuid a body refuses, each naming ``u`` by Python's reading.
REFUSED = {
    'braces': lambda u: '{%s}' % u,
    'one brace': lambda u: u + '}',
    'urn': lambda u: 'urn:uuid:' + u,
    'uuid prefix': lambda u: 'uuid:' + u,
    'dash moved': lambda u: u[:7] + '-' + u[7:].replace('-', ''),
    'fullwidth digit': lambda u: u.replace('0', '\uff10', 1),
    'Arabic-Indic digit': lambda u: u.replace('1', '\u0661', 1),
}
# Forms a body takes.
ACCEPTED = {
    'upper case': str.upper,
    'no dashes': lambda u: u.replace('-', ''),
}

_CONSUMER = {
    'allocations': {RP_UUID: {'resources': {'VCPU': 1}}},
    'project_id': 'project', 'user_id': 'user', 'consumer_generation': 1,
    'consumer_type': 'INSTANCE'}

# A valid body for each route and method with a uuid in its path that
# reads one: with it, the uuid is the request's only possible fault.
BODIES = {
    ('/resource_providers/{uuid}', 'PUT'): {'name': 'renamed'},
    ('/resource_providers/{uuid}/inventories', 'POST'): {
        'resource_class': 'DISK_GB', 'total': 10},
    ('/resource_providers/{uuid}/inventories', 'PUT'): {
        'resource_provider_generation': 1,
        'inventories': {'VCPU': {'total': 8}}},
    ('/resource_providers/{uuid}/inventories/{resource_class}', 'PUT'): {
        'resource_provider_generation': 1, 'total': 8},
    ('/resource_providers/{uuid}/aggregates', 'PUT'): {
        'aggregates': [AGG_UUID], 'resource_provider_generation': 1},
    ('/resource_providers/{uuid}/traits', 'PUT'): {
        'traits': ['HW_CPU_X86_SSE'], 'resource_provider_generation': 1},
    ('/allocations/{consumer_uuid}', 'PUT'): _CONSUMER,
}
UUID_VARS = {'uuid': RP_UUID, 'consumer_uuid': CONSUMER_UUID}
OTHER_VARS = {'resource_class': 'VCPU', 'name': 'CUSTOM_PATH'}


def _path(template, **values):
    for var, value in dict(OTHER_VARS, **values).items():
        template = template.replace(
            '{%s}' % var, urllib.parse.quote(value.encode(), safe=''))
    return template


class TestPathUuids(base.TestCase):

    def setUp(self):
        super().setUp()
        fixture = api_fixtures.make_fixture('sqlite')()
        fixture.start_fixture()
        self.addCleanup(fixture.stop_fixture)
        self.app = api_fixtures.setup_app()
        self._ok('POST', '/resource_providers',
                 {'name': 'paths', 'uuid': RP_UUID})
        self._ok('PUT', '/resource_providers/%s/inventories' % RP_UUID,
                 {'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': 100}}})
        self._ok('PUT', '/allocations/%s' % CONSUMER_UUID,
                 dict(_CONSUMER, consumer_generation=None))

    def _call(self, method, path, body=None):
        req = webob.Request.blank(path, method=method)
        req.headers['X-Auth-Token'] = 'admin'
        req.headers['OpenStack-API-Version'] = 'placement ' + LATEST
        if body is not None:
            req.headers['Content-Type'] = 'application/json'
            req.body = json.dumps(body).encode()
        return req.get_response(self.app)

    def _ok(self, method, path, body=None):
        resp = self._call(method, path, body)
        self.assertLess(resp.status_int, 300, resp.text)
        return resp

    def _state(self):
        return [self._ok('GET', path).json_body for path in (
            '/resource_providers/%s' % RP_UUID,
            '/resource_providers/%s/inventories' % RP_UUID,
            '/resource_providers/%s/aggregates' % RP_UUID,
            '/resource_providers/%s/traits' % RP_UUID,
            '/allocations/%s' % CONSUMER_UUID)]

    def _uuid_routes(self):
        """(template, method, uuid variable) of every such route."""
        found = []
        for template, methods in router.ROUTES:
            names = [var for var in UUID_VARS if '{%s}' % var in template]
            for method in methods:
                found.extend((template, method, var) for var in names)
        return found

    def _answer(self, resp, sent):
        """Status and body, the uuid ``sent`` in it made a placeholder.

        An error names the uuid as the request gave it.
        """
        body = resp.json_body if resp.body else None
        for error in (body or {}).get('errors', []):
            # It differs from one answer to the next.
            error.pop('request_id', None)
        return resp.status_int, json.dumps(
            body, ensure_ascii=False, sort_keys=True).replace(sent, '<uuid>')

    def test_every_route_refuses_what_a_body_refuses(self):
        routes = self._uuid_routes()
        # The table has both kinds; a new route with a uuid in its path
        # and a body must come with one here.
        self.assertEqual({'uuid', 'consumer_uuid'},
                         {var for _, _, var in routes})
        self.assertEqual(set(), {(t, m) for t, m, _ in routes
                                 if m in ('PUT', 'POST')} - set(BODIES))
        before = self._state()
        wrong = []
        for template, method, var in routes:
            body = BODIES.get((template, method))
            other = uuidutils.generate_uuid()
            unknown = self._answer(self._call(method, _path(
                template, **{var: other}), body), other)
            for what, form in REFUSED.items():
                sent = form(UUID_VARS[var])
                got = self._answer(self._call(
                    method, _path(template, **{var: sent}), body), sent)
                if (template, method) == ('/allocations/{consumer_uuid}',
                                          'PUT'):
                    # A new consumer's uuid is written: a malformed one
                    # is a 400, as placement's.
                    ok = got[0] == 400 and 'Malformed consumer_uuid' in got[1]
                else:
                    ok = got == unknown
                if not ok:
                    wrong.append((method, template, what, got[0],
                                  unknown[0]))
        self.assertEqual([], wrong)
        self.assertEqual(before, self._state())

    def test_every_route_reads_the_forms_a_body_takes(self):
        reads = [(t, m, var) for t, m, var in self._uuid_routes()
                 if m == 'GET']
        self.assertTrue(reads)
        wrong = []
        for template, method, var in reads:
            canonical = self._answer(self._call(method, _path(
                template, **{var: UUID_VARS[var]})), UUID_VARS[var])
            self.assertEqual(200, canonical[0], (template, canonical))
            for what, form in ACCEPTED.items():
                got = self._answer(self._call(method, _path(
                    template, **{var: form(UUID_VARS[var])})),
                    UUID_VARS[var])
                if got != canonical:
                    wrong.append((template, what, got))
        self.assertEqual([], wrong)
