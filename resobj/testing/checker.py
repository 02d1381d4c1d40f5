"""ObjectChecker: the version checks of a project's objects.

Each ``check_*`` method returns a list of problems, one sentence each,
naming the object and the version and saying what to fix; an empty list
means the check passed. In a test::

    self.assertEqual([], checker.check_backports())

The checks and the mistakes they catch are listed in
doc/source/user/testing.rst.
"""

import inspect
import json
import re

from oslo_utils import versionutils

from resobj import exception
from resobj import objects
from resobj.objects._ovo import base as ovo_base
from resobj.objects import base
from resobj.objects import fingerprint
from resobj.objects import shape
from resobj.testing import compare
from resobj.testing import peer
from resobj.testing import records

# The child object and version in a recorded field description:
# 'Object(Flavor 1.1) or None', 'List(Object(Usage 1.1))'.
_CHILD = re.compile(r'Object\(([A-Za-z0-9_]+) ([0-9]+\.[0-9]+)')

_RECORDED_ONCE = (
    "a version's shape never changes once recorded: bump %(name)s "
    "(history line, backport), then record the new version. Only a "
    "version no release has shipped may be recorded again, by deleting "
    "%(path)s first")


def all_versions(cls):
    """'X.0' .. cls.VERSION, oldest first."""
    major, minor = versionutils.convert_version_to_tuple(cls.VERSION)
    return ['%d.%d' % (major, m) for m in range(minor + 1)]


def peer_manifest(objname, version, manifest=None):
    """The version manifest of a peer that runs ``objname`` at ``version``.

    Its children at the versions that version carries
    (``obj_relationships``), theirs likewise: what such a peer sends.
    """
    manifest = {} if manifest is None else manifest
    manifest[objname] = version
    cls = base.ResobjObjectRegistry.obj_classes()[objname][0]
    for name, field in sorted(cls.fields.items()):
        if not shape.is_object_field(field) or field.objname in manifest:
            continue
        carried = shape.carried_version(cls, name, version)
        if carried is not None:
            peer_manifest(field.objname, carried, manifest)
    return manifest


def backport(obj, version):
    """``obj`` as a peer that runs it at ``version`` asks for it."""
    return obj.obj_to_primitive(
        target_version=version,
        version_manifest=peer_manifest(obj.obj_name(), version))


def _wire(primitive):
    return json.loads(json.dumps(primitive, default=repr))


def _samples_of(samples, name):
    factories = samples.get(name, ())
    if callable(factories):
        factories = (factories,)
    return [factory() for factory in factories]


class ObjectChecker:
    """Checks the objects of one project against their records.

    :param namespace: the ``OBJ_PROJECT_NAMESPACE`` of the objects to
        check (the registry is shared by every project in the process).
    :param samples: {object name: factory, or a list of factories}; each
        returns a new object of the newest version with every field set,
        children included. The first is *the* sample; others are
        variants, for instance a value that an older version holds in
        another form.
    :param shapes: the directory of the shape records
        (resobj.testing.records).
    :param fingerprints: the pinned {object name: fingerprint}, or None.
    :param converted: {object name: {field or (fields): key}}, fields an
        older version holds in another form (resobj.testing.compare).
    :param refusals: exceptions a backport raises, by design, for a value
        the older version cannot represent; a variant may be refused, the
        sample never.
    :param record_hint: how to record a missing shape, for the message.
    :param objects: the names of the objects to check; by default every
        object of the namespace.
    """

    def __init__(self, namespace, samples, shapes, fingerprints=None,
                 converted=None, refusals=(exception.ObjectBackportError,),
                 record_hint='ObjectChecker.record_missing_shapes()',
                 objects=None):
        self.namespace = namespace
        self.only = None if objects is None else set(objects)
        self.samples = samples
        self.shapes = shapes
        self.pinned = fingerprints
        self.converted = converted or {}
        self.refusals = tuple(refusals)
        self.record_hint = record_hint

    # What is checked.

    def classes(self):
        """{object name: newest registered class} of the namespace."""
        # resobj's own, which any project's objects may hold.
        objects.register_all()
        registry = base.ResobjObjectRegistry.obj_classes()
        return {name: classes[0] for name, classes in sorted(registry.items())
                if classes[0].OBJ_PROJECT_NAMESPACE == self.namespace
                and (self.only is None or name in self.only)}

    def fingerprints(self):
        """{object name: fingerprint} of the checked objects, today."""
        registry = base.ResobjObjectRegistry.obj_classes()
        return fingerprint.fingerprints(
            {name: list(registry[name]) for name in self.classes()})

    def problems(self):
        """Every check's problems."""
        return (self.check_fingerprints() + self.check_history()
                + self.check_relationships() + self.check_shapes()
                + self.check_samples() + self.check_backports())

    # Pinned fingerprints and version histories.

    def check_fingerprints(self):
        """The pinned fingerprints are today's."""
        if self.pinned is None:
            return []
        pinned = {name: value for name, value in self.pinned.items()
                  if self.only is None or name in self.only}
        advice = {
            fingerprint.UNVERSIONED:
                '%(name)s: fingerprint %(current)s, pinned %(pinned)s: its '
                'fields or remotable methods changed but its version did '
                'not; bump %(name)s (history line, backport), then pin the '
                'new fingerprint',
            fingerprint.NEWER:
                '%(name)s: %(current)s is not pinned (pinned: %(pinned)s): '
                'record its shape, then pin it',
            fingerprint.OLDER:
                '%(name)s: %(current)s is older than the pinned %(pinned)s',
            fingerprint.REMOVED:
                '%(name)s is pinned (%(pinned)s) but no longer registered',
            fingerprint.UNPINNED:
                '%(name)s (%(current)s) is not pinned: pin it',
        }
        return [advice[change.kind] % {
            'name': change.objname, 'current': change.current,
            'pinned': change.pinned}
            for change in fingerprint.compare(pinned, self.fingerprints())]

    def check_history(self):
        """Each version X.0 .. VERSION has a '# Version X.Y: ...' line."""
        found = []
        for name, cls in self.classes().items():
            documented = set(re.findall(r'#\s*Version (\d+\.\d+)\s*:',
                                        inspect.getsource(cls)))
            missing = [v for v in all_versions(cls) if v not in documented]
            if missing:
                found.append('%s %s: no "# Version X.Y: ..." line above '
                             'VERSION for %s' % (name, cls.VERSION,
                                                 ', '.join(missing)))
        return found

    def check_relationships(self):
        """Every child field names the child version each version carries.

        oslo.versionedobjects backports a child without a version manifest
        through ``obj_relationships`` alone, and a parent carries its
        child's newest version: a child's new version is a new version of
        its parents.
        """
        found = []
        registry = base.ResobjObjectRegistry.obj_classes()
        for name, cls in self.classes().items():
            pairs = getattr(cls, 'obj_relationships', {})
            for field_name, field in sorted(cls.fields.items()):
                if not shape.is_object_field(field):
                    continue
                child = field.objname
                if not pairs.get(field_name):
                    found.append(
                        '%s %s: %s holds %s objects but obj_relationships '
                        'has no pairs for it, so obj_to_primitive('
                        'target_version=...) without a version manifest '
                        'cannot backport it: add %r: [(the first %s version '
                        'with it, the %s version it carried), ...]' % (
                            name, cls.VERSION, field_name, child, field_name,
                            name, child))
                    continue
                carried = shape.carried_version(cls, field_name, cls.VERSION)
                newest = registry[child][0].VERSION if child in registry \
                    else None
                if newest is not None and carried != newest:
                    found.append(
                        '%s %s carries %s %s in %s (obj_relationships) but '
                        '%s is at %s: bump %s (a history line "%s %s") and '
                        'add the pair for it' % (
                            name, cls.VERSION, child, carried, field_name,
                            child, newest, name, child, newest))
        return found

    # Shape records.

    def check_shapes(self):
        """Every version is recorded; today's code is its version's shape."""
        found = []
        classes = self.classes()
        prints = self.fingerprints()
        for name, cls in classes.items():
            for version in all_versions(cls):
                if records.read(self.shapes, name, version) is None:
                    found.append(self._missing_record(cls, version))
            record = records.read(self.shapes, name, cls.VERSION)
            if record is not None:
                found += self._compare_record(name, cls, record, prints)
        for name, versions in records.recorded(self.shapes).items():
            if self.only is not None and name not in self.only:
                continue
            known = all_versions(classes[name]) if name in classes else ()
            found += ['%s %s: a shape is recorded (%s) for a version that '
                      'does not exist' % (
                          name, version,
                          records.path(self.shapes, name, version))
                      for version in versions if version not in known]
        return found

    def _missing_record(self, cls, version):
        path = records.path(self.shapes, cls.obj_name(), version)
        if version == cls.VERSION:
            how = 'record it with %s' % self.record_hint
        else:
            how = ("an older version's shape cannot be recorded from "
                   "today's code: restore the file from version control")
        return '%s %s has no recorded shape (%s): %s' % (
            cls.obj_name(), version, path, how)

    def _compare_record(self, name, cls, record, prints):
        found = []
        current = shape.of_class(cls)
        label = '%s %s' % (name, cls.VERSION)
        path = records.path(self.shapes, name, cls.VERSION)
        for field in sorted(set(current) | set(record.fields)):
            if field not in record.fields:
                found.append('%s: field %s (%s) is not in the recorded shape '
                             'of %s' % (label, field, current[field], label))
            elif field not in current:
                found.append('%s: field %s (%s) was recorded for %s but is '
                             'gone' % (label, field, record.fields[field],
                                       label))
            elif current[field] != record.fields[field]:
                found.append('%s: field %s is %s, but %s was recorded with '
                             '%s' % (label, field, current[field], label,
                                     record.fields[field]))
        today = prints[name]
        if not found and record.fingerprint and record.fingerprint != today:
            found.append(
                '%s: fingerprint %s differs from %s, recorded with the shape '
                'of %s: a default, a read_only flag or a remotable method '
                'changed without a version bump' % (
                    label, today, record.fingerprint, label))
        if found:
            found.append('%s: %s' % (label, _RECORDED_ONCE % {
                'name': name, 'path': path}))
        return found

    def record_missing_shapes(self):
        """Record each object's newest version if it has no record yet.

        Never rewrites a record, and never records an older version
        (today's code knows only the newest). Returns the files written.
        """
        written = []
        prints = self.fingerprints()
        for name, cls in self.classes().items():
            if records.read(self.shapes, name, cls.VERSION) is None:
                written.append(records.write(
                    self.shapes, name, cls.VERSION,
                    records.Record(shape.of_class(cls), prints[name])))
        return written

    # Samples and backports.

    def check_samples(self):
        """Every object has a sample of its newest version, fully set."""
        found = []
        for name, cls in self.classes().items():
            made = _samples_of(self.samples, name)
            if not made:
                found.append('%s has no sample: give it a factory of a '
                             'populated object (every field set)' % name)
            for obj in made:
                if obj.obj_name() != name or obj.VERSION != cls.VERSION:
                    found.append('%s: its sample is %s %s, not %s %s' % (
                        name, obj.obj_name(), obj.VERSION, name,
                        cls.VERSION))
                    continue
                found += ['%s sample leaves %s unset: a sample sets every '
                          'field, children included, so that every '
                          'backport of it is checked' % (name, where)
                          for where in self._unset(obj, name)]
        # A sample and its variants often fail alike: say it once.
        return list(dict.fromkeys(found))

    def _unset(self, obj, path):
        unset = []
        for field in sorted(obj.fields):
            where = '%s.%s' % (path, field)
            if not obj.obj_attr_is_set(field):
                unset.append(where)
                continue
            value = getattr(obj, field)
            children = value if isinstance(value, list) else [value]
            for index, child in enumerate(children):
                if isinstance(child, ovo_base.VersionedObject) and \
                        child.OBJ_PROJECT_NAMESPACE == self.namespace:
                    unset += self._unset(child, where if child is value
                                         else '%s[%d]' % (where, index))
        return unset

    def check_backports(self):
        """Every sample backports right to every version of its object.

        To each version X.0 .. VERSION, with the version manifest of a
        peer at that version and without one (the same primitive both
        ways): the fields and child
        versions are the recorded shape's; loaded by today's code, every
        field it carries holds the sample's value, a converted field its
        key's; and each version, loaded, backports to every older one as
        the newest does.
        """
        found = []
        for name, cls in self.classes().items():
            for index, obj in enumerate(_samples_of(self.samples, name)):
                found += self._check_sample(cls, obj, index)
        # A sample and its variants often fail alike: say it once.
        return list(dict.fromkeys(found))

    def _check_sample(self, cls, obj, index):
        name = cls.obj_name()
        versions = all_versions(cls)
        what = 'sample' if index == 0 else 'sample variant %d' % index
        found, direct = [], {}
        for version in versions:
            label = '%s %s' % (name, version)
            try:
                with_manifest = backport(obj, version)
            except self.refusals as exc:
                if index == 0:
                    found.append('%s: the %s cannot be backported to %s: '
                                 '%s' % (label, what, version, exc))
                continue
            except Exception as exc:  # noqa: B902 - the problem reported
                found.append('%s: the backport of the %s raises %s: %s' % (
                    label, what, type(exc).__name__, exc))
                continue
            found += self._plain_call(obj, version, with_manifest, what)
            found += self._shape_of(with_manifest, name, version)
            wire = _wire(with_manifest)
            try:
                loaded = cls.obj_from_primitive(wire)
            except Exception as exc:  # noqa: B902 - the problem reported
                found.append('%s: today\'s code cannot load the backport of '
                             'the %s: %s: %s' % (label, what,
                                                 type(exc).__name__, exc))
                continue
            found += compare.kept(obj, loaded, wire, self.converted)
            direct[version] = (wire, loaded)
        for newer in versions:
            if newer not in direct:
                continue
            held = direct[newer][1]
            for older in versions[:versions.index(newer)]:
                if older not in direct:
                    continue
                try:
                    again = held.obj_to_primitive(target_version=older)
                except Exception as exc:  # noqa: B902 - reported
                    found.append('%s %s -> %s: the %s, loaded at %s, cannot '
                                 'be backported to %s: %s: %s' % (
                                     name, newer, older, what, newer, older,
                                     type(exc).__name__, exc))
                    continue
                difference = compare.first_difference(
                    json.loads(compare.dumps(direct[older][0])),
                    json.loads(compare.dumps(again)))
                if difference:
                    found.append(
                        '%s %s -> %s: the %s, loaded at %s and backported '
                        'to %s, differs from its backport to %s from %s '
                        '(%s)' % (name, newer, older, what, newer, older,
                                  older, cls.VERSION, difference))
        return found

    def _plain_call(self, obj, version, with_manifest, what):
        label = '%s %s' % (obj.obj_name(), version)
        try:
            plain = obj.obj_to_primitive(target_version=version)
        except Exception as exc:  # noqa: B902 - the problem reported
            return ['%s: obj_to_primitive(target_version=%r) without a '
                    'version manifest fails for the %s: %s: %s' % (
                        label, version, what, type(exc).__name__, exc)]
        difference = compare.first_difference(
            json.loads(compare.dumps(with_manifest)),
            json.loads(compare.dumps(plain)))
        if difference:
            return ['%s: obj_to_primitive(target_version=%r) without a '
                    'version manifest gives another primitive than with '
                    'one (%s): check obj_relationships' % (
                        label, version, difference)]
        return []

    def _shape_of(self, primitive, top, target):
        """Where a backport's objects are not their recorded shapes."""
        found = []
        classes = self.classes()
        for path, namespace, envelope in peer.envelopes(primitive):
            name = envelope[namespace + '.name']
            if name not in classes:
                # Another project's object: checked by its own records.
                continue
            version = envelope[namespace + '.version']
            record = records.read(self.shapes, name, version)
            if record is None:
                continue  # check_shapes reports it
            label = '%s %s' % (name, version)
            where = '' if path == top else ' (%s, in the backport of %s ' \
                'to %s)' % (path, top, target)
            values = envelope[namespace + '.data']
            for field in sorted(set(values) - set(record.fields)):
                found.append(
                    '%s%s: the backport carries %s, which %s does not have: '
                    'obj_make_compatible must drop it below the version that '
                    'added it' % (label, where, field, label))
            for field in sorted(set(record.fields) - set(values)):
                found.append(
                    '%s%s: the backport lacks %s, which %s has: '
                    'obj_make_compatible drops a field that version has' % (
                        label, where, field, label))
            for field, text in sorted(record.fields.items()):
                child = _CHILD.search(text)
                if child is None or values.get(field) is None:
                    continue
                items = values[field]
                for item in items if isinstance(items, list) else [items]:
                    got = compare.version(item)
                    if got != child.group(2):
                        found.append(
                            '%s%s: %s is %s %s, but %s was recorded '
                            'carrying %s %s: a child\'s new version is a new '
                            'version of its parent (obj_relationships)' % (
                                label, where, field, child.group(1), got,
                                label, child.group(1), child.group(2)))
        return found
