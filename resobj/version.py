"""This code's release, and the versions it runs at.

``RELEASE`` is the release this code is. setup.cfg's ``[metadata]
version``, from which pbr versions the package, says the same
(``resobj/tests/unit/test_version.py`` checks it): the code itself
carries its release, so it reports it however it was installed or
cloned. Raise both when a release is cut.

The service version (resobj.objects.service) and the RPC API versions
tell what a release can run beside; every command's ``--version`` and
every service's start line give them with the release (:func:`describe`).
"""

from resobj.compute import rpcapi as compute_rpcapi
from resobj.conductor import rpcapi as conductor_rpcapi
from resobj.objects import service as service_obj

RELEASE = '1.0.0'


def version_string():
    """This code's release, for example ``1.0.0``."""
    return RELEASE


def describe():
    """The release with the service and RPC API versions it runs at.

    ``1.0.0 (service version 4, RPC: conductor 1.0, compute 1.1)``.
    """
    return ('%s (service version %d, RPC: conductor %s, compute %s)'
            % (RELEASE, service_obj.SERVICE_VERSION, conductor_rpcapi.VERSION,
               compute_rpcapi.VERSION))


def version_option():
    """What ``--version`` prints: ``<command> <describe()>``."""
    # argparse replaces %(prog)s with the command's name.
    return '%(prog)s ' + describe()
