"""The console scripts.

Imported before any of them: oslo.messaging (which the conductor's RPC
API imports before anything of resobj's) is first imported through
``resobj.objects._ovo``, which silences eventlet's import-time
deprecation warnings, so that no command starts with them on stderr.
"""

from resobj.objects import _ovo  # noqa: F401
