"""Bad text and overlong lists at every route, on every backend.

The corpus walks the route table (``router.ROUTES``) and puts each bad
string (a NUL character, a lone surrogate, a trailing newline) in each
place a request can carry text: every URL variable, the name and the
value of every query parameter the route reads (and one it does not),
and every member name and string of a valid body for each route and
method that takes one. Every answer must be a 400 in the API's error
format, with the code of its kind and a detail that names where the
bad text was; none may be a 5xx. The bad text is the request's only
fault, so a route that let it through would answer otherwise.

Lists at the documented limits (``wellformed.MAX_ITEMS`` per list,
object and query string, ``MAX_BODY_ENTRIES`` per body,
``MAX_GROUPS`` request groups) must be served on every backend, and one
item more refused with a 400 that names the field.
"""

import json
import urllib.parse

from oslo_utils import uuidutils
import testscenarios
import webob

from resobj.api import errors
from resobj.api import microversion
from resobj.api import router
from resobj.api.schemas import allocation_candidate as ac_schema
from resobj.api.schemas import resource_provider as rp_schema
from resobj.api.schemas import trait as trait_schema
from resobj.api.schemas import usage as usage_schema
from resobj.api import wellformed
from resobj.tests.api import answers
from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import base

RP_UUID = uuidutils.generate_uuid()
NEW_UUID = uuidutils.generate_uuid()
CONSUMER_UUID = uuidutils.generate_uuid()
OTHER_CONSUMER = uuidutils.generate_uuid()
AGG_UUID = uuidutils.generate_uuid()
MAX = microversion.MAX
LATEST = str(MAX)

# Each bad text, made from a valid value so that it is the only fault.
BAD = {
    'NUL': lambda valid: valid[:1] + '\x00' + valid[1:],
    'lone surrogate': lambda valid: valid + '\ud800',
    'trailing newline': lambda valid: valid + '\n',
}

# A valid value of each URL variable, naming what the set-up made.
PATH_VALUES = {'uuid': RP_UUID, 'consumer_uuid': CONSUMER_UUID,
               'name': 'CUSTOM_BAD_INPUT', 'resource_class': 'VCPU'}

# A valid value of each query parameter the corpus sends.
QUERY_VALUES = {
    'name': 'in:CUSTOM_BAD_INPUT', 'uuid': RP_UUID,
    'member_of': 'in:' + AGG_UUID, 'resources': 'VCPU:1',
    'in_tree': RP_UUID, 'required': 'HW_CPU_X86_SSE',
    'project_id': 'project', 'user_id': 'user', 'consumer_type': 'INSTANCE',
    'associated': 'true', 'limit': '1', 'group_policy': 'none',
    'root_required': 'HW_CPU_X86_SSE', 'same_subtree': '_A',
    'resources1': 'VCPU:1', 'required_A': 'HW_CPU_X86_SSE',
    'member_of1': AGG_UUID, 'in_tree1': RP_UUID, 'other': 'x',
}


def _query_params(template):
    """The parameters a route reads, from its schemas; 'other' for all."""
    params = {
        '/resource_providers': list(rp_schema.list_query(MAX)['properties']),
        '/usages': list(usage_schema.query(MAX)['properties']),
        '/traits': list(trait_schema.LIST_QUERY['properties']),
        '/allocation_candidates': (
            list(ac_schema.query(MAX)['properties']) +
            ac_schema.group_keys(MAX) +
            ['resources1', 'required_A', 'member_of1', 'in_tree1']),
    }.get(template, [])
    return params + ['other']


_CONSUMER = {
    'allocations': {RP_UUID: {'resources': {'VCPU': 1}}},
    'project_id': 'project', 'user_id': 'user', 'consumer_generation': None,
    'consumer_type': 'INSTANCE', 'mappings': {'_A': [RP_UUID]}}

# (template, method): [(microversion, a valid body)], for every route
# and method that reads a body.
BODIES = {
    ('/resource_classes', 'POST'): [(LATEST, {'name': 'CUSTOM_NEW'})],
    # From 1.7 this PUT takes no body.
    ('/resource_classes/{name}', 'PUT'): [('1.6', {'name': 'CUSTOM_NEW'})],
    ('/resource_providers', 'POST'): [(LATEST, {
        'name': 'made', 'uuid': NEW_UUID, 'parent_provider_uuid': RP_UUID})],
    ('/resource_providers/{uuid}', 'PUT'): [(LATEST, {
        'name': 'renamed', 'parent_provider_uuid': RP_UUID})],
    ('/resource_providers/{uuid}/inventories', 'POST'): [(LATEST, {
        'resource_class': 'DISK_GB', 'total': 10})],
    ('/resource_providers/{uuid}/inventories', 'PUT'): [(LATEST, {
        'resource_provider_generation': 0,
        'inventories': {'VCPU': {'total': 8}}})],
    ('/resource_providers/{uuid}/inventories/{resource_class}', 'PUT'): [
        (LATEST, {'resource_provider_generation': 0, 'total': 8})],
    ('/resource_providers/{uuid}/aggregates', 'PUT'): [
        ('1.1', [AGG_UUID]),
        (LATEST, {'aggregates': [AGG_UUID],
                  'resource_provider_generation': 0})],
    ('/resource_providers/{uuid}/traits', 'PUT'): [(LATEST, {
        'traits': ['HW_CPU_X86_SSE'], 'resource_provider_generation': 0})],
    ('/allocations/{consumer_uuid}', 'PUT'): [
        ('1.0', {'allocations': [{'resource_provider': {'uuid': RP_UUID},
                                  'resources': {'VCPU': 1}}]}),
        (LATEST, _CONSUMER)],
    ('/allocations', 'POST'): [(LATEST, {OTHER_CONSUMER: _CONSUMER})],
    ('/reshaper', 'POST'): [(LATEST, {
        'inventories': {RP_UUID: {'resource_provider_generation': 0,
                                  'inventories': {'VCPU': {'total': 8}}}},
        'allocations': {OTHER_CONSUMER: _CONSUMER}})],
}
# Routes whose PUT or POST takes no body at the latest version.
BODILESS = {('/traits/{name}', 'PUT'), ('/resource_classes/{name}', 'PUT')}


def _quote(value):
    # A WSGI server's view of a lone surrogate in a URL: the bytes a
    # careless encoder writes for it, which are not UTF-8.
    return urllib.parse.quote(value.encode('utf-8', 'surrogatepass'),
                              safe='')


def _fill(template, **bad):
    path = template
    for var, value in dict(PATH_VALUES, **bad).items():
        path = path.replace('{%s}' % var, _quote(value))
    return path


def _positions(value, path=()):
    """(path, kind) of every member name and string of a JSON value."""
    if isinstance(value, str):
        yield path, 'value'
    elif isinstance(value, dict):
        for key, item in value.items():
            yield path + (key,), 'key'
            yield from _positions(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _positions(item, path + (index,))


def _spoil(body, path, kind, bad):
    """A copy of ``body`` with the name or string at ``path`` spoilt."""
    body = json.loads(json.dumps(body))
    parent = body
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if kind == 'key':
        parent[bad(last)] = parent.pop(last)
    else:
        parent[last] = bad(parent[last])
    return body


def _where(path):
    return '/'.join(str(step) for step in path)


# Test ids end in (sqlite), (postgresql) or (mysql), as every other
# backend test's do.
load_tests = testscenarios.load_tests_apply_scenarios


class TestBadInput(base.TestCase):

    scenarios = [(name, {'backend': name})
                 for name in ('sqlite', 'postgresql', 'mysql')]

    def setUp(self):
        super().setUp()
        # The gabbi files' fixture: it decides, as for them, whether the
        # backend's server is usable (a skip, or a failure when backends
        # are required), then makes a fresh database and application.
        fixture = api_fixtures.make_fixture(self.backend)()
        fixture.start_fixture()
        self.addCleanup(fixture.stop_fixture)
        self.app = api_fixtures.setup_app()
        self._json('PUT', '/resource_classes/CUSTOM_BAD_INPUT', None)
        self._json('PUT', '/traits/CUSTOM_BAD_INPUT', None)
        self._json('POST', '/resource_providers',
                   {'name': 'bad input', 'uuid': RP_UUID})
        self._json('PUT', '/resource_providers/%s/inventories' % RP_UUID,
                   {'resource_provider_generation': 0,
                    'inventories': {'VCPU': {'total': 2000}}})
        self._json('PUT', '/allocations/%s' % CONSUMER_UUID, _CONSUMER)

    def _call(self, method, path, query='', body=None, version=LATEST):
        req = webob.Request.blank(path, method=method)
        req.environ['QUERY_STRING'] = query
        req.headers['X-Auth-Token'] = 'admin'
        # The service role too: only a service gets past the reshaper's
        # policy to its body.
        req.headers['X-Roles'] = 'admin,service'
        req.headers['OpenStack-API-Version'] = 'placement %s' % version
        if body is not None:
            req.headers['Content-Type'] = 'application/json'
            # ensure_ascii: a lone surrogate travels as its \u escape.
            req.body = json.dumps(body).encode()
        return req.get_response(self.app)

    def _json(self, method, path, body, version=LATEST):
        resp = self._call(method, path, body=body, version=version)
        self.assertLess(resp.status_int, 300, resp.text)
        return resp

    def _refused(self, resp, method, request, code, names):
        """Whether ``resp`` is the 400 expected; the failure if not."""
        error = answers.assert_answer(self, resp, method, request)
        if resp.status_int != 400 or error.get('code', code) != code or \
                names not in error['detail']:
            return '%s -> %s %s' % (request, resp.status,
                                    error and error['detail'][-200:])
        return None

    def _assert_none(self, failures, sent):
        self.assertEqual([], failures, 'of %d requests' % sent)

    def _routes(self):
        # Not HEAD: its answer has no body to name the place (the route's
        # GET, which HEAD answers as, is checked).
        return [(template, method)
                for template, methods in router.ROUTES if template
                for method in methods if method != 'HEAD']

    def test_url_variables(self):
        failures, sent = [], 0
        for template, method in self._routes():
            for var in PATH_VALUES:
                if '{%s}' % var not in template:
                    continue
                for what, bad in BAD.items():
                    path = _fill(template, **{var: bad(PATH_VALUES[var])})
                    resp = self._call(method, path)
                    # A lone surrogate reaches the service as bytes that
                    # are not UTF-8: the path cannot be read at all.
                    names = ('request path' if what == 'lone surrogate'
                             else '{%s}' % var)
                    failures.append(self._refused(
                        resp, method, (method, path, what),
                        errors.BAD_CHARACTER, names))
                    sent += 1
        self._assert_none([f for f in failures if f], sent)

    def test_query_parameters(self):
        failures, sent = [], 0
        for template, method in self._routes():
            path = _fill(template)
            for param in _query_params(template):
                valid = QUERY_VALUES[param]
                for what, bad in BAD.items():
                    # Undecodable bytes have a code of their own: the
                    # query string's, as for any malformed value.
                    code = (errors.QUERY_BAD_VALUE
                            if what == 'lone surrogate'
                            else errors.BAD_CHARACTER)
                    for query, names in (
                            ('%s=%s' % (param, _quote(bad(valid))),
                             'parameter %s' % param),
                            ('%s=%s' % (_quote(bad(param)), _quote(valid)),
                             'query parameter name')):
                        resp = self._call(method, path, query)
                        failures.append(self._refused(
                            resp, method, (method, path, query), code,
                            names))
                        sent += 1
        self._assert_none([f for f in failures if f], sent)

    def test_bodies(self):
        takes_body = {(t, m) for t, m in self._routes()
                      if m in ('PUT', 'POST')} - BODILESS
        # A route that reads a body and is missing here fails the test.
        self.assertEqual(set(), takes_body - set(BODIES) - BODILESS)
        failures, sent = [], 0
        for (template, method), cases in sorted(BODIES.items()):
            path = _fill(template)
            for version, body in cases:
                for where, kind in _positions(body):
                    for what, bad in BAD.items():
                        spoilt = _spoil(body, where, kind, bad)
                        resp = self._call(method, path, body=spoilt,
                                          version=version)
                        names = (_where(where[:-1]) or 'top-level'
                                 if kind == 'key' else _where(where))
                        failures.append(self._refused(
                            resp, method,
                            (method, path, version, kind, where, what),
                            errors.BAD_CHARACTER, names))
                        sent += 1
        self._assert_none([f for f in failures if f], sent)

    def test_a_name_beyond_the_basic_multilingual_plane(self):
        # Four bytes of UTF-8: MariaDB needs a utf8mb4 connection.
        name = 'gpu \U0001F600 \U00020000'
        resp = self._json('POST', '/resource_providers', {'name': name})
        uuid = resp.json['uuid']
        resp = self._call('GET', '/resource_providers', 'name=' + _quote(
            name))
        self.assertEqual(
            [uuid], [rp['uuid'] for rp in resp.json['resource_providers']])
        self.assertEqual(name, resp.json['resource_providers'][0]['name'])

    def _served(self, method, path, query='', body=None):
        resp = self._call(method, path, query, body)
        self.assertLess(resp.status_int, 300, resp.text[:2000])

    def _too_many(self, method, path, names, query='', body=None):
        resp = self._call(method, path, query, body)
        error = answers.assert_answer(self, resp, method, (method, path))
        self.assertEqual(400, resp.status_int, resp.text[:2000])
        self.assertIn(names, error['detail'])
        # The detail says how many, not which: it stays short.
        self.assertLess(len(error['detail']), 1000)

    def _too_large(self, method, path, body):
        """413 before anything is parsed: over [api] max_request_body_size."""
        resp = self._call(method, path, '', body)
        error = answers.assert_answer(self, resp, method, (method, path))
        self.assertEqual(413, resp.status_int, resp.text[:2000])
        self.assertEqual('resobj.request.too_large', error['code'])

    def _generation(self):
        return self._call('GET', '/resource_providers/' + RP_UUID).json[
            'generation']

    def test_body_limits(self):
        limit = wellformed.MAX_ITEMS

        def aggregates(n):
            return {'aggregates': [uuidutils.generate_uuid()
                                   for _ in range(n)],
                    'resource_provider_generation': self._generation()}
        path = '/resource_providers/%s/aggregates' % RP_UUID
        self._served('PUT', path, body=aggregates(limit))
        self._too_many('PUT', path, 'list at aggregates has %d items'
                       % (limit + 1), body=aggregates(limit + 1))
        self._too_many(
            'PUT', '/resource_providers/%s/traits' % RP_UUID,
            'list at traits has 20000 items', body={
                'traits': ['CUSTOM_T%d' % i for i in range(20000)],
                'resource_provider_generation': self._generation()})
        # Longer lists are longer bodies than the application reads.
        self._too_large('PUT', path, body=aggregates(70000))
        self._too_large(
            'PUT', '/resource_providers/%s/traits' % RP_UUID, body={
                'traits': ['CUSTOM_T%d' % i for i in range(70000)],
                'resource_provider_generation': self._generation()})

        def consumer(providers):
            return dict(project_id='project', user_id='user',
                        consumer_generation=None, consumer_type='INSTANCE',
                        allocations={rp: {'resources': {'VCPU': 1}}
                                     for rp in providers})
        # A thousand consumers take a thousand VCPUs of the 2,000.
        self._served('POST', '/allocations', body={
            uuidutils.generate_uuid(): consumer([RP_UUID])
            for _ in range(limit)})
        self._too_many('POST', '/allocations',
                       'object at the top level has %d members' % (limit + 1),
                       body={uuidutils.generate_uuid(): consumer([RP_UUID])
                             for _ in range(limit + 1)})
        # Each object within its limit, the body beyond its own: each
        # provider is a value for the database to look up, and 70,000
        # (in a body over max_request_body_size now) are more than a
        # PostgreSQL statement can bind.
        for consumers, providers in ((4, 900), (12, 900)):
            self._too_many('POST', '/allocations', 'more than %d list items'
                           % wellformed.MAX_BODY_ENTRIES, body={
                               uuidutils.generate_uuid(): consumer(
                                   uuidutils.generate_uuid()
                                   for _ in range(providers))
                               for _ in range(consumers)})

    def test_query_limits(self):
        limit = wellformed.MAX_ITEMS

        def uuids(n):
            return ','.join(uuidutils.generate_uuid() for _ in range(n))
        self._served('GET', '/resource_providers',
                     'member_of=in:' + uuids(limit))
        for n in (limit + 1, 70000):
            self._too_many('GET', '/resource_providers',
                           '%d of them in member_of' % n,
                           'member_of=in:' + uuids(n))
        names = ','.join('CUSTOM_T%d' % i for i in range(limit + 1))
        self._served('GET', '/traits', 'name=in:' + names.rpartition(',')[0])
        self._too_many('GET', '/traits', 'in name', 'name=in:' + names)
        # Counted over every parameter: a thousand in all.
        self._served('GET', '/allocation_candidates',
                     'resources=VCPU:1&member_of=in:' + uuids(limit - 1))
        self._too_many('GET', '/allocation_candidates',
                       'lists %d items' % (limit + 1),
                       'resources=VCPU:1&member_of=in:' + uuids(limit))
        # 91 groups of a class and ten aggregates, and the policy: 1,002.
        self._too_many('GET', '/allocation_candidates',
                       'lists %d items' % (limit + 2),
                       '&'.join('resources%d=VCPU:1&member_of%d=in:%s'
                                % (i, i, uuids(10)) for i in range(1, 92)) +
                       '&group_policy=none')

        def groups(n):
            return '&'.join('resources%d=VCPU:1' % i
                            for i in range(1, n + 1)) + '&group_policy=none'
        self._served('GET', '/allocation_candidates',
                     groups(ac_schema.MAX_GROUPS))
        self._too_many('GET', '/allocation_candidates',
                       '%d request groups' % (ac_schema.MAX_GROUPS + 1),
                       groups(ac_schema.MAX_GROUPS + 1))
