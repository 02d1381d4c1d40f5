"""Loading configuration and the database for resobj-api's workers."""

import gc
import time

from oslo_config import cfg
from oslo_log import log as logging

from resobj.api import app
from resobj.api import keystone
from resobj.api import middleware
from resobj import conf as resobj_conf
from resobj.conf import validate
from resobj import context as resobj_context
from resobj.db.api import allocation_candidate as allocation_candidate_db
from resobj.db.api import resource_class as resource_class_db
from resobj.db.api import trait as trait_db
from resobj.db import connection_url
from resobj.db import facade
from resobj.db import migration
from resobj import exception
from resobj import rpc

LOG = logging.getLogger(__name__)


def register_all_opts(conf):
    """resobj's options plus those of the libraries the API configures.

    After parsing, :func:`check_conf` registers the rest (the options of
    the configured keystoneauth plugin) and checks the files.
    """
    from oslo_policy import opts as policy_opts
    resobj_conf.register_opts(conf)
    logging.register_options(conf)
    # One configuration file serves every service of a host: the
    # messaging options in it are known here too.
    rpc.register_opts(conf)
    policy_opts.set_defaults(conf)
    middleware.register_opts(conf)
    keystone.register_opts(conf)


def check_conf(conf):
    """Refuse unknown options and bad values in a parsed ``conf``.

    The keystoneauth plugin's options are registered first: which they
    are depends on the parsed ``[keystone_authtoken] auth_type``.
    """
    keystone.register_plugin_opts(conf)
    validate.check_unknown_options(conf)
    validate.check_values(conf)


def load_conf(config_files, args=(), version=None):
    """A parsed and checked configuration.

    ``config_files``: the files to read (None: oslo.config's default
    search); ``args``: the command line.

    Raises oslo.config's errors for bad arguments and ResobjException
    for unknown options or bad values in the files.
    """
    conf = cfg.ConfigOpts()
    register_all_opts(conf)
    conf(list(args), project='resobj', prog='resobj-api',
         default_config_files=config_files or None, version=version)
    check_conf(conf)
    if conf.api.auth_strategy == 'keystone':
        # Before the database is touched: with this configuration no
        # request could be served.
        keystone.check(conf)
    return conf


def prepare_database(conf):
    """Create or upgrade the schema and the standard data; idempotent.

    A schema that a newer release has already upgraded is served as it
    is (a rolling upgrade restarts older services after the database),
    with a warning.
    """
    facade.configure(conf)
    try:
        newer = migration.db_sync(newer_ok=True)
    except exception.DatabaseUnavailable as exc:
        # resobj-api prints it as its one line of error.
        raise exception.DatabaseUnavailable(
            connection_url.explain_unavailable(conf, exc), **exc.kwargs)
    if newer is not None:
        LOG.warning('The database schema is at revision %(newer)s, which '
                    'this release (newest revision %(head)s) does not '
                    'know: a newer release upgraded it. Serving on it as '
                    'it is.',
                    {'newer': newer, 'head': migration.head_revision()})
    ctx = resobj_context.get_admin_context()
    resource_class_db.ensure_sync(ctx)
    trait_db.ensure_sync(ctx)


def load_app(config_files):
    conf = load_conf(config_files)
    logging.setup(conf, 'resobj')
    prepare_database(conf)
    return app.make_app(conf)


# The cyclic collector's first generation is scanned every 700 net
# allocations by default. A request that builds a thousand candidates
# makes tens of thousands of short-lived containers, which reference
# counting frees anyway, and set off dozens of scans: a sixth of that
# request's time. Scanning every 50,000 keeps the cost of a collection
# the same and makes them rare; memory is unchanged, cycles are still
# collected.
GC_FIRST_GENERATION_THRESHOLD = 50000


def settle_gc():
    """Tune the cyclic garbage collector for serving, once loaded.

    Everything loaded so far lives as long as the process: frozen, the
    collector no longer scans it on every collection (nor touches the
    pages forked workers share with the master).
    """
    gc.collect()
    gc.freeze()
    _threshold, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_FIRST_GENERATION_THRESHOLD, older, oldest)


def warm_up():
    """Ready this process's database connection for the usual searches.

    Runs them once, finding nothing (see
    ``allocation_candidate.warm_connection``), so that the first
    requests a worker serves do not wait for PostgreSQL to prepare
    their statements. Call it in each worker before it serves: a
    connection opened before a fork is not the worker's (see
    :func:`before_serving`). A failure is logged and serving goes on;
    nothing depends on it but the first requests' speed.
    """
    start = time.monotonic()
    try:
        searches = allocation_candidate_db.warm_connection(
            resobj_context.get_admin_context())
    except Exception:
        LOG.warning('Could not warm the database connection up; the first '
                    'candidate searches will be slower.', exc_info=True)
        return
    LOG.debug('Warmed the database connection up with %d searches in '
              '%.0f ms', searches, (time.monotonic() - start) * 1000)


def before_serving():
    """Ready a loaded application for serving, here or in forked workers.

    First the usual allocation candidate searches' statements are
    compiled (see ``allocation_candidate.warm_statements``), so that no
    request waits for that; workers forked from this process inherit
    them. Loading synced the schema over pooled connections. Workers
    forked from this process (resobj-api's, or those of a server that
    loads the application before forking: gunicorn --preload, uWSGI
    without lazy-apps) would otherwise share them, two processes talking
    over one socket; closed here, each worker opens its own. Then the
    collector is settled (:func:`settle_gc`).
    """
    allocation_candidate_db.warm_statements(
        resobj_context.get_admin_context())
    facade.dispose()
    settle_gc()
