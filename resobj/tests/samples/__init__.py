"""Populated sample objects for golden primitives and round-trip tests.

Each module here, one per noun, registers with :func:`sample` a factory
that returns a fully populated object of the newest version (every field
set, children included), and may register hypothesis overrides with
:func:`strategy` or declare :func:`converted` fields. The factories must
be deterministic: golden files are compared byte for byte.
"""

import importlib
import pkgutil

_FACTORIES = {}
_STRATEGIES = {}
_CONVERTED = {}


def sample(objname):
    """Register the decorated function as ``objname``'s sample factory."""
    def register(factory):
        _FACTORIES[objname] = factory
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


def converted(objname, *fields):
    """Declare fields an older version holds in another form on purpose.

    The round-trip test does not compare them after a backport; the
    object's own tests check the conversion.
    """
    _CONVERTED.setdefault(objname, set()).update(fields)


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
    _load()
    return _CONVERTED.get(objname, set())
