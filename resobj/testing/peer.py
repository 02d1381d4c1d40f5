"""The older side of a round trip, and what it does not know.

This file runs in two ways:

* imported as ``resobj.testing.peer``, for its functions over
  primitives (:func:`envelopes`, :func:`unknown_keys`);
* as a script, ``python -P peer.py COMMAND [--import MODULE]...``, by an
  interpreter whose ``resobj`` is an *older* release
  (resobj.testing.release). It then imports nothing of today's resobj:
  only the standard library and the older release's ``resobj.objects``
  (``register_all()`` and the registry), plus the modules named with
  ``--import`` (a downstream project's objects). It answers JSON on
  stdout:

  ``about``
      ``{"resobj": file of the resobj package, "manifest": {object:
      newest version}}`` of every registered object;
  ``load``
      reads a list of primitives on stdin; for each, ``{"primitive":
      the object loaded and written back at its version, "unknown":
      [every key the older code does not know]}`` or ``{"error":
      "..."}``.

Loading ignores keys it does not know, so that a newer minor version
loads; a round trip therefore asks for them explicitly: a key the older
code does not know is a field a backport forgot to remove.
"""

import importlib
import json
import sys
import warnings

# An envelope's keys after its serial namespace ('resobj_object.name').
ENVELOPE_KEYS = ('name', 'namespace', 'version', 'data', 'changes')


def serial_namespace(value):
    """The serial namespace of an object primitive, or None.

    Any project's: an envelope is a dict with ``<ns>.name`` and
    ``<ns>.data``.
    """
    if not isinstance(value, dict):
        return None
    for key in value:
        if isinstance(key, str) and key.endswith('.name'):
            namespace = key[:-len('.name')]
            if namespace + '.data' in value:
                return namespace
    return None


def envelopes(primitive, path=None):
    """(path, namespace, envelope) of ``primitive`` and every child.

    ``path`` names where an envelope sits: ``Instance.flavor``,
    ``InstanceList.objects[0]``.
    """
    namespace = serial_namespace(primitive)
    if namespace is None:
        return
    name = primitive[namespace + '.name']
    path = path or str(name)
    yield path, namespace, primitive
    data = primitive[namespace + '.data']
    if not isinstance(data, dict):
        return
    for key, value in sorted(data.items()):
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield from envelopes(item, '%s.%s[%d]' % (path, key, index))
        else:
            yield from envelopes(value, '%s.%s' % (path, key))


def _version_tuple(version):
    try:
        return tuple(int(part) for part in str(version).split('.'))
    except ValueError:
        return None


def class_for(classes, name, version):
    """The class of ``classes`` ({name: [class...]}) that reads ``version``.

    As oslo.versionedobjects picks it: the same major version, the
    newest minor at least ``version``. None when there is none.
    """
    wanted = _version_tuple(version)
    found = None
    for cls in classes.get(name, ()):
        have = _version_tuple(cls.VERSION)
        if wanted and have and have[0] == wanted[0] and have >= wanted and \
                (found is None or have > _version_tuple(found.VERSION)):
            found = cls
    return found


def unknown_keys(primitive, classes):
    """Every key of ``primitive`` (children included) ``classes`` lacks.

    ``classes`` is {object name: [registered classes]}; each envelope is
    judged by the class that would load it. One string per key:
    ``'Instance 1.4 (Instance): hostname'``, the object and version, where
    it sits, and the key.
    """
    found = []
    for path, namespace, envelope in envelopes(primitive):
        name = envelope[namespace + '.name']
        version = envelope.get(namespace + '.version')
        label = '%s %s (%s)' % (name, version, path)
        allowed = {'%s.%s' % (namespace, key) for key in ENVELOPE_KEYS}
        found += ['%s: envelope key %s' % (label, key)
                  for key in sorted(envelope, key=str) if key not in allowed]
        cls = class_for(classes, name, version)
        if cls is None:
            found.append('%s: no such object or version' % label)
            continue
        data = envelope[namespace + '.data']
        found += ['%s: %s' % (label, key) for key in sorted(data, key=str)
                  if key not in cls.fields]
    return found


def _registry():
    # The process-wide registry, every project's objects in it; read
    # through the (older) resobj's registry class, which every release has.
    from resobj.objects import base
    return base.ResobjObjectRegistry.obj_classes()


def _import(modules):
    import resobj
    from resobj import objects
    objects.register_all()
    for module in modules:
        importlib.import_module(module)
    return resobj


def about(modules):
    resobj = _import(modules)
    return {'resobj': resobj.__file__,
            'manifest': {name: classes[0].VERSION
                         for name, classes in _registry().items()}}


def load(modules, primitives):
    _import(modules)
    classes = _registry()
    answers = []
    for primitive in primitives:
        namespace = serial_namespace(primitive)
        name = primitive.get(namespace + '.name') if namespace else None
        if name not in classes:
            answers.append({'error': 'no such object: %r' % (name,)})
            continue
        try:
            obj = classes[name][0].obj_from_primitive(primitive)
            answers.append({'primitive': obj.obj_to_primitive(),
                            'unknown': unknown_keys(primitive, classes)})
        except Exception as exc:  # noqa: B902 - reported to the caller
            answers.append({'error': '%s: %s' % (type(exc).__name__, exc)})
    return answers


def main(argv):
    warnings.simplefilter('ignore')
    command, modules = argv[0], []
    rest = argv[1:]
    while rest:
        if rest[0] != '--import' or len(rest) < 2:
            raise SystemExit('usage: peer.py about|load [--import MODULE]...')
        modules.append(rest[1])
        rest = rest[2:]
    if command == 'about':
        answer = about(modules)
    elif command == 'load':
        answer = load(modules, json.load(sys.stdin))
    else:
        raise SystemExit('unknown command %r' % command)
    json.dump(answer, sys.stdout, sort_keys=True)


if __name__ == '__main__':
    main(sys.argv[1:])
