"""oslo.versionedobjects, imported without its import-time noise.

oslo.versionedobjects imports oslo.messaging, which imports eventlet and
oslo.service; both warn at import time that eventlet is deprecated.
resobj never runs on eventlet, so those warnings tell its users nothing.
They are silenced only while these modules are first imported, and only
for the modules that raise them: every other warning still shows.
"""

import warnings

with warnings.catch_warnings():
    warnings.filterwarnings(
        'ignore', module=r'oslo_service(\.|$)')
    warnings.filterwarnings(
        'ignore', category=DeprecationWarning,
        module=r'oslo_utils\.eventletutils$')
    from oslo_versionedobjects import base  # noqa: F401
    from oslo_versionedobjects import exception  # noqa: F401
    from oslo_versionedobjects import fields  # noqa: F401
    from oslo_versionedobjects import fixture  # noqa: F401
