"""The ``oslo.config.opts`` entry point: every option resobj defines."""

from resobj.conf import api
from resobj.conf import compute
from resobj.conf import database
from resobj.conf import paths
from resobj.conf import resource_providers
from resobj.conf import service


def list_opts():
    return [
        ('DEFAULT', paths.list_opts() + service.list_opts()),
        ('api', api.list_opts()),
        ('compute', compute.list_opts()),
        ('database', database.list_opts()),
        ('resource_providers', resource_providers.list_opts()),
    ]
