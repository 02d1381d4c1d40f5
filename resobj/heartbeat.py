"""A service's Service record, registered at start and kept alive.

resobj-conductor and each resobj-api worker run one ``Heartbeat``: it
registers the service (binary, host, this code's version) when started
and reports it alive every ``[DEFAULT] report_interval`` seconds, so
that Service.get_minimum_version and resobj-status see it as live.
Compute services report at each audit of their trackers instead.
"""

import threading

from oslo_log import log as logging

from resobj import context as resobj_context
from resobj import exception
from resobj import objects
from resobj.objects import service as service_obj

LOG = logging.getLogger(__name__)


class Heartbeat:
    """Registers ``binary`` on ``conf.host`` and reports it periodically."""

    def __init__(self, conf, binary, topic=None):
        self.conf = conf
        self.binary = binary
        self.topic = topic
        self.context = resobj_context.get_admin_context()
        self.service = None
        # Whether the last report failed (the next one that does not
        # says so).
        self._failing = False
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='%s-heartbeat' % binary)

    def start(self, strict=True):
        """Register now, then report in the background.

        ``strict``: a failed registration raises; otherwise it is logged
        and the first beat registers (a web worker must serve even while
        the database is briefly away).
        """
        objects.register_all()
        try:
            self._report()
        except exception.ResobjException as exc:
            if strict:
                raise
            self._failed('register', exc)
        self._thread.start()

    def _failed(self, what, exc):
        """One line: what failed, why, and what happens next.

        No traceback: the database (or the conductor) being away is an
        event to report, not a fault of this code.
        """
        self._failing = True
        cause = exc.kwargs.get('cause')
        LOG.warning('%(binary)s on %(host)s could not %(what)s: '
                    '%(error)s%(cause)s; trying again in %(interval)s s',
                    {'binary': self.binary, 'host': self.conf.host,
                     'what': what, 'error': exc,
                     'cause': ' (%s)' % cause if cause else '',
                     'interval': self.conf.report_interval})

    def _report(self):
        self.service = service_obj.report_alive(
            self.context, self.service, self.conf.host, self.binary,
            topic=self.topic)
        if self._failing:
            self._failing = False
            LOG.info('%s on %s reported itself alive again', self.binary,
                     self.conf.host)

    def _run(self):
        while not self._stopping.wait(self.conf.report_interval):
            try:
                self._report()
            except exception.ResobjException as exc:
                # The database may be away for a while; the next beat
                # tries again, and missing beats mark this service down.
                self._failed('report itself alive', exc)

    def stop(self):
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
