"""The compute errors rebuilt from what oslo.messaging sends of them.

A remote error reaches the caller as its class built again from the
raising side's ``args`` and ``kwargs`` (``klass(*args, **kwargs)``): a
value a caller acts on must be among the kwargs to survive the trip.
The trip itself, over RabbitMQ, is in
tests/functional/compute/test_service.py.
"""

from resobj.compute import exception
from resobj.tests import base

SHORT = [{'resource_class': 'VCPU', 'provider': 'rp-1', 'requested': 4,
          'free': 1, 'short': 3}]


def rebuilt(error):
    """``error`` as the receiving side of an RPC call builds it again."""
    return type(error)(*error.args, **error.kwargs)


class TestRebuilt(base.TestCase):

    def test_shortages(self):
        error = rebuilt(exception.ComputeResourcesUnavailable(
            node='n-1', consumer='i-1', shortages=SHORT))
        self.assertEqual(SHORT, error.shortages)
        self.assertEqual('Insufficient resources on n-1 for i-1: VCPU on '
                         'rp-1: requested 4, free 1, short by 3', str(error))

    def test_pci_shortages(self):
        short = [{'spec': "{'vendor_id': 'v'}", 'requested': 2, 'free': 1,
                  'short': 1}]
        error = rebuilt(exception.PciDeviceRequestFailed(
            node='n-1', consumer='i-1', shortages=short))
        self.assertEqual(short, error.shortages)
        self.assertIn('requested 2, available 1', str(error))

    def test_a_moved_generation(self):
        for moved in (True, False):
            error = rebuilt(exception.AllocationConflict(
                consumers='i-1', detail='refused', generation=moved))
            self.assertIs(moved, error.generation)
