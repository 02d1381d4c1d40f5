"""Claims: what a tracker hands back for a reservation it made.

A claim is a context manager: an exception inside its ``with`` block
gives the resources back (``abort``), so a failed build or move never
leaks a reservation. The checks themselves run in the tracker before
the claim exists (resobj.compute.usage.check, resobj.compute.pci.select);
a claim that could not be made raises there and changes nothing.
"""

import contextlib
import threading

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class logged_undo:
    """Log and swallow the failure of an undo step.

    For giving back what a failed claim took: the error that made the
    claim fail is the one to raise, not that of its clean-up.
    """

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is not None:
            LOG.exception('Failed to %s', self.what)
        return True


class Operations:
    """The consumers an operation is under way for, and when touched.

    One operation at a time per consumer (``exclusive``); the audit
    asks which consumers were touched since it began to read
    (``touched_since``) and leaves them alone. ``lock`` is the
    tracker's: this state is memory it guards.
    """

    def __init__(self, lock):
        self._lock = lock
        self._idle = threading.Condition(lock)
        self._busy = set()
        self._touched = {}
        self._sequence = 0

    @contextlib.contextmanager
    def exclusive(self, *consumers):
        """Wait (lock released) while another runs on any of them."""
        wanted = set(consumers)
        with self._lock:
            while self._busy & wanted:
                self._idle.wait()
            self._busy |= wanted
            self._touch(wanted)
        try:
            yield
        finally:
            with self._lock:
                self._busy -= wanted
                self._touch(wanted)
                self._idle.notify_all()

    def _touch(self, consumers):
        self._sequence += 1
        for consumer in consumers:
            self._touched[consumer] = self._sequence

    def mark(self):
        """A point in time for ``touched_since``."""
        with self._lock:
            return self._sequence

    def touched_since(self, mark):
        """Consumers busy now or touched after ``mark``.

        Forgets older touches: audits run one at a time, and the next
        one marks later.
        """
        with self._lock:
            self._touched = {c: seq for c, seq in self._touched.items()
                             if seq > mark}
            return self._busy | set(self._touched)


class UnitOfWork:
    """The undo steps of one claim, run newest first if it fails.

    Each step that changes something (in memory, in the database, in
    placement) adds the step that reverses it. Leaving the ``with``
    block on an exception runs them all, each logged and swallowed
    (``logged_undo``), and lets the claim's own error through; leaving
    it normally, or ``commit()``, drops them.
    """

    def __init__(self, what):
        self.what = what
        self._steps = []

    def add(self, step, *args):
        """Undo ``step(*args)`` if the claim fails from here on."""
        self._steps.append((step, args))

    def commit(self):
        self._steps = []

    def undo(self):
        while self._steps:
            step, args = self._steps.pop()
            with logged_undo('%s (%s)' % (self.what, step.__name__)):
                step(*args)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is not None:
            self.undo()
        self.commit()
        return False


class NopClaim:
    """A claim that holds nothing (for operations that need none)."""

    migration = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if exc_type is not None:
            self.abort()

    def abort(self):
        pass


class Claim(NopClaim):
    """An instance's resources on the tracker's node."""

    def __init__(self, context, tracker, instance, payload, pci_devices):
        self.context = context
        self.tracker = tracker
        self.instance = instance
        self.payload = payload
        self.pci_devices = pci_devices

    def abort(self):
        LOG.debug('Aborting claim of %s on %s', self.instance.uuid,
                  self.tracker.nodename)
        self.tracker.abort_instance_claim(self.context, self.instance)


class MoveClaim(Claim):
    """A resize, cold migration or rebuild's resources on the destination.

    ``migration`` is the Migration object the claim created.
    """

    def __init__(self, context, tracker, instance, payload, pci_devices,
                 migration):
        super().__init__(context, tracker, instance, payload, pci_devices)
        self.migration = migration

    def abort(self):
        LOG.debug('Aborting move claim of %s on %s', self.instance.uuid,
                  self.tracker.nodename)
        self.tracker.drop_move_claim(self.context, self.instance,
                                     self.migration, prefix='new')
