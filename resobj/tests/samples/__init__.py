"""Populated sample objects for golden primitives and round-trip tests.

Each module here, one per noun, registers with :func:`sample` a factory
that returns a fully populated object of the newest version (every field
set, children included), and may register :func:`variant` factories
(other populated objects the version checks backport too: a value an
older version holds in another form, or cannot hold), hypothesis
overrides with :func:`strategy`, and :func:`converted` fields. The
factories must be deterministic: golden files are compared byte for
byte. resobj.tests.unit.objects.test_sample checks that they set every
field.
"""

import importlib
import pkgutil

from resobj.testing import compare

_FACTORIES = {}
_VARIANTS = {}
_STRATEGIES = {}
_CONVERTED = {}


def sample(objname):
    """Register the decorated function as ``objname``'s sample factory."""
    def register(factory):
        _FACTORIES[objname] = factory
        return factory
    return register


def variant(objname):
    """Register the decorated function as another populated ``objname``.

    Not used for golden files; the version checks backport it to every
    version, and a variant may be refused (ObjectBackportError) where
    the value cannot be represented.
    """
    def register(factory):
        _VARIANTS.setdefault(objname, []).append(factory)
        return factory
    return register


def strategy(objname, field):
    """Register a hypothesis strategy factory for one field of an object.

    For fields whose valid values the field type alone does not describe
    (a PCI address, a state machine's start state...).
    """
    def register(factory):
        _STRATEGIES[(objname, field)] = factory
        return factory
    return register


def converted(objname, *fields, key, before):
    """Declare fields versions before ``before`` hold in another form.

    ``key(obj)``, for an object of either form, is what both forms must
    agree on (resobj.testing.compare.Conversion): the round trips compare
    it instead of the fields, so a backport that loses or garbles the
    value still fails. The object's own tests check the conversion in
    detail.
    """
    _CONVERTED.setdefault(objname, []).append(
        compare.Conversion(tuple(fields), key, before))


def _load():
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module('%s.%s' % (__name__, module.name))


def factories():
    _load()
    return dict(_FACTORIES)


def make(objname):
    """A new populated sample of ``objname`` with no pending changes."""
    obj = factories()[objname]()
    obj.obj_reset_changes(recursive=True)
    return obj


def field_strategy(objname, field):
    _load()
    factory = _STRATEGIES.get((objname, field))
    return factory() if factory else None


def converted_fields(objname):
    """The names of the fields ``objname`` declares converted."""
    _load()
    return compare.converted_fields(_CONVERTED.get(objname, ()))


def conversions():
    """{object name: [Conversion]} of every object."""
    _load()
    return {name: list(found) for name, found in _CONVERTED.items()}


def all_samples():
    """{object name: [sample factory, variant factories...]}."""
    _load()
    return {name: [factory] + _VARIANTS.get(name, [])
            for name, factory in _FACTORIES.items()}
