"""The import rules between layers (contributor/architecture.rst) hold.

* ``resobj.db`` never imports the objects, the HTTP layer, the compute
  layer or the commands;
* ``resobj.objects`` never imports the HTTP layer, the commands or
  ``resobj.testing`` (which is built on it);
* ``resobj.compute`` never imports ``resobj.db``, oslo.db or SQLAlchemy,
  nor reaches a session or the enginefacade (it uses objects only);
* the HTTP handlers never import ``resobj.db`` (they use objects only);
* the candidate search (``resobj.search``) builds statements and
  combines rows but never runs a statement: it imports neither the DB
  API, the facade nor the backends, reaches no session, and sits below
  the objects; in ``resobj.db`` only the DB API uses it (the backends
  name their strategies in ``resobj.db.sql.search_strategy``, below it);
* no module imports one that imports it back, even from inside a
  function (a package's ``__init__`` aside);
* nothing uses a global ``cfg.CONF``;
* the DB API's public functions take no session and run under a
  reader/writer decorator of the facade;
* no module outside ``resobj.db.backends`` (and the schema's DDL in the
  models and migrations) tests which database backend it runs on.
"""

import ast
import os

import resobj
from resobj.tests import base

ROOT = os.path.dirname(os.path.abspath(resobj.__file__))

FORBIDDEN = {
    'resobj.db': ('resobj.objects', 'resobj.api', 'resobj.compute',
                  'resobj.cmd', 'resobj.rpc', 'resobj.conductor'),
    # Objects never import the HTTP or RPC layers.
    'resobj.objects': ('resobj.api', 'resobj.cmd', 'resobj.rpc',
                       'resobj.conductor', 'oslo_messaging',
                       'resobj.testing'),
    'resobj.compute': ('resobj.db', 'oslo_db', 'sqlalchemy', 'resobj.api',
                       'resobj.cmd'),
    # Handlers reach the database only through objects.
    'resobj.api.handlers': ('resobj.db', 'resobj.cmd'),
    # The search builds statements and combines rows; the DB API runs
    # them and picks the backend's strategy.
    'resobj.search': ('resobj.db.api', 'resobj.db.facade',
                      'resobj.db.backends', 'resobj.db.migration',
                      'resobj.db.outage', 'oslo_db', 'resobj.objects',
                      'resobj.api', 'resobj.compute', 'resobj.cmd',
                      'resobj.rpc', 'resobj.conductor', 'oslo_messaging'),
}
# The bottom of the data path and what each may import of resobj.db:
# the schema imports only itself, table-level SQL the schema and
# itself, the candidate search those two. Anything else of resobj.db
# sits above them (the DB API, the facade, the backends).
BELOW = {
    'resobj.db.models': ('resobj.db.models',),
    'resobj.db.sql': ('resobj.db.models', 'resobj.db.sql'),
    'resobj.search': ('resobj.db.models', 'resobj.db.sql'),
}
# The only modules of resobj.db that may import the search, and what
# of it: the DB API runs its statements, the backends name strategies.
SEARCH_USERS_IN_DB = {
    'resobj.db.api.': ('resobj.search',),
}
# Names through which code would reach the database without importing
# resobj.db (e.g. a context's session, or a facade handed in).
DB_HANDLES = {'session', 'enginefacade', 'get_context_manager', 'reader',
              'writer', 'facade'}
FACADE_DECORATORS = {'reader', 'writer', 'replica_reader',
                     'retrying_writer', 'owning_writer'}
# What names a database backend or driver in a comparison.
BACKEND_NAMES = {'sqlite', 'postgresql', 'mysql', 'mariadb', 'psycopg',
                 'psycopg2', 'pymysql', 'pysqlite'}
BACKEND_NAME_SOURCES = ('dialect.name', 'dialect.driver',
                        'get_backend_name()', 'get_driver_name()')
# Where what differs by backend lives: the backends' own modules, and
# the DDL that the models and migrations keep per backend.
BACKEND_PACKAGES = ('resobj.db.backends', 'resobj.db.models',
                    'resobj.db.migrations')


def _modules(package):
    """(dotted name, path) of every module of ``package``, tests excluded."""
    top = os.path.join(ROOT, *package.split('.')[1:])
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in ('tests',
                                                        '__pycache__')]
        for filename in filenames:
            if filename.endswith('.py'):
                path = os.path.join(dirpath, filename)
                rel = os.path.relpath(path, os.path.dirname(ROOT))
                yield rel[:-3].replace(os.sep, '.'), path


def imported_names(source, module_name):
    """Every module name ``source`` imports, relative imports resolved."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = module_name.rsplit('.', node.level)[0]
                prefix = parent + ('.' + node.module if node.module else '')
            else:
                prefix = node.module
            names.add(prefix)
            names.update(prefix + '.' + alias.name for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(
                node.func, 'id', None) == '__import__' and node.args and \
                isinstance(node.args[0], ast.Constant):
            names.add(node.args[0].value)
    return names


def violations(source, module_name, forbidden):
    return sorted(name for name in imported_names(source, module_name)
                  if any(name == f or name.startswith(f + '.')
                         for f in forbidden))


def backend_tests(source):
    """The comparisons in ``source`` that test a backend's name."""
    def names_backend(node):
        if isinstance(node, ast.Constant):
            return node.value in BACKEND_NAMES
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(names_backend(e) for e in node.elts)
        return ast.unparse(node).endswith(BACKEND_NAME_SOURCES)

    return [ast.unparse(node) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Compare) and any(
                names_backend(operand)
                for operand in [node.left] + node.comparators)]


def circles(graph):
    """The import circles of ``graph`` ({module: imported names}).

    Each a sorted list of the modules that reach one another (the
    strongly connected components of more than one module), sorted.
    """
    order, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in graph:
                continue
            if other not in order:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], order[other])
        if low[node] == order[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return sorted(found)


def _read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def _handles(source):
    """The DB_HANDLES ``source`` names."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in DB_HANDLES:
            found.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in DB_HANDLES:
            found.add(node.id)
    return found


class TestLayering(base.TestCase):

    def test_checker_catches_a_violation(self):
        # The rule test below must be able to fail.
        self.assertEqual(
            ['resobj.objects', 'resobj.objects.service'],
            violations('from resobj.objects import service\n',
                       'resobj.db.api.x', ['resobj.objects']))
        self.assertEqual(
            ['resobj.objects', 'resobj.objects.base'],
            violations('from ..objects import base\n', 'resobj.db.api',
                       ['resobj.objects']))
        self.assertEqual(['resobj.db.facade'],
                         violations('import resobj.db.facade\n',
                                    'resobj.compute.claims', ['resobj.db']))

    def test_layers_import_only_downwards(self):
        found = {}
        for package, forbidden in FORBIDDEN.items():
            for name, path in _modules(package):
                bad = violations(_read(path), name, forbidden)
                if bad:
                    found[name] = bad
        self.assertEqual({}, found)

    def test_lower_layers_import_only_what_lies_below(self):
        def above(name, allowed):
            # "from resobj.db import x" names x as well: x is checked.
            return name.startswith('resobj.') and name != 'resobj.db' and \
                not any(name == a or name.startswith(a + '.')
                        for a in allowed)

        self.assertTrue(above('resobj.db.api.allocation',
                              BELOW['resobj.search']))
        self.assertFalse(above('resobj.db.sql.resource_provider',
                               BELOW['resobj.search']))
        found = {}
        for package, allowed in BELOW.items():
            modules = dict(_modules(package))
            # Guard against the walk silently finding nothing.
            self.assertGreater(len(modules), 2, package)
            for name, path in modules.items():
                # resobj.exception is everyone's (the search raises
                # resobj's errors for a request it cannot make).
                bad = sorted(
                    imported for imported in imported_names(
                        _read(path), name)
                    if above(imported, allowed + ('resobj.exception',))
                    and not (package == 'resobj.search' and
                             imported.startswith('resobj.search')))
                if bad:
                    found[name] = bad
        self.assertEqual({}, found)

    def test_checker_finds_a_circle(self):
        self.assertEqual(
            [['resobj.a', 'resobj.b']],
            circles({'resobj.a': {'resobj.b'}, 'resobj.b': {'resobj.a'},
                     'resobj.c': {'resobj.a'}}))

    def test_no_module_imports_one_that_imports_it_back(self):
        # Imports inside functions count: deferring an import hides a
        # circle from the interpreter, not from the design. A package's
        # __init__ is left out: it is the namespace its modules publish
        # into (resobj.objects.Service), not a layer.
        graph = {}
        for name, path in _modules('resobj'):
            if path.endswith('__init__.py'):
                continue
            graph[name] = imported_names(_read(path), name)
        self.assertIn('resobj.objects.compute_node', graph)
        self.assertEqual([], circles(graph))

    def test_compute_layer_reaches_no_database_handle(self):
        self.assertEqual({'session'}, _handles('context.session.execute()'))
        modules = dict(_modules('resobj.compute'))
        self.assertIn('resobj.compute.tracker', modules)
        found = {name: sorted(_handles(_read(path)))
                 for name, path in modules.items() if _handles(_read(path))}
        self.assertEqual({}, found)

    def test_search_reaches_no_database_handle(self):
        modules = dict(_modules('resobj.search'))
        self.assertIn('resobj.search.combine', modules)
        self.assertIn('resobj.search.statements.rows', modules)
        found = {name: sorted(_handles(_read(path)))
                 for name, path in modules.items() if _handles(_read(path))}
        self.assertEqual({}, found)

    def test_only_the_db_api_uses_the_search_in_the_db_layer(self):
        def allowed(name, imported):
            if imported == 'resobj.search':
                # "from resobj.search import x": x is checked itself.
                return True
            for prefix, modules in SEARCH_USERS_IN_DB.items():
                if name.startswith(prefix):
                    return any(imported == m or imported.startswith(m + '.')
                               for m in modules)
            return False

        self.assertFalse(allowed('resobj.db.backends.sqlite',
                                 'resobj.search.combine'))
        self.assertTrue(allowed('resobj.db.api.allocation_candidate',
                                'resobj.search.combine'))
        found = {}
        for name, path in _modules('resobj.db'):
            bad = [imported for imported in violations(
                _read(path), name, ['resobj.search'])
                if not allowed(name, imported)]
            if bad:
                found[name] = bad
        self.assertEqual({}, found)

    def test_db_layer_is_not_empty(self):
        # Guard against the walk silently finding nothing.
        self.assertIn('resobj.db.api.service',
                      dict(_modules('resobj.db')))

    def test_no_global_conf(self):
        def uses_global_conf(source):
            # Any "<something>.CONF" attribute, e.g. cfg.CONF; docstrings
            # that mention it do not count.
            return any(isinstance(node, ast.Attribute) and node.attr == 'CONF'
                       for node in ast.walk(ast.parse(source)))

        self.assertTrue(uses_global_conf('x = cfg.CONF.database\n'))
        users = [name for name, path in _modules('resobj')
                 if uses_global_conf(_read(path))]
        self.assertEqual([], users)

    def test_db_api_functions_take_no_session_and_are_transactional(self):
        problems = []
        for name, path in _modules('resobj.db.api'):
            if name.endswith(('__init__', '.utils')):
                continue
            tree = ast.parse(_read(path))
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef) or \
                        node.name.startswith('_'):
                    continue
                args = [a.arg for a in node.args.args + node.args.kwonlyargs]
                if 'session' in args:
                    problems.append('%s.%s takes a session'
                                    % (name, node.name))
                if not args or args[0] != 'context':
                    problems.append('%s.%s does not take a context first'
                                    % (name, node.name))
                # @facade.writer, or a call such as
                # @facade.retrying_writer(SomeConflict).
                decorators = {
                    getattr(d, 'attr', getattr(d, 'id', None))
                    for d in (getattr(d, 'func', d)
                              for d in node.decorator_list)}
                if not decorators & FACADE_DECORATORS:
                    problems.append('%s.%s is not under facade.reader/'
                                    'writer' % (name, node.name))
        self.assertEqual([], problems)

    def test_checker_catches_a_backend_test(self):
        self.assertEqual(
            ["conn.dialect.name == 'postgresql'",
             "backend in ('mysql', 'mariadb')",
             "engine.dialect.driver != x", "url.get_backend_name() == b"],
            backend_tests(
                "if conn.dialect.name == 'postgresql': pass\n"
                "if backend in ('mysql', 'mariadb'): pass\n"
                "if engine.dialect.driver != x: pass\n"
                "if url.get_backend_name() == b: pass\n"
                "backend = backends.for_dialect(conn.dialect.name)\n"
                "if name in setups: pass\n"))

    def test_only_the_backends_test_which_backend_they_run_on(self):
        modules = dict(_modules('resobj'))
        # Guard against the walk silently finding nothing.
        self.assertIn('resobj.db.api.allocation', modules)
        found = {}
        for name, path in modules.items():
            if name.startswith(BACKEND_PACKAGES):
                continue
            tests = backend_tests(_read(path))
            if tests:
                found[name] = tests
        self.assertEqual({}, found)
