"""The version cap of an RPC API's calls, as ``[upgrade_levels]`` sets it.

A version (``1.0``) or nothing is a fixed cap. ``auto`` follows the
cloud: the API's own resolution function (``version_cap`` in
resobj/compute/rpcapi.py and resobj/conductor/rpcapi.py) reads the
oldest live service's version and maps it through the API's table of
the RPC versions each service version serves. :class:`VersionCap`
calls that function at the first call and again once its answer is
``[upgrade_levels] auto_interval`` seconds old, so a running service
caps its calls for an older service that starts (a node rolled back)
and lifts the cap once the last older one is down, without a restart.
Each change is logged.
"""

import threading
import time

from oslo_log import log as logging

from resobj import exception
from resobj import objects
from resobj.objects import service as service_obj

LOG = logging.getLogger(__name__)

AUTO = 'auto'


def served_by(table, service_version):
    """The newest RPC version a service of ``service_version`` serves.

    ``table`` is an API's ((service version, RPC version), ...), oldest
    first; a version older than its first row serves the first row's.
    """
    served = table[0][1]
    for since, version in table:
        if service_version >= since:
            served = version
    return served


def auto_cap(table, oldest, current):
    """What ``auto`` caps at, the oldest live service being ``oldest``.

    None (no cap) when no such service runs (0) or the oldest runs
    ``current`` (this code's service version) or newer; otherwise what
    the oldest serves.
    """
    if not oldest or oldest >= current:
        return None
    return served_by(table, oldest)


def resolve(setting, context, binary, table):
    """The cap ``setting`` (an ``[upgrade_levels]`` value) asks for now.

    A version, or None, as set; ``auto``: :func:`auto_cap` of the oldest
    live ``binary`` service, through the API's ``table``.
    """
    if setting != AUTO:
        return setting
    oldest = objects.Service.get_minimum_version(context, binary)
    LOG.debug('Oldest live %s service: version %s', binary, oldest)
    return auto_cap(table, oldest, service_obj.SERVICE_VERSION)


class VersionCap:
    """The cap ``[upgrade_levels] <api>`` puts on one client's calls.

    ``resolve()`` is the API's resolution function; it is called again
    for ``auto`` once its answer is ``interval`` seconds old. ``floor`` is
    the oldest version of the API, every service of it serves: a call
    made while the cap is being resolved (the resolution's own call to a
    conductor, for the conductor API) is capped there.
    """

    def __init__(self, api, setting, resolve, interval, floor):
        self.api = api
        self.setting = setting
        self._resolve = resolve
        self._interval = interval
        self._floor = floor
        self._cap = None
        self._resolved_at = None
        self._lock = threading.Lock()
        self._resolving = threading.local()

    @property
    def auto(self):
        return self.setting == AUTO

    def get(self):
        """The cap for a call made now (a version string, or None)."""
        if not self.auto:
            return self.setting
        if getattr(self._resolving, 'active', False):
            return self._floor if self._resolved_at is None else self._cap
        if self._fresh():
            return self._cap
        # One thread resolves; others go on with the previous answer, or
        # wait for the first.
        if not self._lock.acquire(blocking=self._resolved_at is None):
            return self._cap
        try:
            if not self._fresh():
                self._refresh()
            return self._cap
        finally:
            self._lock.release()

    def _fresh(self):
        return (self._resolved_at is not None and
                time.monotonic() - self._resolved_at < self._interval)

    def _refresh(self):
        first = self._resolved_at is None
        self._resolving.active = True
        try:
            cap = self._resolve()
        except exception.ResobjException:
            if first:
                raise
            # The cap stays as it was; the next call after the interval
            # tries again.
            LOG.warning('[upgrade_levels] %(api)s = auto: could not read '
                        'the oldest live %(api)s service; calls stay capped '
                        'at %(cap)s', {'api': self.api, 'cap': self._cap},
                        exc_info=True)
            self._resolved_at = time.monotonic()
            return
        finally:
            self._resolving.active = False
        if first or cap != self._cap:
            if cap is None:
                LOG.info('[upgrade_levels] %(api)s = auto: %(api)s RPC API '
                         'calls are not capped (%(was)s): no live %(api)s '
                         'service runs an older service version',
                         {'api': self.api,
                          'was': 'at start' if first else
                          'no longer capped at %s' % self._cap})
            else:
                LOG.info('[upgrade_levels] %(api)s = auto: %(api)s RPC API '
                         'calls capped at %(cap)s (%(was)s) for the oldest '
                         'live %(api)s service',
                         {'api': self.api, 'cap': cap,
                          'was': 'at start' if first else
                          'was %s' % (self._cap or 'not capped')})
        self._cap = cap
        self._resolved_at = time.monotonic()
