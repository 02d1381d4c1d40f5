"""resobj-api: serve the placement-compatible API with gunicorn.

The master process reads the configuration, creates or upgrades the
schema (first start on a fresh machine included), then forks
``[api] workers`` workers, each with ``[api] threads`` threads so client
connections stay alive between requests. SIGTERM stops it gracefully:
requests in flight finish, then the workers exit.
"""

import argparse
import sys

from gunicorn.app import base as gunicorn_base
from oslo_config import cfg
from oslo_log import log as logging

from resobj.api import app as api_app
from resobj.api import service
from resobj.db import facade
from resobj import exception
from resobj import version

PROG = 'resobj-api'


def _parser():
    parser = argparse.ArgumentParser(
        prog=PROG, add_help=False,
        description='Serve the placement-compatible resobj API.')
    parser.add_argument('--host', help='override [api] host')
    parser.add_argument('--port', type=int, help='override [api] port')
    parser.add_argument('--workers', type=int,
                        help='override [api] workers')
    return parser


class _Server(gunicorn_base.BaseApplication):
    def __init__(self, conf, application):
        self._conf = conf
        self._application = application
        super().__init__()

    def load_config(self):
        api = self._conf.api
        host = api.host
        if ':' in host and not host.startswith('['):
            host = '[%s]' % host
        settings = {
            'bind': '%s:%d' % (host, api.port),
            'workers': api.workers,
            'threads': api.threads,
            'worker_class': 'gthread',
            'keepalive': api.keepalive,
            'accesslog': api.access_log or None,
            'proc_name': PROG,
            'graceful_timeout': 30,
            'post_fork': _post_fork,
        }
        for key, value in settings.items():
            self.cfg.set(key, value)

    def load(self):
        return self._application


def _post_fork(server, worker):
    # Each worker opens its own connections; none may share the master's.
    facade.get_engine().dispose(close=False)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    overrides, rest = _parser().parse_known_args(argv)
    conf = cfg.ConfigOpts()
    service.register_all_opts(conf)
    try:
        conf(rest, project='resobj', prog=PROG,
             version=version.version_string())
    except cfg.Error as exc:
        print('%s: error: %s' % (PROG, str(exc).splitlines()[0]),
              file=sys.stderr)
        return 1
    for name in ('host', 'port', 'workers'):
        value = getattr(overrides, name)
        if value is not None:
            conf.set_override(name, value, group='api')
    logging.setup(conf, 'resobj')
    try:
        from resobj.conf import validate
        validate.check_unknown_options(conf)
        validate.check_values(conf)
        service.prepare_database(conf)
        application = api_app.make_app(conf)
    except exception.ResobjException as exc:
        print('%s: error: %s' % (PROG, exc), file=sys.stderr)
        return 1
    # The master's pooled connections must not leak into the workers.
    facade.get_engine().dispose()
    print('%s %s: serving on http://%s:%d with %d workers, %s auth, '
          'database %s' % (PROG, version.version_string(), conf.api.host,
                           conf.api.port, conf.api.workers,
                           conf.api.auth_strategy,
                           facade.database_url(conf).render_as_string(
                               hide_password=True)),
          file=sys.stderr, flush=True)
    _Server(conf, application).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
