"""ResourceClass without a database: backports and name rules."""

from resobj import exception
from resobj import objects
from resobj.objects import resource_class
from resobj.tests import base as test_base
from resobj.tests import samples

objects.register_all()

DATA = 'resobj_object.data'
VERSION = 'resobj_object.version'


def _custom():
    return objects.ResourceClass(id=10003, name='CUSTOM_GPU')


class TestBackports(test_base.TestCase):

    def test_standard_class_goes_back_to_1_0_unchanged(self):
        rc = samples.make('ResourceClass')
        old = rc.obj_to_primitive('1.0')
        self.assertEqual('1.0', old[VERSION])
        self.assertEqual({'id': 1, 'name': 'MEMORY_MB'}, old[DATA])

    def test_custom_class_cannot_go_back_to_1_0(self):
        exc = self.assertRaises(exception.ObjectBackportError,
                                _custom().obj_to_primitive, '1.0')
        self.assertIn('CUSTOM_GPU', str(exc))
        self.assertEqual('1.0', exc.kwargs['target'])
        self.assertEqual('CUSTOM_GPU', _custom().obj_to_primitive('1.1')[
            DATA]['name'])

    def test_custom_id_without_a_name_is_refused_too(self):
        rc = objects.ResourceClass(id=10003)
        self.assertRaises(exception.ObjectBackportError,
                          rc.obj_to_primitive, '1.0')
        self.assertEqual({'id': 5}, objects.ResourceClass(
            id=5).obj_to_primitive('1.0')[DATA])

    def test_list_with_a_custom_class_cannot_go_back_to_1_0(self):
        rcs = samples.make('ResourceClassList')
        self.assertEqual(['1.0', '1.0'], [
            item[VERSION] for item in
            rcs.obj_to_primitive('1.0')[DATA]['objects']])
        rcs.objects.append(_custom())
        self.assertRaises(exception.ObjectBackportError,
                          rcs.obj_to_primitive, '1.0')
        # A 1.1 list whose receiver manifest names ResourceClass 1.0 is
        # the same peer: refused as well.
        self.assertRaises(
            exception.ObjectBackportError, rcs.obj_to_primitive, '1.1',
            version_manifest={'ResourceClassList': '1.1',
                              'ResourceClass': '1.0'})
        self.assertEqual('CUSTOM_GPU', rcs.obj_to_primitive('1.1')[DATA][
            'objects'][2][DATA]['name'])


class TestNames(test_base.TestCase):

    def test_valid(self):
        for name in ('CUSTOM_A', 'CUSTOM_GPU_2', 'CUSTOM_' + 'X' * 248):
            resource_class.validate_custom_name(name)

    def test_invalid(self):
        for name in ('VCPU', 'CUSTOM_', 'CUSTOM_a', 'CUSTOM_A B',
                     'CUSTOM_A\n', 'CUSTOM_' + 'X' * 249, None, 7):
            self.assertRaises(exception.InvalidResourceClassName,
                              resource_class.validate_custom_name, name)

    def test_is_standard_follows_the_id(self):
        self.assertTrue(objects.ResourceClass(id=9999).is_standard)
        self.assertFalse(objects.ResourceClass(id=10000).is_standard)
