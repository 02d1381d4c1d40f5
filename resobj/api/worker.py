"""The gunicorn worker class of resobj-api: gunicorn's process, our server.

gunicorn stays the process manager (the master forks the workers,
respawns one that dies, stops them gracefully on SIGTERM, detaches with
``--daemon`` and writes the pid file); a custom worker class is
gunicorn's documented way to serve the sockets differently. Each worker
serves the listening sockets it inherited with
:class:`resobj.api.httpserver.Server`, which reads whole requests in an
event loop before a thread runs the application; gunicorn's own
threaded worker gives each connection a thread while its request
arrives, so a few slow clients took them all.

The worker runs the event loop in its main thread and tells the master
it is alive from that loop: a loop that stopped turning gets the worker
killed and replaced, as a stuck gunicorn worker would.
"""

import datetime
import os

from gunicorn.workers import base

from resobj.api import httpserver


class ServerWorker(base.Worker):
    """Serves ``self.wsgi``; the limits come from the gunicorn app.

    The gunicorn application (``resobj.cmd.api``) carries the ``[api]``
    limits as ``server_limits`` (see :class:`httpserver.Limits`).
    """

    def run(self):
        sockets = [httpserver.listening_socket(sock)
                   for sock in self.sockets]
        app = self.wsgi
        if self.cfg.accesslog:
            app = _AccessLog(app, self.log)
        server = httpserver.Server(app, sockets, self.app.server_limits,
                                   backlog=self.cfg.backlog)
        server.serve(self._running, self.notify, self.cfg.graceful_timeout)

    def _running(self):
        if self.ppid != os.getppid():
            self.log.info('Parent changed, shutting down: %s', self)
            return False
        return self.alive


class _Response:
    """What gunicorn's access log reads of a response."""

    status = None
    headers = ()
    sent = 0


class _AccessLog:
    """WSGI middleware: one line per request in gunicorn's access log."""

    def __init__(self, app, log):
        self._app = app
        self._log = log

    def __call__(self, environ, start_response):
        started = datetime.datetime.now()
        response = _Response()

        def start(status, headers, exc_info=None):
            response.status = status
            response.headers = headers
            return start_response(status, headers, exc_info)

        body = self._app(environ, start)
        return self._logged(body, environ, response, started)

    def _logged(self, body, environ, response, started):
        try:
            for chunk in body:
                response.sent += len(chunk)
                yield chunk
        finally:
            if hasattr(body, 'close'):
                body.close()
            environ.setdefault('RAW_URI', environ.get('REQUEST_URI', ''))
            request_headers = [
                (key[5:].replace('_', '-'), value)
                for key, value in environ.items()
                if key.startswith('HTTP_')]
            self._log.access(response, request_headers, environ,
                             datetime.datetime.now() - started)
