"""The database set-up the object-layer benchmarks share."""

import tempfile

from oslo_config import cfg

from resobj import conf as resobj_conf
from resobj.db import facade
from resobj.db import migration


def configure(url):
    """Point the facade at ``url``, or a new temporary SQLite file.

    The schema is brought to the current revision.
    """
    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    conf([], default_config_files=[], default_config_dirs=[])
    if url:
        conf.set_override('connection', url, group='database')
    else:
        conf.set_override('state_dir', tempfile.mkdtemp())
    facade.configure(conf)
    migration.db_sync()
