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

# Closes the connections loading opened, so that workers forked from here
# do not share them, and settles the collector (a request that builds
# thousands of objects set off collections that scanned all that loading
# built: half that request's CPU).
service.before_serving()

# A server that imports this module in each worker (gunicorn without
# --preload, uWSGI with lazy-apps) serves from this process: its
# connection is warmed up here. One that forks workers from the process
# that imported it leaves this connection to that process, and a child
# forgets it rather than share it.
os.register_at_fork(after_in_child=facade.forget_inherited_connections)
service.warm_up()
