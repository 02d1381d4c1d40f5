"""resobj's own objects under resobj.testing.ObjectChecker.

The checker is what a downstream project runs over its objects; resobj
runs it over its own, with the samples of resobj.tests.samples and the
shape records of resobj/tests/data/shapes. Pinned fingerprints and
version histories are checked by test_objects, as before.
"""

import os

from resobj import testing
from resobj.tests import samples

SHAPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                      'shapes')
RECORD_HINT = ('GENERATE_SHAPES=1 tox -e py3 -- '
               'resobj.tests.unit.objects.test_shape')


def checker():
    return testing.ObjectChecker(
        'resobj', samples.all_samples(), SHAPES,
        converted=samples.conversions(), record_hint=RECORD_HINT)
