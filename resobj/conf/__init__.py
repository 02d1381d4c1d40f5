"""Configuration options of resobj.

Nothing here touches a global ``cfg.CONF``: callers create a
``ConfigOpts``, pass it to :func:`register_opts`, then parse it.
"""

from resobj.conf import api
from resobj.conf import compute
from resobj.conf import database
from resobj.conf import paths
from resobj.conf import resource_providers
from resobj.conf import service


def register_opts(conf):
    """Register every resobj option group on ``conf`` (a ``ConfigOpts``)."""
    paths.register_opts(conf)
    api.register_opts(conf)
    database.register_opts(conf)
    compute.register_opts(conf)
    resource_providers.register_opts(conf)
    service.register_opts(conf)
