"""A conductor: the RPC server that runs object methods for other nodes.

Conductors are the only services besides resobj-api and resobj-manage
that reach the database. Several listen on one topic side by side; each
call goes to one of them, and any of them can serve any call.
"""

from oslo_log import log as logging

from resobj.conductor import manager
from resobj.conductor import rpcapi
from resobj import heartbeat
from resobj import rpc

BINARY = rpcapi.BINARY

LOG = logging.getLogger(__name__)


class ConductorService:
    """The RPC server of one resobj-conductor process."""

    def __init__(self, conf, transport=None):
        self.conf = conf
        self.transport = transport or rpc.get_transport(conf)
        self.server = rpc.get_server(self.transport, conf.conductor.topic,
                                     conf.host,
                                     [manager.ConductorManager(conf)])
        self.heartbeat = heartbeat.Heartbeat(conf, BINARY,
                                             topic=conf.conductor.topic)

    def start(self):
        self.heartbeat.start()
        self.server.start()
        LOG.info('resobj-conductor on %(host)s serving topic %(topic)s',
                 {'host': self.conf.host,
                  'topic': self.conf.conductor.topic})

    def stop(self):
        """Take no new calls, finish those in progress, then return."""
        rpc.stop_server(self.server)
        self.heartbeat.stop()
        LOG.info('resobj-conductor on %s stopped', self.conf.host)
