"""Usage and UsageList without a database: backports."""

from oslo_serialization import jsonutils

from resobj import objects
from resobj.objects import base
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'


def _load(primitive):
    return base.ResobjObject.obj_from_primitive(
        jsonutils.loads(jsonutils.dumps(primitive)))


class TestUsageBackports(test_base.TestCase):

    def test_1_1_keeps_type_and_count(self):
        data = samples.make('Usage').obj_to_primitive('1.1')[DATA]
        self.assertEqual(('INSTANCE', 3),
                         (data['consumer_type'], data['consumer_count']))

    def test_1_0_drops_type_and_count_only(self):
        old = samples.make('Usage').obj_to_primitive('1.0')
        self.assertEqual('1.0', old[VERSION])
        self.assertEqual({'resource_class': 'VCPU', 'usage': 12}, old[DATA])

    def test_list_1_2_keeps_the_provider_generation(self):
        usages = _load(samples.make('UsageList').obj_to_primitive('1.2'))
        self.assertEqual(7, usages.resource_provider_generation)

    def test_list_1_1_drops_the_provider_generation(self):
        old = samples.make('UsageList').obj_to_primitive('1.1')
        self.assertNotIn('resource_provider_generation', old[DATA])
        self.assertEqual(3, len(_load(old)))

    def test_list_1_1_keeps_rows_per_type(self):
        usages = _load(samples.make('UsageList').obj_to_primitive('1.1'))
        self.assertEqual(
            [('VCPU', 'INSTANCE', 12), ('MEMORY_MB', 'INSTANCE', 24576),
             ('VCPU', 'unknown', 2)],
            [(u.resource_class, u.consumer_type, u.usage) for u in usages])

    def test_list_1_0_sums_rows_of_one_class(self):
        sample = samples.make('UsageList')
        usages = _load(sample.obj_to_primitive('1.0'))
        self.assertEqual('1.0', usages.VERSION)
        # Without the type, two VCPU rows would contradict each other.
        self.assertEqual([('VCPU', 14), ('MEMORY_MB', 24576)],
                         [(u.resource_class, u.usage) for u in usages])
        self.assertEqual(sample.as_dict(), usages.as_dict())
        # The object itself is unchanged by its backport.
        self.assertEqual(12, sample[0].usage)
        self.assertEqual(3, len(sample))
