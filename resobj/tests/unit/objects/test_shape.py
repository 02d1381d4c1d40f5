"""Every version's shape is recorded, and today's code is its own.

``resobj/tests/data/shapes/<Object>/<X.Y>.json`` records each version's
fields and what they hold (resobj.objects.shape), and the fingerprint of
versions recorded from the code. Record a new version with::

    GENERATE_SHAPES=1 tox -e py3 -- resobj.tests.unit.objects.test_shape

which writes the records of the newest versions that have none, and
never rewrites one.
"""

import os

import fixtures

from resobj.objects import fields
from resobj.objects import shape
from resobj.testing import records
from resobj.tests import base
from resobj.tests import object_checks


class TestDescribe(base.TestCase):
    """What a field holds on the wire, and only that."""

    def test_nullable(self):
        self.assertEqual('Integer', shape.describe_field(
            fields.IntegerField()))
        self.assertEqual('Integer or None', shape.describe_field(
            fields.IntegerField(nullable=True)))

    def test_defaults_and_read_only_do_not_travel(self):
        self.assertEqual(
            shape.describe_field(fields.IntegerField()),
            shape.describe_field(fields.IntegerField(default=3,
                                                     read_only=True)))

    def test_element_types_and_their_nullability(self):
        self.assertEqual('Dict(String)', shape.describe_field(
            fields.DictOfStringsField()))
        self.assertEqual('Dict(String or None)', shape.describe_field(
            fields.DictOfNullableStringsField()))
        self.assertEqual('List(Integer)', shape.describe_field(
            fields.ListOfIntegersField()))

    def test_enum_values(self):
        self.assertEqual('Enum(a, b) or None', shape.describe_field(
            fields.EnumField(valid_values=['a', 'b'], nullable=True)))

    def test_child_object_and_the_version_carried(self):
        self.assertEqual('Object(Flavor 1.1) or None', shape.describe_field(
            fields.ObjectField('Flavor', nullable=True), '1.1'))
        self.assertEqual('List(Object(Usage 1.0))', shape.describe_field(
            fields.ListOfObjectsField('Usage'), '1.0'))

    def test_a_projects_own_type_is_named_by_the_library_type(self):
        # resobj's UUID and sorted set travel as the library's types do.
        self.assertEqual('UUID', shape.describe_field(fields.UUIDField()))
        self.assertEqual('Set(Integer)', shape.describe_field(
            fields.SetOfIntegersField()))

    def test_time_zone_awareness(self):
        aware = shape.describe_field(fields.DateTimeField())
        naive = shape.describe_field(fields.DateTimeField(
            tzinfo_aware=False))
        self.assertEqual('DateTime', aware)
        self.assertEqual('DateTime(naive)', naive)

    def test_carried_version_follows_the_pairs(self):
        class Parent:
            obj_relationships = {'child': [('1.1', '1.0'), ('1.3', '1.2')]}

        carried = [shape.carried_version(Parent, 'child', v)
                   for v in ('1.0', '1.1', '1.2', '1.3', '1.4')]
        self.assertEqual([None, '1.0', '1.0', '1.2', '1.2'], carried)


class TestRecordFiles(base.TestCase):

    def test_a_record_is_never_rewritten(self):
        directory = self.useFixture(fixtures.TempDir()).path
        record = records.Record({'a': 'Integer'}, '1.0-abc')
        records.write(directory, 'Thing', '1.0', record)
        self.assertEqual(record, records.read(directory, 'Thing', '1.0'))
        self.assertRaises(FileExistsError, records.write, directory,
                          'Thing', '1.0', records.Record({}, None))
        self.assertIsNone(records.read(directory, 'Thing', '1.1'))
        self.assertEqual({'Thing': ['1.0']}, records.recorded(directory))


class TestRecordedShapes(base.TestCase):

    def setUp(self):
        super().setUp()
        self.checker = object_checks.checker()
        if os.environ.get('GENERATE_SHAPES'):
            self.checker.record_missing_shapes()

    def assertNoProblems(self, problems):
        if problems:
            self.fail('\n'.join(problems))

    def test_every_version_is_recorded_and_today_is_its_own(self):
        self.assertNoProblems(self.checker.check_shapes())

    def test_relationships_name_every_child_version(self):
        self.assertNoProblems(self.checker.check_relationships())
