"""What resobj-conductor and resobj-compute share: configuration, signals.

Both read the usual configuration files, then serve until SIGTERM or
SIGINT, which stop them gracefully (no new calls; those in progress are
answered), and exit 0; or 1 if the calls in progress still run after
``[DEFAULT] graceful_shutdown_timeout`` seconds.
"""

import logging as py_logging
import os
import signal
import sys
import threading

from oslo_config import cfg
from oslo_log import log as logging

from resobj.cmd import options
from resobj import exception
from resobj import version

LOG = logging.getLogger(__name__)


def load_conf(prog, argv, description):
    """A parsed, checked configuration, or an error line and None.

    ``description`` is the one line ``--help`` says of the command.
    """
    conf = cfg.ConfigOpts()
    options.register_all(conf)
    try:
        conf(list(argv), project='resobj', prog=prog,
             version=version.version_option(), description=description)
        options.check(conf)
    except cfg.Error as exc:
        print('%s: error: %s' % (prog, str(exc).splitlines()[0]),
              file=sys.stderr)
        return None
    except exception.ResobjException as exc:
        print('%s: error: %s' % (prog, exc), file=sys.stderr)
        return None
    logging.setup(conf, 'resobj')
    return conf


def run(service, banner):
    """Start ``service``, print ``banner``, stop it on SIGTERM/SIGINT.

    0 once it stopped. If it has not within ``[DEFAULT]
    graceful_shutdown_timeout`` seconds of the signal, the process exits
    there and then with status 1.
    """
    stopping = threading.Event()

    def _stop(signum, frame):
        stopping.set()
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    service.start()
    print(banner, file=sys.stderr, flush=True)
    while not stopping.wait(1):
        pass
    timeout = service.conf.graceful_shutdown_timeout
    # Stopped in a thread of its own, so that a call that never ends
    # cannot hold the process past the bound.
    stopper = threading.Thread(target=service.stop, daemon=True,
                               name='resobj-stop')
    stopper.start()
    stopper.join(timeout or None)
    if stopper.is_alive():
        LOG.error('Calls still in progress %(timeout)d s after the signal '
                  '([DEFAULT] graceful_shutdown_timeout); exiting without '
                  'their answers', {'timeout': timeout})
        # Not sys.exit: the interpreter would wait at exit for the very
        # threads that do not end.
        py_logging.shutdown()
        sys.stderr.flush()
        os._exit(1)
    return 0
