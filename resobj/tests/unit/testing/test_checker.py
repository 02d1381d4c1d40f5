"""ObjectChecker finds each mistake, naming the object and the version.

The checks run over resobj's own objects, with one mistake made at a
time on a class (monkeypatched for the test) or in a copy of the
records. test_mistakes makes the same mistakes on a copy of the package
through the whole suite; these tests pin each check's own message.
"""

import os
import shutil

import fixtures

from resobj import objects
from resobj.objects import fields
from resobj.objects import fingerprint
from resobj.testing import checker as checker_mod
from resobj.testing import compare
from resobj.testing import records
from resobj.tests import base
from resobj.tests import object_checks
from resobj.tests import samples


class CheckerTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        objects.register_all()
        self.shapes = os.path.join(self.useFixture(fixtures.TempDir()).path,
                                   'shapes')
        shutil.copytree(object_checks.SHAPES, self.shapes)

    def checker(self, *names, **kwargs):
        kwargs.setdefault('converted', samples.conversions())
        return checker_mod.ObjectChecker(
            'resobj', kwargs.pop('samples', samples.all_samples()),
            self.shapes, objects=names, **kwargs)

    def patch(self, cls, name, value):
        self.useFixture(fixtures.MonkeyPatch(
            '%s.%s.%s' % (cls.__module__, cls.__name__, name), value))


class TestCleanTree(CheckerTestCase):

    def test_no_problems(self):
        self.assertEqual([], self.checker('Instance', 'Flavor').problems())


class TestFingerprints(CheckerTestCase):

    def test_each_kind_of_change(self):
        today = fingerprint.fingerprints()
        pinned = {'Flavor': '1.1-' + '0' * 32,
                  'Trait': '1.0-' + '1' * 32,
                  'Usage': '1.9-' + '2' * 32}
        problems = self.checker(
            'Flavor', 'Trait', 'Usage', 'User',
            fingerprints=pinned).check_fingerprints()
        self.assertEqual([
            'Flavor: fingerprint %s, pinned 1.1-%s: its fields or remotable '
            'methods changed but its version did not; bump Flavor (history '
            'line, backport), then pin the new fingerprint'
            % (today['Flavor'], '0' * 32),
            'Trait: %s is not pinned (pinned: 1.0-%s): record its shape, '
            'then pin it' % (today['Trait'], '1' * 32),
            'Usage: %s is older than the pinned 1.9-%s'
            % (today['Usage'], '2' * 32),
            'User (%s) is not pinned: pin it' % today['User'],
        ], problems)


class TestRelationships(CheckerTestCase):

    def test_a_child_field_without_pairs(self):
        pairs = dict(objects.Instance.obj_relationships)
        del pairs['flavor']
        self.patch(objects.Instance, 'obj_relationships', pairs)
        checker = self.checker('Instance')
        problems = checker.check_relationships()
        self.assertEqual(1, len(problems), problems)
        self.assertTrue(problems[0].startswith(
            "Instance 1.5: flavor holds Flavor objects but obj_relationships "
            "has no pairs for it"), problems[0])
        # And the plain call fails, named.
        self.assertIn("Instance 1.0: obj_to_primitive(target_version='1.0') "
                      "without a version manifest fails for the sample: "
                      "ObjectActionError",
                      '\n'.join(checker.check_backports()))

    def test_a_child_bumped_without_its_parent(self):
        self.patch(objects.Flavor, 'VERSION', '1.2')
        problems = self.checker('Instance').check_relationships()
        self.assertIn('Instance 1.5 carries Flavor 1.1 in flavor '
                      '(obj_relationships) but Flavor is at 1.2: bump '
                      'Instance (a history line "Flavor 1.2") and add the '
                      'pair for it', problems)


class TestShapes(CheckerTestCase):

    def test_a_changed_type(self):
        changed = dict(objects.Instance.fields)
        changed['vcpus'] = fields.IntegerField(nullable=True)
        self.patch(objects.Instance, 'fields', changed)
        problems = self.checker('Instance').check_shapes()
        self.assertEqual(
            'Instance 1.5: field vcpus is Integer or None, but Instance 1.5 '
            'was recorded with NonNegativeInteger or None', problems[0])
        self.assertIn("a version's shape never changes once recorded: bump "
                      "Instance", problems[1])

    def test_an_added_and_a_removed_field(self):
        changed = dict(objects.Instance.fields)
        changed['hostname'] = fields.StringField(nullable=True)
        del changed['node']
        self.patch(objects.Instance, 'fields', changed)
        problems = self.checker('Instance').check_shapes()
        self.assertEqual([
            'Instance 1.5: field hostname (String or None) is not in the '
            'recorded shape of Instance 1.5',
            'Instance 1.5: field node (String or None) was recorded for '
            'Instance 1.5 but is gone'], problems[:2])

    def test_a_fingerprint_changed_with_the_same_shape(self):
        # A default does not travel, but the fingerprint sees it.
        changed = dict(objects.Flavor.fields)
        changed['swap'] = fields.NonNegativeIntegerField(default=0)
        self.patch(objects.Flavor, 'fields', changed)
        problems = self.checker('Flavor').check_shapes()
        self.assertTrue(problems[0].startswith('Flavor 1.1: fingerprint 1.1-'),
                        problems)
        self.assertIn('recorded with the shape of Flavor 1.1: a default, a '
                      'read_only flag or a remotable method changed without '
                      'a version bump', problems[0])

    def test_missing_and_stray_records(self):
        os.unlink(records.path(self.shapes, 'Flavor', '1.0'))
        os.unlink(records.path(self.shapes, 'Flavor', '1.1'))
        records.write(self.shapes, 'Flavor', '1.7', records.Record({}, None))
        problems = self.checker('Flavor').check_shapes()
        self.assertEqual(3, len(problems), problems)
        self.assertIn("Flavor 1.0 has no recorded shape", problems[0])
        self.assertIn("an older version's shape cannot be recorded from "
                      "today's code", problems[0])
        self.assertIn('Flavor 1.1 has no recorded shape', problems[1])
        self.assertIn('record it with ObjectChecker.record_missing_shapes()',
                      problems[1])
        self.assertTrue(problems[2].startswith(
            'Flavor 1.7: a shape is recorded'), problems[2])

    def test_recording_writes_the_newest_version_only_once(self):
        os.unlink(records.path(self.shapes, 'Flavor', '1.0'))
        os.unlink(records.path(self.shapes, 'Flavor', '1.1'))
        checker = self.checker('Flavor')
        self.assertEqual([records.path(self.shapes, 'Flavor', '1.1')],
                         checker.record_missing_shapes())
        self.assertEqual([], checker.record_missing_shapes())
        record = records.read(self.shapes, 'Flavor', '1.1')
        self.assertEqual(fingerprint.fingerprints()['Flavor'],
                         record.fingerprint)
        self.assertEqual('String or None', record.fields['description'])
        self.assertIsNone(records.read(self.shapes, 'Flavor', '1.0'))


class TestSamplesAndBackports(CheckerTestCase):

    def test_a_sample_leaving_a_field_unset(self):
        def unset():
            instance = samples.make('Instance')
            instance.obj_reset_changes()
            delattr(instance, '_obj_ephemeral_gb')
            instance.flavor.obj_reset_changes()
            delattr(instance.flavor, '_obj_swap')
            return instance

        problems = self.checker('Instance', samples={
            'Instance': unset}).check_samples()
        self.assertEqual([
            'Instance sample leaves Instance.ephemeral_gb unset: a sample '
            'sets every field, children included, so that every backport '
            'of it is checked',
            'Instance sample leaves Instance.flavor.swap unset: a sample '
            'sets every field, children included, so that every backport '
            'of it is checked'], problems)

    def test_a_missing_sample(self):
        self.assertEqual(
            ['Flavor has no sample: give it a factory of a populated object '
             '(every field set)'],
            self.checker('Flavor', samples={}).check_samples())

    def test_a_forgotten_and_a_wrong_backport(self):
        added = dict(objects.Instance.ADDED_IN)
        del added['booted_from_volume']
        added['ephemeral_gb'] = '1.3'
        self.patch(objects.Instance, 'ADDED_IN', added)
        problems = self.checker('Instance').check_backports()
        self.assertIn('Instance 1.2: the backport carries booted_from_volume, '
                      'which Instance 1.2 does not have: obj_make_compatible '
                      'must drop it below the version that added it',
                      problems)
        self.assertIn('Instance 1.2: the backport lacks ephemeral_gb, which '
                      'Instance 1.2 has: obj_make_compatible drops a field '
                      'that version has', problems)

    def test_a_child_at_another_version_than_recorded(self):
        # A Flavor 1.2 that the Instance 1.5 record does not know of.
        record = records.read(self.shapes, 'Instance', '1.5')
        os.unlink(records.path(self.shapes, 'Instance', '1.5'))
        record.fields['flavor'] = 'Object(Flavor 1.0) or None'
        records.write(self.shapes, 'Instance', '1.5', record)
        problems = self.checker('Instance').check_backports()
        self.assertIn("Instance 1.5: flavor is Flavor 1.1, but Instance 1.5 "
                      "was recorded carrying Flavor 1.0: a child's new "
                      "version is a new version of its parent "
                      "(obj_relationships)", problems)

    def test_a_conversion_that_does_not_convert_back(self):
        broken = [compare.Conversion(('root_gb',),
                                     lambda instance: instance.root_gb,
                                     '1.3')]
        problems = self.checker(
            'Instance', converted={'Instance': broken}).check_backports()
        # The volume-backed variant goes below 1.3 with root_gb 0.
        self.assertIn('Instance 1.2: Instance.root_gb does not convert back: '
                      '40 became 0', problems)

    def test_a_value_changed_in_the_backport(self):
        def flavor_backport(obj, primitive, target_version):
            original(obj, primitive, target_version)
            primitive['swap'] = 0

        original = objects.Flavor.obj_make_compatible
        self.patch(objects.Flavor, 'obj_make_compatible', flavor_backport)
        problems = self.checker('Flavor').check_backports()
        self.assertIn('Flavor 1.0: Flavor.swap changed in the backport: 512 '
                      'became 0', problems)

    def test_the_sample_refused(self):
        def refused():
            instance = samples.make('Instance')
            instance.numa_topology = samples.factories()[
                'InstanceNUMATopology'](pinned=True)
            return instance

        problems = self.checker('Instance', samples={
            'Instance': [refused]}).check_backports()
        self.assertTrue(problems[0].startswith(
            'Instance 1.0: the sample cannot be backported to 1.0: '),
            problems)
        # As a variant it may be.
        self.assertEqual([], self.checker('Instance', samples={
            'Instance': [lambda: samples.make('Instance'), refused]},
        ).check_backports())
