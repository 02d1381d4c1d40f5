"""The mistakes an object change is known to make, and who must catch them.

test_mistakes applies each one to a copy of the ``resobj`` package,
follows the documented regeneration steps a developer would (the
``GENERATE_*`` variables), then runs the tests named in ``caught``: each
must fail with each fragment in its message. An untouched copy must pass
the GUARDRAILS and every N-1 test named here. Add a mistake whenever one
slips through; name the object and the version in what must be caught.
"""

import typing


class Mistake(typing.NamedTuple):
    """One mistake, as a developer makes it."""

    name: str
    # (path under resobj/, text, replacement): each text occurs once.
    edits: tuple
    # Files under resobj/ deleted before regenerating.
    deleted: tuple = ()
    # The GENERATE_* variables set for one run of the regenerating tests.
    regenerate: tuple = ()
    # {test id: [fragments its failure message must hold]}
    caught: dict = {}


# The guardrail tests of the unit suite, which an untouched copy passes.
GUARDRAILS = (
    'resobj.tests.unit.objects.test_objects',
    'resobj.tests.unit.objects.test_golden',
    'resobj.tests.unit.objects.test_shape',
    'resobj.tests.unit.objects.test_backport',
)

# What each GENERATE_* variable's documented command runs.
REGENERATING = {
    'GENERATE_HASHES':
        'resobj.tests.unit.objects.test_objects.TestObjectVersions'
        '.test_versions',
    'GENERATE_GOLDEN':
        'resobj.tests.unit.objects.test_golden.TestGoldenPrimitives'
        '.test_every_version_has_a_golden_file',
    'GENERATE_SHAPES':
        'resobj.tests.unit.objects.test_shape.TestRecordedShapes'
        '.test_every_version_is_recorded_and_today_is_its_own',
}

BACKPORTS = ('resobj.tests.unit.objects.test_backport.TestBackports'
             '.test_every_sample_backports_to_every_version')
SAMPLES = ('resobj.tests.unit.objects.test_backport.TestBackports'
           '.test_samples_set_every_field')
SHAPES = REGENERATING['GENERATE_SHAPES']
GOLDEN = ('resobj.tests.unit.objects.test_golden.TestGoldenPrimitives'
          '.test_backports_reproduce_the_golden_files')
N_MINUS_1_STRICT = ('resobj.tests.upgrade.test_objects'
                    '.TestObjectsAcrossReleases'
                    '.test_todays_objects_backported_load_in_n_minus_1')
N_MINUS_1_GOLDEN = ('resobj.tests.upgrade.test_golden'
                    '.TestGoldenFilesAgainstNMinus1'
                    '.test_n_minus_1_writes_the_committed_files')
N_MINUS_1_FINGERPRINTS = ('resobj.tests.upgrade.test_versions'
                          '.TestVersionsAgainstNMinus1'
                          '.test_a_version_keeps_its_fingerprint')
N_MINUS_1_RECORDS = ('resobj.tests.upgrade.test_versions'
                     '.TestVersionsAgainstNMinus1'
                     '.test_released_versions_keep_their_records')

INSTANCE = 'objects/instance.py'

# Instance 1.6 adds hostname, InstanceList 1.7 carries it: history lines,
# relationships, regenerated hashes, golden files and shape records;
# everything but the backport.
_NEW_FIELD = (
    (INSTANCE, "        'node': fields.StringField(nullable=True),\n",
     "        'node': fields.StringField(nullable=True),\n"
     "        'hostname': fields.StringField(nullable=True),\n"),
    (INSTANCE, "    VERSION = '1.5'\n",
     "    # Version 1.6: adds hostname\n    VERSION = '1.6'\n"),
    (INSTANCE, "    # Version 1.6: Instance 1.5\n    VERSION = '1.6'\n",
     "    # Version 1.6: Instance 1.5\n    # Version 1.7: Instance 1.6\n"
     "    VERSION = '1.7'\n"),
    (INSTANCE, "('1.6', '1.5')],", "('1.6', '1.5'), ('1.7', '1.6')],"),
)
_SAMPLE_SETS_IT = (
    ('tests/samples/instance.py', "node='compute-1.example.org', ",
     "node='compute-1.example.org', hostname='vm-1.example.org', "),
)
_EVERYTHING = ('GENERATE_HASHES', 'GENERATE_GOLDEN', 'GENERATE_SHAPES')

MISTAKES = (
    Mistake(
        'forgotten backport, the sample setting the new field',
        _NEW_FIELD + _SAMPLE_SETS_IT, regenerate=_EVERYTHING,
        caught={
            BACKPORTS: ['Instance 1.5: the backport carries hostname, which '
                        'Instance 1.5 does not have'],
            GOLDEN: ['Instance 1.0 backport changed'],
            N_MINUS_1_STRICT: ['N-1 does not know Instance 1.4 (Instance): '
                               'hostname'],
        }),
    Mistake(
        'forgotten backport, the sample leaving the new field unset',
        _NEW_FIELD, regenerate=_EVERYTHING,
        caught={
            SAMPLES: ['Instance sample leaves Instance.hostname unset'],
            BACKPORTS: ['Instance 1.6: the backport lacks hostname, which '
                        'Instance 1.6 has'],
        }),
    Mistake(
        'a field added without a version bump, hashes refreshed',
        _NEW_FIELD[:1] + _SAMPLE_SETS_IT, regenerate=('GENERATE_HASHES',),
        caught={
            SHAPES: ['Instance 1.5: field hostname (String or None) is not '
                     'in the recorded shape of Instance 1.5'],
            BACKPORTS: ['Instance 1.5: the backport carries hostname'],
        }),
    Mistake(
        'a type changed without a version bump, hashes refreshed',
        ((INSTANCE,
          "        'vcpus': fields.NonNegativeIntegerField(nullable=True),\n",
          "        'vcpus': fields.IntegerField(nullable=True),\n"),),
        regenerate=('GENERATE_HASHES',),
        caught={
            SHAPES: ['Instance 1.5: field vcpus is Integer or None, but '
                     'Instance 1.5 was recorded with NonNegativeInteger or '
                     'None'],
        }),
    Mistake(
        'a backport that drops the wrong field',
        ((INSTANCE, "        'booted_from_volume': '1.3',\n",
          "        'ephemeral_gb': '1.3',\n"),),
        caught={
            BACKPORTS: ['Instance 1.2: the backport carries '
                        'booted_from_volume, which Instance 1.2 does not '
                        'have',
                        'Instance 1.2: the backport lacks ephemeral_gb, '
                        'which Instance 1.2 has'],
            GOLDEN: ['Instance 1.0 backport changed'],
        }),
    Mistake(
        'golden files regenerated over released versions',
        (('objects/pci_device.py',
          "                extra_info[PHYS_FUNCTION] = parent_addr\n",
          "                extra_info.pop(PHYS_FUNCTION, None)\n"),),
        deleted=('tests/data/primitives/PciDevice/1.0.json',
                 'tests/data/primitives/PciDevice/1.1.json',
                 'tests/data/primitives/PciDeviceList/1.0.json',
                 'tests/data/primitives/PciDeviceList/1.1.json'),
        regenerate=('GENERATE_GOLDEN',),
        caught={
            N_MINUS_1_GOLDEN: ["'PciDevice 1.0'", "'PciDevice 1.1'"],
            BACKPORTS: ['PciDevice 1.1: PciDevice.parent_addr/extra_info '
                        'does not convert back'],
        }),
    Mistake(
        'a shape record recorded again over a released version',
        (('objects/flavor.py',
          "        'swap': fields.NonNegativeIntegerField(),\n",
          "        'swap': fields.IntegerField(),\n"),),
        deleted=('tests/data/shapes/Flavor/1.1.json',),
        regenerate=('GENERATE_HASHES', 'GENERATE_SHAPES'),
        caught={
            N_MINUS_1_FINGERPRINTS: ['Flavor 1.1: the N-1 release'],
            N_MINUS_1_RECORDS: ['Flavor 1.1: the record'],
        }),
)
