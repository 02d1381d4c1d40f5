"""resobj-api: serve the placement-compatible API with gunicorn.

The master process reads the configuration, creates or upgrades the
schema (first start on a fresh machine included), then forks
``[api] workers`` workers. Each serves with resobj's HTTP server
(``resobj.api.worker``, ``resobj.api.httpserver``): an event loop
receives whole requests, then one of ``[api] threads`` threads runs the
application, so slow clients hold no thread. SIGTERM stops it
gracefully: requests in flight finish, then the workers exit.
"""

import argparse
import os
import sys

from gunicorn.app import base as gunicorn_base
from gunicorn import util as gunicorn_util
from oslo_config import cfg
from oslo_log import log as logging

from resobj.api import app as api_app
from resobj.api import httpserver
from resobj.api import service
from resobj.conf import paths
from resobj.db import connection_url
from resobj.db import facade
from resobj import exception
from resobj import heartbeat
from resobj import version

PROG = 'resobj-api'
BINARY = PROG


def _parser():
    parser = argparse.ArgumentParser(
        prog=PROG, description='Serve the placement-compatible resobj API '
        'with gunicorn, creating or upgrading the database schema first.',
        epilog='Every other setting is in the configuration files: see the '
        'configuration reference for the [api] and [database] options.')
    parser.add_argument('--config-file', metavar='PATH', action='append',
                        help='a configuration file to read; repeat it for '
                             'several, later ones winning (default: '
                             'resobj.conf in ~/.resobj, ~/, /etc/resobj and '
                             '/etc)')
    parser.add_argument('--config-dir', metavar='DIR', action='append',
                        help='a directory whose *.conf files are read after '
                             'the --config-file ones (default: resobj.conf.d '
                             'in the same places)')
    parser.add_argument('--host', help='the address to listen on (default: '
                                       '[api] host, 127.0.0.1)')
    parser.add_argument('--port', type=int,
                        help='the TCP port to listen on (default: [api] '
                             'port, 8778)')
    parser.add_argument('--workers', type=int,
                        help='worker processes (default: [api] workers, 2)')
    parser.add_argument('--daemon', action='store_true',
                        help='detach and keep serving in the background; '
                             'the pid and log files are in the state '
                             'directory (default: serve in the foreground)')
    parser.add_argument('--version', action='version',
                        version=version.version_option())
    return parser


class _Server(gunicorn_base.BaseApplication):
    def __init__(self, conf, application, daemon=False):
        self._conf = conf
        self._application = application
        self._daemon = daemon
        api = conf.api
        # Read by resobj.api.worker.ServerWorker in each worker.
        self.server_limits = {
            name: getattr(api, name)
            for name in httpserver.Limits._fields}
        super().__init__()

    def load_config(self):
        api = self._conf.api
        host = api.host
        if ':' in host and not host.startswith('['):
            host = '[%s]' % host
        settings = {
            'bind': '%s:%d' % (host, api.port),
            'workers': api.workers,
            'worker_class': 'resobj.api.worker.ServerWorker',
            'accesslog': api.access_log or None,
            'proc_name': PROG,
            'graceful_timeout': 30,
            'post_fork': self._post_fork,
            # gunicorn's runtime-control socket lives at one path per
            # user, which servers side by side would fight over; resobj
            # is controlled with signals.
            'control_socket_disable': True,
        }
        if self._daemon:
            # A detached process has no terminal: log to files a user can
            # find, and leave a pid file to stop it with.
            state_dir = paths.state_dir(self._conf)
            log = _log_path(self._conf)
            settings.update(
                daemon=True, errorlog=log,
                pidfile=os.path.join(state_dir, 'resobj-api.pid'))
            if settings['accesslog'] == '-':
                settings['accesslog'] = log
        for key, value in settings.items():
            self.cfg.set(key, value)

    def load(self):
        return self._application

    def _post_fork(self, server, worker):
        # Each worker opens its own connections; none may share the
        # master's.
        facade.forget_inherited_connections()
        service.warm_up()
        # Each worker reports the API service alive, so it stays live as
        # long as any worker runs.
        heartbeat.Heartbeat(self._conf, BINARY).start(strict=False)


def _log_path(conf):
    return os.path.join(paths.state_dir(conf), 'resobj-api.log')


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    overrides, rest = _parser().parse_known_args(argv)
    # The files go to oslo.config, in their order, as it would have read
    # them itself.
    files = []
    for option in ('config_file', 'config_dir'):
        for path in getattr(overrides, option) or ():
            files += ['--' + option.replace('_', '-'), path]
    rest = files + rest
    # alembic narrates every migration step at INFO; one line says where
    # the service runs.
    logging.set_defaults(default_log_levels=logging.get_default_log_levels()
                         + ['alembic=WARN'])
    try:
        conf = service.load_conf(None, rest,
                                 version=version.version_option())
    except cfg.Error as exc:
        print('%s: error: %s' % (PROG, str(exc).splitlines()[0]),
              file=sys.stderr)
        return 1
    except exception.ResobjException as exc:
        print('%s: error: %s' % (PROG, exc), file=sys.stderr)
        return 1
    for name in ('host', 'port', 'workers'):
        value = getattr(overrides, name)
        if value is not None:
            conf.set_override(name, value, group='api')
    if overrides.daemon and not conf.log_file and not conf.use_journal:
        # A detached process has no stderr: errors go to the same file
        # as gunicorn's log.
        try:
            os.makedirs(paths.state_dir(conf), exist_ok=True)
        except OSError as exc:
            print('%s: error: cannot create %s: %s'
                  % (PROG, paths.state_dir(conf), exc), file=sys.stderr)
            return 1
        conf.set_override('log_file', _log_path(conf))
    logging.setup(conf, 'resobj')
    try:
        service.prepare_database(conf)
        application = api_app.make_app(conf)
    except exception.ResobjException as exc:
        print('%s: error: %s' % (PROG, exc), file=sys.stderr)
        return 1
    # The master's pooled connections must not leak into the workers.
    service.before_serving()
    print('%s %s: serving on http://%s:%d with %d workers, %s auth, '
          'database %s' % (PROG, version.describe(), conf.api.host,
                           conf.api.port, conf.api.workers,
                           conf.api.auth_strategy,
                           connection_url.database_url(conf).render_as_string(
                               hide_password=True)),
          file=sys.stderr, flush=True)
    if overrides.daemon:
        print('%s: detaching; log %s, pid file %s (stop it with kill)'
              % (PROG, _log_path(conf),
                 os.path.join(paths.state_dir(conf), 'resobj-api.pid')),
              file=sys.stderr, flush=True)
        # BaseApplication.run() does not detach by itself.
        gunicorn_util.daemonize(False)
    _Server(conf, application, daemon=overrides.daemon).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
