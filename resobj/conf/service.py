"""Options every resobj service shares: who it is on the RPC bus."""

import socket

from oslo_config import cfg

service_opts = [
    cfg.StrOpt('host', default=socket.gethostname(),
               sample_default='<current hostname>',
               help='The name of this host: the RPC server name of its '
                    'services (topic.host) and the host of their Service '
                    'records. Must be unique in the cloud.'),
]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return service_opts
