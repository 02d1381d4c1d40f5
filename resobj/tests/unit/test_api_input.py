"""resobj.api: anchored patterns, and the checks every request passes."""

import importlib
import pkgutil

from resobj.api import errors
from resobj.api import microversion
from resobj.api import query
from resobj.api import router
from resobj.api import schemas
from resobj.api.schemas import allocation
from resobj.api.schemas import allocation_candidate
from resobj.api.schemas import common
from resobj.api.schemas import usage
from resobj.api import util
from resobj.api import wellformed
from resobj.tests import base

UUID = '6a3c1c0e-2b8f-4f4e-9a51-3d8b7f0c2e11'


def _versions():
    return [microversion.Version(1, minor)
            for minor in range(microversion.MAX[1] + 1)]


def _schemas():
    """Every schema the schema modules define, at every version."""
    for info in pkgutil.iter_modules(schemas.__path__):
        module = importlib.import_module('%s.%s' % (schemas.__name__,
                                                    info.name))
        for name, value in sorted(vars(module).items()):
            if isinstance(value, dict):
                yield '%s.%s' % (info.name, name), value
            elif callable(value) and getattr(value, '__module__', None) \
                    == module.__name__ and name in ('put', 'post', 'query',
                                                    'list_query'):
                for version in _versions():
                    yield '%s.%s(%s)' % (info.name, name, version), \
                        value(version)


def _patterns(schema):
    stack = [schema]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value.get('pattern'), str):
                yield value['pattern']
            if isinstance(value.get('patternProperties'), dict):
                yield from value['patternProperties']
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


class TestAnchoredPatterns(base.TestCase):
    """A pattern ending in $ would let a final newline through."""

    def test_every_schema_pattern_ends_with_backslash_z(self):
        seen = 0
        for where, schema in _schemas():
            for pattern in _patterns(schema):
                seen += 1
                self.assertTrue(pattern.startswith('^'), (where, pattern))
                self.assertTrue(pattern.endswith(r'\Z'), (where, pattern))
        # The walk found the patterns (a broken walk would pass above).
        self.assertGreater(seen, 20)

    def test_every_regular_expression_ends_with_backslash_z(self):
        expressions = [query._UUID_RE,
                       allocation_candidate.SUFFIX_1_25,
                       allocation_candidate.SUFFIX_1_33,
                       microversion._VERSION_RE]
        expressions += [pattern for pattern, _ in router.Router()._routes]
        for expression in expressions:
            self.assertTrue(expression.pattern.endswith(r'\Z'),
                            expression.pattern)

    def test_a_trailing_newline_does_not_match(self):
        latest = microversion.MAX
        put = allocation.put(latest)
        cases = [
            (common.UUID, UUID),
            (common.RESOURCE_CLASS, 'VCPU'),
            (common.CUSTOM_NAME, 'CUSTOM_X'),
            (common.TRAIT, 'HW_CPU_X86_SSE'),
            (put['properties']['consumer_type'], 'INSTANCE'),
            (usage.query(latest)['properties']['consumer_type'], 'all'),
            (allocation_candidate.query(latest)['properties']['limit'],
             '10'),
        ]
        for schema, valid in cases:
            util.validate(valid, schema, 'value')
            self.assertRaises(errors.HTTPError, util.validate, valid + '\n',
                              schema, 'value')
        # Names of members: providers of an allocation. (The classes of
        # an inventory are any names, as in placement, looked up; a final
        # line break in one is refused by wellformed, as in any member
        # name: see TestCheckJSON.)
        by_provider = put['properties']['allocations']
        util.validate({UUID: {'resources': {'VCPU': 1}}}, by_provider, 'v')
        self.assertRaises(errors.HTTPError, util.validate,
                          {UUID + '\n': {'resources': {'VCPU': 1}}},
                          by_provider, 'v')

    def test_a_query_uuid_does_not_end_with_a_newline(self):
        self.assertEqual(UUID, query.uuid(UUID, 'uuid'))
        self.assertRaises(errors.HTTPError, query.uuid, UUID + '\n', 'uuid')

    def test_a_route_does_not_end_with_a_newline(self):
        found = router.Router().find('/resource_providers', 'GET',
                                     microversion.MAX)
        self.assertEqual({}, found[1])
        error = self.assertRaises(errors.HTTPError, router.Router().find,
                                  '/resource_providers\n', 'GET',
                                  microversion.MAX)
        self.assertEqual(404, error.status)


class TestCheckJSON(base.TestCase):

    def _refused(self, data):
        return self.assertRaises(errors.HTTPError, wellformed.check_json,
                                 data)

    def test_bad_text_is_named_where_it_is(self):
        for text, what in (('a\x00b', 'NUL'), ('\ud800', 'lone surrogate'),
                           ('x\n', 'trailing line break'),
                           ('x\r', 'trailing line break')):
            error = self._refused({'a': [{'b': text}]})
            self.assertEqual(400, error.status)
            self.assertEqual(errors.BAD_CHARACTER, error.code)
            self.assertIn('value at a/0/b', error.detail)
            self.assertIn(what, error.detail)
            error = self._refused({'a': {text: 1}})
            self.assertIn('member name in a', error.detail)
            self.assertIn(what, error.detail)

    def test_good_text_passes(self):
        wellformed.check_json({'name': 'gpu \U0001F600 é\nx\ty',
                               'n': [1, 2.5, None, True]})

    def test_sizes(self):
        limit = wellformed.MAX_ITEMS
        wellformed.check_json({'a': list(range(limit))})
        wellformed.check_json({str(i): i for i in range(limit)})
        error = self._refused({'a': list(range(limit + 1))})
        self.assertIn('list at a has %d items; at most %d'
                      % (limit + 1, limit), error.detail)
        error = self._refused({str(i): i for i in range(limit + 1)})
        self.assertIn('object at the top level has %d members'
                      % (limit + 1), error.detail)
        # Each list within its limit, the body beyond its own.
        entries = wellformed.MAX_BODY_ENTRIES
        lists = entries // limit
        wellformed.check_json({str(i): list(range(limit - 1))
                               for i in range(lists)})
        error = self._refused({str(i): list(range(limit))
                               for i in range(lists + 1)})
        self.assertIn('more than %d list items and object members'
                      % entries, error.detail)

    def test_depth(self):
        def nested(levels):
            data = 1
            for _ in range(levels):
                data = [data]
            return data
        wellformed.check_json(nested(wellformed.MAX_DEPTH))
        error = self._refused(nested(wellformed.MAX_DEPTH + 1))
        self.assertIn('nested deeper than %d' % wellformed.MAX_DEPTH,
                      error.detail)


class TestValidate(base.TestCase):

    def test_a_long_value_is_not_quoted_whole(self):
        schema = {'type': 'string', 'maxLength': 200}
        error = self.assertRaises(errors.HTTPError, util.validate,
                                  'x' * 100000, schema,
                                  'JSON does not validate:')
        self.assertIn("'xxx", error.detail)
        # The message and the value each once, cut short.
        self.assertLess(len(error.detail), 20200)

    def test_the_detail_is_jsonschemas_whole_account_on_one_line(self):
        schema = {'type': 'object',
                  'properties': {'name': {'type': 'string', 'maxLength': 3}}}
        error = self.assertRaises(errors.HTTPError, util.validate,
                                  {'name': 'long'}, schema,
                                  'JSON does not validate:')
        self.assertEqual(
            "JSON does not validate: 'long' is too long  Failed validating "
            "'maxLength' in schema['properties']['name']:     {'type': "
            "'string', 'maxLength': 3}  On instance['name']:     'long'",
            error.detail)
