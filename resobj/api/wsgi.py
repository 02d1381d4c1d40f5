"""``application`` for WSGI servers other than resobj-api's own.

Configuration comes from the files named by ``RESOBJ_CONFIG_FILE``
(colon-separated) or oslo.config's default search for ``resobj.conf``.
The schema is brought to the current revision first, as resobj-api does.
"""

import os

from resobj.api import service
from resobj.db import facade

application = service.load_app(
    [p for p in os.environ.get('RESOBJ_CONFIG_FILE', '').split(':') if p])

# Loading synced the schema over pooled connections. A server that loads
# the application once and then forks its workers (gunicorn --preload,
# uWSGI without lazy-apps) would hand every worker the same open
# connections, and two processes would talk over one socket. Closed here,
# each worker opens its own, as resobj-api's do.
facade.get_engine().dispose()

# As resobj-api does before it forks: a request that builds thousands of
# objects (allocation candidates) set off collections that scanned all
# that loading built, half that request's CPU.
service.settle_gc()
