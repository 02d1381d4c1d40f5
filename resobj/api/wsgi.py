"""``application`` for WSGI servers other than resobj-api's own.

Configuration comes from the files named by ``RESOBJ_CONFIG_FILE``
(colon-separated) or oslo.config's default search for ``resobj.conf``.
The schema is brought to the current revision first, as resobj-api does.
"""

import os

from resobj.api import service

application = service.load_app(
    [p for p in os.environ.get('RESOBJ_CONFIG_FILE', '').split(':') if p])

# Closes the connections loading opened, so that workers forked from here
# do not share them, and settles the collector (a request that builds
# thousands of objects set off collections that scanned all that loading
# built: half that request's CPU).
service.before_serving()
