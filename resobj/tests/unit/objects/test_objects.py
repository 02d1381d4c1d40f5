"""Object fingerprints, version histories and compatibility routines.

``object_data`` pins the fingerprint of every registered object. When a
test here fails after you changed an object, bump its VERSION, add its
``# Version X.Y`` history line and backport, then regenerate with::

    GENERATE_HASHES=1 tox -e py3 -- resobj.tests.unit.objects.test_objects

which rewrites the block below in place; review the diff before
committing. A changed hash without a version bump is never right.
"""

import inspect
import os
import pprint
import re

from oslo_utils import versionutils

from resobj.objects import fingerprint
from resobj.tests import base

# BEGIN object_data (generated: see the module docstring)
object_data = {
    'Allocation': '1.2-590b401e62722e821e446649dfca0bd8',
    'AllocationList': '1.3-df38e1f7bd11993e203e0fd03e487877',
    'ComputeNode': '1.6-887ea9f81ed19e4644cd8782bbe15980',
    'ComputeNodeList': '1.6-c2e5abfdf582bfe2dbe6547eccf17168',
    'Consumer': '1.1-c0d1bf019a4c84d44c6520db7cac77f9',
    'Flavor': '1.1-7d344875d61733cd87435319d5427e8c',
    'FlavorList': '1.1-cebedb524a28ab0dc58cba7566fbd975',
    'Instance': '1.5-8f021f1a850fa0f2e20f713b1674e275',
    'InstanceList': '1.6-626ce38571dbe34d67bf53520f16bf7a',
    'InstanceNUMACell': '1.0-6f2e5fe59238c7707ec1148ca31dfedc',
    'InstanceNUMATopology': '1.0-39aee7c277873204cd9e0f83df7d410e',
    'InstancePCIRequest': '1.0-09d3f1afa7b8ed6a134ccb1ff034b6db',
    'Inventory': '1.1-472e5a324faada9bef2653df3afc0d4a',
    'InventoryList': '1.1-33c6c1727889187711e7bc5c8306b41e',
    'Migration': '1.2-33770e2837f19990e313364e9d5fa588',
    'MigrationList': '1.2-dd55899fc7e92424dd779741868d90c6',
    'NUMACell': '1.0-7ce135d9769325af250fbe5c17ace741',
    'NUMATopology': '1.0-08b00ca8ca600fe3941d7d8232720033',
    'PciDevice': '1.3-c3cc48fe74e33e0c2d5ab62ffd2f619e',
    'PciDeviceList': '1.4-3581a1a1e10527e1116a2a601cba6587',
    'PciDevicePool': '1.1-83a5c9c7ecf3c442736ccadf46118d61',
    'PciDevicePoolList': '1.1-ebc8542000731792344fadee7a40537e',
    'Project': '1.0-d011fd10c01923ebf8c2cb7d69c041c7',
    'ResourceClass': '1.1-606492bd9d98d6132ba1ede99efa066d',
    'ResourceClassList': '1.1-6da734eb2aff44a16254723c4409d8ca',
    'ResourceProvider': '1.1-28324a09a55c05d45bed10f6def1d27c',
    'ResourceProviderList': '1.1-cfbdfed83c2bdcab9a7c4458da5ab1e6',
    'Service': '1.5-7aae1d1f0b195cd9e8078ebe4de8a037',
    'ServiceList': '1.5-8dc56ea2d4a0d7e5d7e0dfca32d07b46',
    'Trait': '1.1-60212c161dc99d23090398669adb360f',
    'TraitList': '1.1-3f58acb30166a1aa54ca5fe13c565e20',
    'Usage': '1.1-19a105da9b634dfcded86b8e2569d091',
    'UsageList': '1.2-553edeaf8cd019a374be863337212f43',
    'User': '1.0-d011fd10c01923ebf8c2cb7d69c041c7',
}
# END object_data

_BLOCK = re.compile(r'(# BEGIN object_data[^\n]*\n).*?(# END object_data)',
                    re.DOTALL)


def _source_file():
    return os.path.splitext(os.path.abspath(__file__))[0] + '.py'


def _rewrite_object_data(hashes):
    path = _source_file()
    with open(path, encoding='utf-8') as f:
        source = f.read()
    body = 'object_data = %s\n' % pprint.pformat(hashes, indent=4, width=1)
    body = body.replace('{   ', '{\n    ').replace("'}", "',\n}")
    new = _BLOCK.sub(lambda m: m.group(1) + body + m.group(2), source)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(new)


class TestObjectVersions(base.TestCase):

    def test_versions(self):
        hashes = fingerprint.fingerprints()
        if os.environ.get('GENERATE_HASHES'):
            _rewrite_object_data(hashes)
            self.fail('GENERATE_HASHES is set: object_data was rewritten '
                      'in %s; review the diff and run again without it'
                      % _source_file())
        expected, actual = fingerprint.checker().test_hashes(
            object_data, extra_data_func=fingerprint.extra_data)
        self.assertEqual(
            expected, actual,
            'Some objects have changed; bump their versions, add the '
            'history lines and backports, then update their hashes here '
            '(see the module docstring).')

    def test_cli_and_test_agree(self):
        # resobj-manage objects fingerprints prints fingerprints(); the
        # pinned data must be exactly that table.
        self.assertEqual(object_data, fingerprint.fingerprints())

    def test_compatibility_routines(self):
        # Every registered version of every object backports to each
        # older minor version of its major without error, using the
        # receiver's manifest as a real peer would.
        fingerprint.checker().test_compatibility_routines(use_manifest=True)

    def test_relationships_in_order(self):
        fingerprint.checker().test_relationships_in_order()

    def test_every_version_has_a_history_line(self):
        for name, classes in fingerprint.object_classes().items():
            cls = classes[0]
            major, minor = versionutils.convert_version_to_tuple(
                cls.VERSION)
            source = inspect.getsource(cls)
            documented = set(re.findall(r'#\s*Version (\d+\.\d+)\s*:',
                                        source))
            missing = ['%d.%d' % (major, m) for m in range(minor + 1)
                       if '%d.%d' % (major, m) not in documented]
            self.assertEqual([], missing,
                             '%s lacks "# Version X.Y: ..." lines for %s'
                             % (name, ', '.join(missing)))

    def test_only_resobj_objects_are_listed(self):
        for name, classes in fingerprint.object_classes().items():
            self.assertEqual('resobj', classes[0].OBJ_PROJECT_NAMESPACE)
