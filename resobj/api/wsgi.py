"""``application`` for WSGI servers other than resobj-api's own.

Configuration comes from the files named by ``RESOBJ_CONFIG_FILE``
(colon-separated) or oslo.config's default search for ``resobj.conf``.
The schema is brought to the current revision first, as resobj-api does.
"""

import gc
import os

from resobj.api import service

application = service.load_app(
    [p for p in os.environ.get('RESOBJ_CONFIG_FILE', '').split(':') if p])

# What loading built (modules, the schema's metadata, policies, schemas)
# lives as long as the process: keep the cyclic collector from scanning
# it again on every collection, as resobj-api does before it forks. A
# request that builds thousands of objects (allocation candidates) set
# off collections that scanned all of it: half that request's CPU.
gc.collect()
gc.freeze()
