"""The compute's record of recent call outcomes, by idempotency key.

A state-changing compute RPC (1.1) carries an idempotency key: one uuid
per logical call, the same on each of its retries. The first call with
a key runs; a repeat gets what the first answered (its return value, or
its error raised again) without running anything; a repeat that arrives
while the first still runs waits for it. So a caller whose reply was
lost can send again and never have a build or a move carried out twice.

The record lives in memory and is bounded: at most ``size`` keys, each
kept for ``max_age`` seconds after its call finished (the oldest go
first). A compute that restarts forgets it; for that case each method is
also idempotent by construction where it can be (see
resobj.compute.manager.ComputeEndpoint and doc/source/user/upgrade.rst).
"""

import collections
import threading
import time


class _Outcome:

    def __init__(self):
        self.done = threading.Event()
        self.finished_at = None
        self.value = None
        self.error = None

    def answer(self):
        if self.error is not None:
            raise self.error
        return self.value


class OutcomeRecord:
    """{idempotency key: outcome} of recent calls, bounded."""

    def __init__(self, size=1000, max_age=3600, clock=time.monotonic):
        self.size = size
        self.max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._outcomes = collections.OrderedDict()

    def __len__(self):
        with self._lock:
            return len(self._outcomes)

    def run(self, key, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` once per ``key``; repeats get its answer.

        Without a key (a 1.0 caller), simply runs ``fn``.
        """
        if key is None:
            return fn(*args, **kwargs)
        with self._lock:
            self._forget_old()
            outcome = self._outcomes.get(key)
            first = outcome is None
            if first:
                outcome = self._outcomes[key] = _Outcome()
        if not first:
            outcome.done.wait()
            return outcome.answer()
        try:
            outcome.value = fn(*args, **kwargs)
            return outcome.value
        except Exception as exc:
            outcome.error = exc
            raise
        finally:
            with self._lock:
                outcome.finished_at = self._clock()
                # Finished ones in the order they finished: the oldest
                # leave first.
                self._outcomes.move_to_end(key)
            outcome.done.set()

    def _forget_old(self):
        """Drop finished outcomes past ``max_age``, then beyond ``size``."""
        now = self._clock()
        for key in [k for k, o in self._outcomes.items()
                    if o.finished_at is not None and
                    now - o.finished_at > self.max_age]:
            del self._outcomes[key]
        excess = len(self._outcomes) - self.size + 1
        if excess > 0:
            for key in [k for k, o in self._outcomes.items()
                        if o.finished_at is not None][:excess]:
                del self._outcomes[key]
