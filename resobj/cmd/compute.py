"""resobj-compute: the trackers of one host, served to its peers.

With ``[conductor] use_local = false`` (the usual deployment) it has no
database access: every object call goes to a resobj-conductor. It audits
its nodes every ``[compute] audit_interval`` seconds and serves the
compute RPC API to other compute services until SIGTERM or SIGINT.
"""

import sys

from resobj.cmd import serve
from resobj.compute import service
from resobj.conductor import api as conductor_api
from resobj.db import connection_url
from resobj.db import facade
from resobj import exception
from resobj import rpc
from resobj import version

PROG = 'resobj-compute'
DESCRIPTION = ('Run the resource trackers of one compute host ([DEFAULT] '
               'host) and serve the compute RPC API to its peers.')


def main(argv=None):
    conf = serve.load_conf(PROG, sys.argv[1:] if argv is None else argv,
                           DESCRIPTION)
    if conf is None:
        return 1
    if conf.conductor.use_local and not conf.database.connection:
        # Otherwise it would create an embedded database of its own,
        # without the cloud's services or nodes.
        print('%s: error: no database access is configured: set '
              '[conductor] use_local = false (with [DEFAULT] transport_url) '
              'to reach the database through resobj-conductor, or '
              '[database] connection to use one directly' % PROG,
              file=sys.stderr)
        return 1
    try:
        transport = rpc.get_transport(conf)
        if conf.conductor.use_local:
            facade.configure(conf)
            where = 'database %s' % connection_url.database_url(
                conf).render_as_string(hide_password=True)
        else:
            conductor_api.use_conductor(conf, transport)
            where = 'conductor topic %s' % conf.conductor.topic
        compute = service.ComputeService(conf, transport)
    except exception.ResobjException as exc:
        print('%s: error: %s' % (PROG, exc), file=sys.stderr)
        return 1
    return serve.run(compute, '%s %s: serving topic %s as %s, nodes %s, %s'
                     % (PROG, version.describe(), conf.compute.topic,
                        conf.host, ', '.join(n for _, n in compute.trackers),
                        where))


if __name__ == '__main__':
    sys.exit(main())
