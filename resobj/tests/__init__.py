# Import oslo.versionedobjects through resobj's quiet importer before any
# test module imports it (or oslo_versionedobjects.fixture) directly, so
# the eventlet deprecation warnings it triggers on import never reach the
# test output; see resobj/objects/_ovo.py.
from resobj.objects import _ovo  # noqa: F401
