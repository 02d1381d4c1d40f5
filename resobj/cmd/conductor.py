"""resobj-conductor: run object methods for nodes without a database.

Reads the configuration ([database] and [DEFAULT] transport_url), then
serves the conductor RPC API until SIGTERM or SIGINT, which stop it
gracefully: it takes no new calls and returns once those in progress
have answered.
"""

import argparse
import signal
import sys
import threading

from oslo_config import cfg
from oslo_log import log as logging

from resobj.conductor import service
from resobj import conf as resobj_conf
from resobj.conf import validate
from resobj.db import facade
from resobj.db import migration
from resobj import exception
from resobj import rpc
from resobj import version

PROG = 'resobj-conductor'
LOG = logging.getLogger(__name__)


def load_conf(args, config_files=None):
    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    logging.register_options(conf)
    rpc.register_opts(conf)
    conf(list(args), project='resobj', prog=PROG,
         default_config_files=config_files,
         version=version.version_string())
    validate.check_unknown_options(conf)
    validate.check_values(conf)
    return conf


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    argparse.ArgumentParser(
        prog=PROG, description='Serve object methods over RPC for '
        'services without database access.',
        epilog='oslo.config options: --config-file PATH, --config-dir DIR; '
        'see the [conductor], [database] and [DEFAULT] transport_url '
        'options.').parse_known_args(argv)
    try:
        conf = load_conf(argv)
    except cfg.Error as exc:
        print('%s: error: %s' % (PROG, str(exc).splitlines()[0]),
              file=sys.stderr)
        return 1
    except exception.ResobjException as exc:
        print('%s: error: %s' % (PROG, exc), file=sys.stderr)
        return 1
    logging.setup(conf, 'resobj')
    try:
        facade.configure(conf)
        # A conductor serves the schema resobj-manage db sync left; it
        # never changes it. Reading the revision proves the database is
        # there before any node's call depends on it.
        revision = migration.db_version()
        conductor = service.ConductorService(conf)
    except exception.ResobjException as exc:
        print('%s: error: %s' % (PROG, exc), file=sys.stderr)
        return 1
    stopping = threading.Event()

    def _stop(signum, frame):
        stopping.set()
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    conductor.start()
    print('%s %s: serving topic %s as %s, schema %s, database %s'
          % (PROG, version.version_string(), conf.conductor.topic,
             conf.host, revision,
             facade.database_url(conf).render_as_string(hide_password=True)),
          file=sys.stderr, flush=True)
    while not stopping.wait(1):
        pass
    conductor.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
