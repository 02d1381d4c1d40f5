"""Cleaning up after a response, once its last byte is sent.

A large answer (thousands of allocation candidates and provider
summaries) is built from tens of thousands of short-lived dicts and
lists. Two costs come with them that the client need not wait for:
the cyclic collector scanning them while they are built (they are all
alive, so it frees nothing), and freeing them once the body is written.
:class:`Application` therefore pauses the collector while requests are
in flight, and a handler's answer (see :func:`keep_until_sent`) is
released only when the server closes the response, after sending it
(PEP 3333: the server calls ``close()`` once the body is sent; a
response dropped without it is cleaned up when it is freed). The work
is the same; it happens between responses instead of inside one.

Concurrent requests (threaded workers) share the collector: it runs
again when the last of them is closed. Should requests overlap without
end, a collection is made when a request ends with more uncollected
allocations than :data:`MAX_PAUSED_ALLOCATIONS`, so that cyclic garbage
stays bounded.
"""

import gc
import threading

# The WSGI environ key holding what is released after the response.
KEPT = 'resobj.kept_until_sent'

# Past this many allocations net of frees since the last collection, a
# request that ends while others are in flight collects anyway.
MAX_PAUSED_ALLOCATIONS = 1000000

_lock = threading.Lock()
# Requests in flight, and whether the collector was running before the
# first of them (a process that disabled it keeps it disabled).
_in_flight = 0
_was_enabled = False


def in_flight():
    """How many responses are open: sent to no server's ``close()`` yet."""
    with _lock:
        return _in_flight


def keep_until_sent(environ, value):
    """Keep ``value`` alive until the response to ``environ`` is closed."""
    environ.setdefault(KEPT, []).append(value)


def pause():
    """A request starts: no collection until the last one in flight ends."""
    global _in_flight, _was_enabled
    with _lock:
        if _in_flight == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _in_flight += 1


def resume():
    """A request ends: the collector runs again once none is in flight."""
    global _in_flight
    with _lock:
        _in_flight -= 1
        if _in_flight == 0:
            if _was_enabled:
                gc.enable()
            return
        overdue = gc.get_count()[0] > MAX_PAUSED_ALLOCATIONS
    if overdue:
        gc.collect(0)


class Application:
    """A WSGI application whose requests pause the collector.

    ``app``'s response iterable is returned wrapped; its ``close()``
    releases what the handler kept (:func:`keep_until_sent`) and then
    lets the collector run again.
    """

    def __init__(self, app):
        self._app = app

    def __call__(self, environ, start_response):
        pause()
        try:
            body = self._app(environ, start_response)
        except BaseException:
            environ.pop(KEPT, None)
            resume()
            raise
        return _Closing(body, environ)


class _Closing:
    """A response iterable that cleans up when the server closes it."""

    def __init__(self, body, environ):
        self._body = body
        self._environ = environ
        self._closed = False

    def __iter__(self):
        return iter(self._body)

    def __del__(self):
        # A caller that drops the response unclosed (against PEP 3333;
        # webob's get_response does when the body is never read) must
        # not leave the collector paused.
        self.close()

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            close = getattr(self._body, 'close', None)
            if close is not None:
                close()
        finally:
            self._body = None
            # Freed here, after the last byte was sent.
            self._environ.pop(KEPT, None)
            self._environ = None
            resume()
