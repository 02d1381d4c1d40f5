"""Every object between the N-1 code and today's, both ways, for real.

* The N-1 code (a process of its own, resobj.tests.upgrade.n_minus_1)
  makes each object's sample and random objects from its own strategies,
  serialises them at its versions, and today's code loads them: every
  field both releases know comes out as the old code sent it.
* Today's code backports its own sample and random objects to the N-1
  manifest (the versions the old process reports), the old process loads
  them and writes them back at its versions: again field by field equal
  where both know the field; a value the old version cannot represent
  must fail the backport (ObjectBackportError), never travel altered.
* Strict both ways: loading ignores keys the loader does not know, so
  each side names every key of the other's primitives that it does not
  know (resobj.testing.peer.unknown_keys), and any fails the test: a
  field a backport forgot to remove would otherwise travel unseen.

The objects come from the registries on both sides, so a new object or
version is covered without touching this file. The test counts the
objects that were backported: none while both releases agree on every
version, and at least one as soon as they differ.
"""

import json

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
from oslo_serialization import jsonutils

from resobj import exception
from resobj import objects
from resobj.objects import base
from resobj.testing import peer
from resobj.tests import base as test_base
from resobj.tests import samples
from resobj.tests import strategies
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import primitives

# Random objects per object and direction, beside the sample.
EXAMPLES = 8


def _today():
    return {name: classes[0] for name, classes in
            base.ResobjObjectRegistry.obj_classes().items()}


def _todays_objects(name):
    """The sample and EXAMPLES random objects of today's ``name``."""
    found = [samples.make(name)] if name in samples.factories() else []

    @settings(max_examples=EXAMPLES, database=None, deadline=None,
              derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data):
        found.append(data.draw(strategies.for_object(name)))

    collect()
    return found


class TestObjectsAcrossReleases(test_base.TestCase):

    def setUp(self):
        super().setUp()
        n_minus_1.tree()
        objects.register_all()
        self.old_manifest = n_minus_1.manifest()
        self.today = _today()

    def test_every_n_minus_1_object_is_known_today(self):
        # An object may be added, never dropped while N-1 peers send it.
        self.assertEqual([], sorted(set(self.old_manifest)
                                    - set(self.today)))

    def test_n_minus_1_objects_load_in_todays_code(self):
        sent = n_minus_1.run('generate', str(EXAMPLES))
        self.assertEqual(sorted(self.old_manifest), sorted(sent))
        problems = []
        for name, prims in sorted(sent.items()):
            for primitive in prims:
                self.assertEqual(self.old_manifest[name],
                                 primitive[primitives.VERSION])
                problems += ['today\'s code does not know %s' % key
                             for key in peer.unknown_keys(
                                 primitive,
                                 base.ResobjObjectRegistry.obj_classes())]
                wire = jsonutils.loads(jsonutils.dumps(primitive))
                loaded = base.ResobjObject.obj_from_primitive(wire)
                problems += primitives.differences(
                    primitive, loaded.obj_to_primitive())
        self.assertEqual([], problems[:20])

    def test_n_minus_1_names_every_key_it_does_not_know(self):
        # What a forgotten backport sends: a field the N-1 version lacks,
        # in a child too, and an envelope key no release writes.
        instance = samples.make('Instance').obj_to_primitive(
            target_version=self.old_manifest['Instance'],
            version_manifest=self.old_manifest)
        instance[primitives.DATA]['hostname'] = 'h1'
        instance[primitives.DATA]['flavor'][primitives.DATA]['zone'] = 'z'
        instance[primitives.NS + '.extra'] = 1
        answered = n_minus_1.run('load', stdin=json.dumps(
            {'Instance': [instance]}))
        version = self.old_manifest['Instance']
        self.assertEqual(
            ['Instance %s (Instance): envelope key resobj_object.extra'
             % version,
             'Instance %s (Instance): hostname' % version,
             'Flavor %s (Instance.flavor): zone'
             % self.old_manifest['Flavor']],
            answered['unknown'])
        # Loading itself still ignores them, as a newer minor needs.
        self.assertNotIn('error', answered['objects']['Instance'][0])

    def test_todays_objects_backported_load_in_n_minus_1(self):
        sent, originals = {}, {}
        refused = backported = 0
        for name in sorted(set(self.today) & set(self.old_manifest)):
            for obj in _todays_objects(name):
                try:
                    wire = obj.obj_to_primitive(
                        target_version=self.old_manifest[name],
                        version_manifest=self.old_manifest)
                except exception.ObjectBackportError:
                    # Refusing is the contract for a value the old
                    # version cannot hold (each object's tests check
                    # which); the sample must always pass.
                    refused += 1
                    continue
                wire = jsonutils.loads(jsonutils.dumps(wire))
                backported += sum(
                    1 for objname, version in primitives.versions_in(wire)
                    if version != self.today[objname].VERSION)
                sent.setdefault(name, []).append(wire)
                originals.setdefault(name, []).append(
                    obj.obj_to_primitive())
        self.assertEqual(sorted(set(self.today) & set(self.old_manifest)),
                         sorted(sent))

        answered = n_minus_1.run('load', stdin=json.dumps(sent))
        # Every key the N-1 code does not know is a field a backport
        # forgot to remove (its loading ignores them).
        problems = ['N-1 does not know %s' % key
                    for key in answered['unknown']]
        for name, prims in sorted(answered['objects'].items()):
            for original, wire, back in zip(originals[name], sent[name],
                                            prims):
                if 'error' in back:
                    problems.append('%s: N-1 could not load %s: %s' % (
                        name, wire[primitives.VERSION], back['error']))
                    continue
                # The old code read every field it knows...
                problems += primitives.differences(wire, back)
                # ... and those are today's values.
                problems += primitives.differences(original, back)
        self.assertEqual([], problems[:20])

        differ = any(self.old_manifest.get(name) != cls.VERSION
                     for name, cls in self.today.items()
                     if name in self.old_manifest)
        if differ:
            self.assertGreater(backported, 0)
        else:
            self.assertEqual(0, backported)
            self.assertEqual(0, refused)
