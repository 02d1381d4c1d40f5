"""Only the listed wrappers name another library's private attributes.

resobj uses its libraries through their public API; where there is
none, one module per library holds the private use
(doc/source/contributor/architecture.rst, "Private uses of libraries").
This test parses every module of resobj (tests aside) and fails if a
module outside those wrappers names a private attribute (``_name``, not
``__name__``) of an object that is not its own:

* ``thing._name``, unless ``thing`` is ``self`` or ``cls`` (a class's
  own attributes, and those a library's base class leaves to its
  subclasses);
* ``getattr(thing, '_name')`` (and ``hasattr``, ``setattr``,
  ``delattr``) with the name written out.

resobj's own private names are told apart by name: a name resobj
defines anywhere (a function, class, variable, argument, or an
attribute it sets on ``self`` or ``cls``) is its own wherever it is
used, so a library's private name that resobj happens to define too
goes unnoticed.
"""

import ast
import os

import resobj
from resobj.tests import base

ROOT = os.path.dirname(os.path.abspath(resobj.__file__))

# {module, relative to resobj/: the private names it may use}; None: any.
WRAPPERS = {
    'objects/_ovo.py': None,  # oslo.versionedobjects
    'db/_sqlalchemy.py': None,
    'db/_oslo_db.py': None,
    '_oslo_context.py': None,
    '_oslo_messaging.py': None,
    # oslo.config's registered options, read to refuse unknown options.
    'conf/validate.py': {'_opts', '_groups'},
}

# Underscored names that are public API: named tuples' (``_fields``,
# ``_replace``...), which SQLAlchemy's Row shares, and the Row's own;
# the standard library's ``os._exit``.
PUBLIC = {'_fields', '_asdict', '_replace', '_make', '_field_defaults',
          '_mapping', '_t', '_tuple', '_exit'}

# resobj's own attributes kept on an object that is not the code's
# ``self``: the objects' cache of resource classes, on the request
# context (objects/resource_class.py).
OWN_ON_OTHERS = {'_resource_class_cache'}

# Private attributes a library's base class keeps on resobj's own
# objects. Read through ``self`` they look like resobj's own, so they are
# named here and refused through ``self`` too: oslo.versionedobjects'
# request context, which ``obj_context`` reads publicly.
INHERITED = {'_context'}

_ATTRIBUTE_FUNCTIONS = ('getattr', 'hasattr', 'setattr', 'delattr')


def _private(name):
    return name.startswith('_') and not (name.startswith('__')
                                         and name.endswith('__'))


def _is_self(node):
    return isinstance(node, ast.Name) and node.id in ('self', 'cls')


def defined_names(tree):
    """The names ``tree`` defines (see the module's docstring)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(
                node.ctx, ast.Store) and _is_self(node.value):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split('.')[0])
    return names


def private_names_used(tree):
    """The private attribute names ``tree`` uses on other objects."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and \
                not _is_self(node.value):
            names.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(
                node.func, ast.Name) and \
                node.func.id in _ATTRIBUTE_FUNCTIONS and \
                len(node.args) >= 2 and not _is_self(node.args[0]) and \
                isinstance(node.args[1], ast.Constant) and \
                isinstance(node.args[1].value, str) and \
                _private(node.args[1].value):
            names.add(node.args[1].value)
    return names


def inherited_names_used(tree):
    """The INHERITED private names ``tree`` uses through ``self``."""
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in INHERITED
            and _is_self(node.value)}


def violations(trees, wrappers=None):
    """{module: sorted private names of others it uses}.

    ``trees``: {module path: parsed module}, every module whose
    definitions count as resobj's.
    """
    wrappers = WRAPPERS if wrappers is None else wrappers
    own = set().union(*(defined_names(tree) for tree in trees.values()))
    own |= PUBLIC | OWN_ON_OTHERS
    found = {}
    for module, tree in trees.items():
        allowed = wrappers.get(module, set())
        if allowed is None:
            continue
        names = (private_names_used(tree) - own - allowed) | (
            inherited_names_used(tree) - allowed)
        if names:
            found[module] = sorted(names)
    return found


def _resobj_modules():
    trees = {}
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in ('tests',
                                                        '__pycache__')]
        for filename in filenames:
            if filename.endswith('.py'):
                path = os.path.join(dirpath, filename)
                with open(path, encoding='utf-8') as f:
                    trees[os.path.relpath(path, ROOT)] = ast.parse(f.read())
    return trees


def _parse(**sources):
    return {name: ast.parse(source) for name, source in sources.items()}


class TestPrivateNames(base.TestCase):

    def test_checker_catches_a_private_use(self):
        # The rule test below must be able to fail.
        trees = _parse(
            a='cache = engine._compiled_cache\n',
            b='store = getattr(context, "_request_store")\n',
            c='pool._pre_ping = False\n',
            wrapper='pool._pre_ping = False\n')
        self.assertEqual(
            {'a': ['_compiled_cache'], 'b': ['_request_store'],
             'c': ['_pre_ping']},
            violations(trees, wrappers={'wrapper': None}))

    def test_checker_catches_a_base_classs_private_use_through_self(self):
        trees = _parse(
            a='class A(base.ResobjObject):\n'
              '    def save(self):\n'
              '        db.save(self._context, self.id)\n',
            wrapper='def set_context(obj, context):\n'
                    '    obj._context = context\n')
        self.assertEqual({'a': ['_context']},
                         violations(trees, wrappers={'wrapper': None}))

    def test_checker_leaves_resobjs_own_names_alone(self):
        trees = _parse(
            a='class A:\n'
              '    def __init__(self):\n'
              '        self._seen = set()\n'
              '    def _check(self):\n'
              '        return self._seen, self.__dict__\n',
            b='def f(a, row, point):\n'
              '    a._check()\n'
              '    return a._seen, row._mapping, point._replace(x=1)\n',
            c='_CACHE = {}\n'
              'def g(module):\n'
              '    return module._CACHE, getattr(module, "_CACHE")\n')
        self.assertEqual({}, violations(trees, wrappers={}))

    def test_only_the_wrappers_name_private_attributes_of_libraries(self):
        trees = _resobj_modules()
        for module in WRAPPERS:
            # A wrapper renamed or gone would leave its entry here stale.
            self.assertIn(module, trees)
        self.assertEqual({}, violations(trees))
