"""Property: no request makes resobj-api answer 5xx or a malformed error.

Hypothesis throws requests at every route and method of the route table
(and at methods a route lacks): path variables valid, unknown or garbage;
bodies of random JSON (wrong types, huge and non-finite numbers, members
clients send and ones they do not), deeply nested, invalid UTF-8 or not
JSON at all; query strings and the version, content-type and accept
headers, valid or garbage. Each answer must be below 500, and every 4xx
must carry the error document (see ``answers.assert_answer``).

The database is one SQLite file per test with a provider that has
inventory, traits, an aggregate and an allocation, so requests that get
past validation reach the object and database layers.
"""

import json
import os
import urllib.parse

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from oslo_utils import uuidutils
import webob

from resobj.api import router
from resobj.tests.api import answers
from resobj.tests.api import fixtures as api_fixtures
from resobj.tests import base

# RESOBJ_FUZZ_SCALE=10 runs ten times the examples (a longer hunt).
_SCALE = float(os.environ.get('RESOBJ_FUZZ_SCALE', '1'))


def _examples(count):
    return max(1, int(count * _SCALE))


RP_UUID = uuidutils.generate_uuid()
CHILD_UUID = uuidutils.generate_uuid()
SHARED_UUID = uuidutils.generate_uuid()
CONSUMER_UUID = uuidutils.generate_uuid()
AGG_UUID = uuidutils.generate_uuid()
UNKNOWN_UUID = uuidutils.generate_uuid()

_METHODS = ('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS')
_ROUTES = [(template, method)
           for template, methods in router.ROUTES
           for method in methods if template]
_OTHER_METHODS = [(template, method)
                  for template, methods in router.ROUTES
                  for method in _METHODS if template and method not in methods]

_ascii = st.text(st.characters(min_codepoint=32, max_codepoint=126),
                 max_size=40)
_garbage_text = st.one_of(
    _ascii, st.text(max_size=20),
    st.sampled_from(['', ' ', 'null', '%ff', '%00', '..', 'in:', '!',
                     'startswith:', 'a' * 300, '\u2603', ',,,']))

_NAMES = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_FUZZ', 'CUSTOM_NEW',
          'HW_CPU_X86_SSE', 'CUSTOM_FUZZ_TRAIT', 'CUSTOM_NOPE', 'INSTANCE']
_UUIDS = [RP_UUID, CHILD_UUID, CONSUMER_UUID, AGG_UUID, UNKNOWN_UUID]
_KEYS = ['name', 'uuid', 'parent_provider_uuid', 'resource_class', 'total',
         'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio',
         'resource_provider_generation', 'inventories', 'allocations',
         'project_id', 'user_id', 'consumer_generation', 'consumer_type',
         'mappings', 'traits', 'aggregates', 'resources', 'generation',
         'resource_provider', '_A'] + _NAMES + _UUIDS

_scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-3, max_value=10),
    st.integers(),
    st.sampled_from([0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 63, -2 ** 63,
                     10 ** 40]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(_NAMES + _UUIDS), _garbage_text)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(_KEYS), _ascii), inner,
                        max_size=6)),
    max_leaves=25)


def _encode(value):
    # allow_nan: NaN and Infinity are what a careless client sends.
    return json.dumps(value, allow_nan=True).encode()


_bodies = st.one_of(
    st.none(),
    _json_values.map(_encode),
    st.integers(min_value=1, max_value=100000).map(
        lambda n: b'[' * n + b']' * n),
    st.integers(min_value=1, max_value=100000).map(
        lambda n: b'{"a":' * n + b'1' + b'}' * n),
    st.binary(max_size=50),
    st.sampled_from([b'\xff\xfe{}', b'{"name": "\xc3\x28"}', b'not json',
                     b'{', b'"string"', b'1e999999', b'-0', b'[]', b'{}',
                     b'{"name": "x", "name": "y"}']),
    st.text(max_size=50).map(lambda t: t.encode('utf-8')))


def _path_value(template_var):
    valid = {
        'uuid': [RP_UUID, CHILD_UUID, UNKNOWN_UUID, RP_UUID.upper(),
                 RP_UUID.replace('-', '')],
        'consumer_uuid': [CONSUMER_UUID, UNKNOWN_UUID],
        'name': _NAMES,
        'resource_class': ['VCPU', 'DISK_GB', 'MEMORY_MB', 'CUSTOM_NOPE'],
    }[template_var]
    return st.one_of(st.sampled_from(valid), st.sampled_from(valid),
                     st.sampled_from(valid), _garbage_text)


def _quote(value):
    # Mostly a well-formed URL; sometimes the raw (maybe invalid) escapes.
    if '%' in value and len(value) < 5 and value.isascii():
        return value
    return urllib.parse.quote(value, safe='') or 'x'


@st.composite
def _paths(draw):
    # Mostly methods the route serves; sometimes one it does not (405).
    template, method = draw(st.one_of(
        st.sampled_from(_ROUTES), st.sampled_from(_ROUTES),
        st.sampled_from(_ROUTES), st.sampled_from(_OTHER_METHODS)))
    path = template
    for var in ('consumer_uuid', 'resource_class', 'uuid', 'name'):
        if '{%s}' % var in path:
            path = path.replace('{%s}' % var,
                                _quote(draw(_path_value(var))))
    return path, method


_INVENTORY = {'total': 10, 'reserved': 0, 'min_unit': 1, 'max_unit': 10,
              'step_size': 1, 'allocation_ratio': 1.0}
_CONSUMER = {
    'allocations': {RP_UUID: {'resources': {'VCPU': 1, 'CUSTOM_FUZZ': 1}},
                    CHILD_UUID: {'resources': {'DISK_GB': 1}}},
    'project_id': 'fuzz-project', 'user_id': 'fuzz-user',
    'consumer_generation': 1, 'consumer_type': 'INSTANCE',
    'mappings': {'_A': [RP_UUID]}}
# A valid body per route and method, which the fuzzer then mutates, so
# requests get past the schema into the handlers and the database.
_VALID_BODIES = {
    ('/resource_classes', 'POST'): {'name': 'CUSTOM_MADE'},
    ('/resource_classes/{name}', 'PUT'): {'name': 'CUSTOM_RENAMED'},
    ('/resource_providers', 'POST'): {
        'name': 'made', 'uuid': UNKNOWN_UUID,
        'parent_provider_uuid': RP_UUID},
    ('/resource_providers/{uuid}', 'PUT'): {
        'name': 'renamed', 'parent_provider_uuid': None},
    ('/resource_providers/{uuid}/inventories', 'POST'): dict(
        _INVENTORY, resource_class='DISK_GB'),
    ('/resource_providers/{uuid}/inventories', 'PUT'): {
        'resource_provider_generation': 4,
        'inventories': {'VCPU': dict(_INVENTORY, total=32),
                        'MEMORY_MB': {'total': 65536}}},
    ('/resource_providers/{uuid}/inventories/{resource_class}', 'PUT'): dict(
        _INVENTORY, resource_provider_generation=4),
    ('/resource_providers/{uuid}/aggregates', 'PUT'): {
        'aggregates': [AGG_UUID, UNKNOWN_UUID],
        'resource_provider_generation': 4},
    ('/resource_providers/{uuid}/traits', 'PUT'): {
        'traits': ['CUSTOM_FUZZ_TRAIT', 'HW_CPU_X86_SSE'],
        'resource_provider_generation': 4},
    ('/allocations/{consumer_uuid}', 'PUT'): _CONSUMER,
    ('/allocations', 'POST'): {CONSUMER_UUID: _CONSUMER,
                               UNKNOWN_UUID: dict(_CONSUMER,
                                                  consumer_generation=None)},
    ('/reshaper', 'POST'): {
        'inventories': {RP_UUID: {
            'resource_provider_generation': 4,
            'inventories': {'VCPU': {'total': 32}}}},
        'allocations': {CONSUMER_UUID: _CONSUMER}},
}


def _leaves(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, path + (index,))


@st.composite
def _mutated(draw):
    """(path, method, body): a valid body with one part changed."""
    template, method = draw(st.sampled_from(sorted(_VALID_BODIES)))
    body = json.loads(json.dumps(_VALID_BODIES[template, method]))
    paths = list(_leaves(body))
    where = draw(st.sampled_from(paths))
    action = draw(st.sampled_from(['replace', 'replace', 'delete', 'add']))
    if where and action == 'delete':
        parent = body
        for step in where[:-1]:
            parent = parent[step]
        del parent[where[-1]]
    elif where and action == 'replace':
        parent = body
        for step in where[:-1]:
            parent = parent[step]
        parent[where[-1]] = draw(_json_values)
    elif action == 'add':
        target = body
        for step in where:
            target = target[step]
        if isinstance(target, dict):
            target[draw(st.sampled_from(_KEYS))] = draw(_json_values)
        elif isinstance(target, list):
            target.append(draw(_json_values))
    path = template
    for var in ('consumer_uuid', 'resource_class', 'uuid', 'name'):
        if '{%s}' % var in path:
            path = path.replace('{%s}' % var,
                                _quote(draw(_path_value(var))))
    return path, method, _encode(body)


_QUERY_KEYS = ['name', 'uuid', 'member_of', 'resources', 'in_tree',
               'required', 'project_id', 'user_id', 'consumer_type',
               'associated', 'limit', 'group_policy']
_query_values = st.one_of(
    st.sampled_from(
        _NAMES + _UUIDS + ['VCPU:1', 'VCPU:1,DISK_GB:2', 'VCPU:0',
                           'VCPU:99999999999999999999', 'in:' + AGG_UUID,
                           '!' + AGG_UUID, '!in:%s,%s' % (AGG_UUID, RP_UUID),
                           'in:HW_CPU_X86_SSE,CUSTOM_FUZZ_TRAIT',
                           '!HW_CPU_X86_SSE', 'startswith:CUSTOM', 'true',
                           'all', 'unknown', 'fuzz-project']),
    _garbage_text)


@st.composite
def _queries(draw):
    pairs = draw(st.lists(st.tuples(
        st.one_of(st.sampled_from(_QUERY_KEYS), _ascii), _query_values),
        max_size=4))
    if not pairs:
        return ''
    if draw(st.booleans()):
        return urllib.parse.urlencode(pairs)
    # Raw, possibly invalid percent-escapes; non-ASCII as a WSGI server
    # passes it on: the UTF-8 bytes, each as one latin-1 character.
    raw = '&'.join('%s=%s' % (k.replace('&', ''), v.replace('&', ''))
                   for k, v in pairs)
    return raw.encode('utf-8', 'surrogatepass').decode('latin-1')


# GET /allocation_candidates: its parameters (suffixed too), with values
# that mostly parse, so requests reach the search.
_AC_KEYS = ['resources', 'resources1', 'resources2', 'resources_A',
            'required', 'required1', 'required_A', 'member_of',
            'member_of1', 'in_tree', 'in_tree1', 'limit', 'group_policy',
            'root_required', 'same_subtree', 'resources1a', 'resources0',
            'resources_' + 'A' * 65]
_AC_COMMON_KEYS = ['required', 'member_of', 'limit', 'in_tree',
                   'resources1', 'group_policy']
_AC_CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_FUZZ', 'VGPU']
_ac_classes = st.one_of(st.sampled_from(_AC_CLASSES),
                        st.sampled_from(_AC_CLASSES + [
                            'CUSTOM_NOPE', 'vcpu', '', 'VCPU:1']))
_ac_amounts = st.one_of(
    st.integers(min_value=1, max_value=40).map(str),
    st.integers(min_value=1, max_value=4).map(str),
    st.sampled_from(['0', '-1', '2147483647', '2147483648', '1' * 20,
                     ' 1', '1.5']),
    _garbage_text)
_ac_resources = st.one_of(
    st.lists(st.tuples(_ac_classes, _ac_amounts).map(':'.join),
             min_size=1, max_size=4).map(','.join),
    st.lists(st.tuples(st.sampled_from(_AC_CLASSES),
                       st.integers(1, 8).map(str)).map(':'.join),
             min_size=1, max_size=3, unique_by=lambda s: s.split(':')[0]
             ).map(','.join))
_ac_traits = st.lists(st.sampled_from(
    ['CUSTOM_FUZZ_TRAIT', 'HW_CPU_X86_SSE', 'MISC_SHARES_VIA_AGGREGATE',
     '!CUSTOM_FUZZ_TRAIT', '!HW_CPU_X86_SSE', 'CUSTOM_NOPE', 'in:', '!',
     'in:HW_CPU_X86_SSE', 'lower']), min_size=1, max_size=3).map(','.join)
_ac_aggregates = st.sampled_from(
    [AGG_UUID, UNKNOWN_UUID, '!' + AGG_UUID,
     'in:%s,%s' % (AGG_UUID, UNKNOWN_UUID), '!in:' + AGG_UUID,
     AGG_UUID.upper(), AGG_UUID + ',' + UNKNOWN_UUID,
     'in:', 'not-a-uuid'])
_ac_values = {
    'resources': _ac_resources, 'required': _ac_traits,
    'member_of': _ac_aggregates,
    'in_tree': st.sampled_from([RP_UUID, CHILD_UUID, SHARED_UUID,
                                UNKNOWN_UUID, 'x', '']),
    'limit': st.one_of(st.sampled_from(['1', '2', '0', '-1', 'abc', '',
                                        '99999999999999999999']),
                       st.integers(min_value=1, max_value=5).map(str)),
    'group_policy': st.sampled_from(['none', 'isolate', 'all', '']),
    'root_required': _ac_traits,
    'same_subtree': st.sampled_from(['_A', '_A,1', '1', '']),
}


@st.composite
def _ac_queries(draw):
    """A query string for GET /allocation_candidates."""
    pairs = [('resources', draw(_ac_resources))] if draw(
        st.integers(0, 3)) else []
    keys = st.one_of(st.sampled_from(_AC_COMMON_KEYS),
                     st.sampled_from(_AC_COMMON_KEYS),
                     st.sampled_from(_AC_KEYS))
    for key in draw(st.lists(keys, max_size=3)):
        base = next((name for name in _ac_values if key.startswith(name)),
                    None)
        value = draw(st.one_of(_ac_values[base], _ac_values[base],
                               _ac_values[base], _garbage_text)
                     if base else _garbage_text)
        pairs.append((key, value))
    return urllib.parse.urlencode(pairs)


_versions = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=40).map(
        lambda n: 'placement 1.%d' % n),
    st.sampled_from(['placement latest', 'placement 2.0', 'placement',
                     'placement 1.', 'compute 2.1, placement 1.30',
                     'placement 99999999999999999999.1']),
    _ascii)
_content_types = st.one_of(
    st.none(),
    st.sampled_from(['application/json', 'application/json; charset=utf-8',
                     'text/plain', 'application/xml', '', 'application/*',
                     'multipart/form-data; boundary=x']),
    _ascii)
_accepts = st.one_of(
    st.none(),
    st.sampled_from(['application/json', '*/*', 'text/html',
                     'application/json;q=0', 'text/*, application/*;q=0.1',
                     '']),
    _ascii)
_tokens = st.one_of(
    st.just('admin'), st.just('admin'), st.none(),
    st.sampled_from(['alice', 'alice:fuzz-project', 'admin:', ':', 'a:b:c']),
    _ascii)


class TestFuzz(base.TestCase):

    def setUp(self):
        super().setUp()
        self.app = self.useFixture(api_fixtures.AppFixture('sqlite')).app
        self._setup_data()

    def _call(self, method, path, body=None, headers=None, query=''):
        req = webob.Request.blank(path, method=method)
        if query:
            req.environ['QUERY_STRING'] = query
        for name, value in (headers or {}).items():
            req.headers[name] = value
        if body is not None:
            req.body = body
        return req.get_response(self.app)

    def _json(self, method, path, data, version='1.39'):
        resp = self._call(method, path, _encode(data), headers={
            'X-Auth-Token': 'admin', 'Content-Type': 'application/json',
            'OpenStack-API-Version': 'placement %s' % version})
        self.assertLess(resp.status_int, 300, resp.text)
        return resp

    def _setup_data(self):
        self._json('POST', '/resource_providers',
                   {'name': 'fuzzed', 'uuid': RP_UUID})
        self._json('POST', '/resource_providers',
                   {'name': 'fuzzed child', 'uuid': CHILD_UUID,
                    'parent_provider_uuid': RP_UUID})
        self._json('PUT', '/resource_classes/CUSTOM_FUZZ', None)
        self._json('PUT', '/traits/CUSTOM_FUZZ_TRAIT', None)
        self._json('PUT', '/resource_providers/%s/inventories' % RP_UUID, {
            'resource_provider_generation': 0, 'inventories': {
                'VCPU': {'total': 32}, 'MEMORY_MB': {'total': 65536},
                'CUSTOM_FUZZ': {'total': 10}}})
        self._json('PUT', '/resource_providers/%s/traits' % RP_UUID, {
            'resource_provider_generation': 1,
            'traits': ['CUSTOM_FUZZ_TRAIT', 'HW_CPU_X86_SSE']})
        self._json('PUT', '/resource_providers/%s/aggregates' % RP_UUID, {
            'resource_provider_generation': 2, 'aggregates': [AGG_UUID]})
        # A GPU child and a sharing disk pool, so candidate searches
        # take their nested and sharing paths.
        self._json('PUT', '/resource_providers/%s/inventories'
                   % CHILD_UUID, {'resource_provider_generation': 0,
                                  'inventories': {'VGPU': {'total': 4}}})
        self._json('POST', '/resource_providers',
                   {'name': 'fuzzed pool', 'uuid': SHARED_UUID})
        self._json('PUT', '/resource_providers/%s/inventories'
                   % SHARED_UUID, {'resource_provider_generation': 0,
                                   'inventories': {'DISK_GB': {'total': 50}}})
        self._json('PUT', '/resource_providers/%s/traits' % SHARED_UUID, {
            'resource_provider_generation': 1,
            'traits': ['MISC_SHARES_VIA_AGGREGATE']})
        self._json('PUT', '/resource_providers/%s/aggregates' % SHARED_UUID,
                   {'resource_provider_generation': 2,
                    'aggregates': [AGG_UUID]})
        self._json('PUT', '/allocations/%s' % CONSUMER_UUID, {
            'allocations': {RP_UUID: {'resources': {'VCPU': 2}}},
            'project_id': 'fuzz-project', 'user_id': 'fuzz-user',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    def _request(self, path, method, body, query, version, content_type,
                 accept, token):
        headers = {}
        for name, value in (('OpenStack-API-Version', version),
                            ('Content-Type', content_type),
                            ('Accept', accept), ('X-Auth-Token', token)):
            if value is not None:
                headers[name] = value
        if token == 'admin':
            # The service role too: only a service gets past the
            # reshaper's policy to its body.
            headers['X-Roles'] = 'admin,service'
        request = (method, path, query, headers, body and body[:300])
        answers.assert_answer(
            self, self._call(method, path, body, headers, query), method,
            request)

    @settings(max_examples=_examples(800), deadline=None,
              suppress_health_check=[HealthCheck.too_slow,
                                     HealthCheck.data_too_large])
    @given(_paths(), _bodies, _versions)
    def test_bodies(self, path_method, body, version):
        """Malformed bodies at every route, as an admin, JSON declared."""
        path, method = path_method
        self._request(path, method, body, '',
                      version or 'placement latest', 'application/json',
                      None, 'admin')

    @settings(max_examples=_examples(1200), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_mutated(), st.one_of(st.just(39), st.sampled_from([38, 30, 28]),
                                 st.integers(min_value=0, max_value=39)))
    def test_mutated_bodies(self, path_method_body, minor):
        """Valid bodies with one part changed, at every version."""
        path, method, body = path_method_body
        self._request(path, method, body, '', 'placement 1.%d' % minor,
                      'application/json', None, 'admin')

    @settings(max_examples=_examples(500), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_paths(), _queries(), _versions)
    def test_query_strings(self, path_method, query, version):
        """Query strings at every route, mostly on GETs."""
        path, method = path_method
        self._request(path, method, None, query, version, None, None,
                      'admin')

    @settings(max_examples=_examples(400), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_ac_queries(), st.one_of(
        st.integers(min_value=24, max_value=39),
        st.integers(min_value=0, max_value=39)))
    def test_allocation_candidate_queries(self, query, minor):
        """GET /allocation_candidates with its parameters, any version."""
        self._request('/allocation_candidates', 'GET', None, query,
                      'placement 1.%d' % minor, None, None, 'admin')

    @settings(max_examples=_examples(500), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_paths(), st.one_of(st.none(), _json_values.map(_encode)),
           _versions, _content_types, _accepts, _tokens)
    def test_headers(self, path_method, body, version, content_type,
                     accept, token):
        """Version, content-type, accept and token headers, any value."""
        path, method = path_method
        self._request(path, method, body, '', version, content_type, accept,
                      token)
