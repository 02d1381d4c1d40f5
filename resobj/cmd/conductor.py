"""resobj-conductor: run object methods for nodes without a database.

Reads the configuration ([database] and [DEFAULT] transport_url), then
serves the conductor RPC API until SIGTERM or SIGINT, which stop it
gracefully: it takes no new calls and returns once those in progress
have answered.
"""

import sys

from resobj.cmd import serve
from resobj.conductor import service
from resobj.db import connection_url
from resobj.db import facade
from resobj.db import migration
from resobj import exception
from resobj import version

PROG = 'resobj-conductor'
DESCRIPTION = ('Run object methods for the services without database '
               'access (compute hosts) over RPC.')


def main(argv=None):
    conf = serve.load_conf(PROG, sys.argv[1:] if argv is None else argv,
                           DESCRIPTION)
    if conf is None:
        return 1
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
    return serve.run(conductor, '%s %s: serving topic %s as %s, schema %s, '
                     'database %s' % (
                         PROG, version.describe(),
                         conf.conductor.topic, conf.host, revision,
                         connection_url.database_url(conf).render_as_string(
                             hide_password=True)))


if __name__ == '__main__':
    sys.exit(main())
