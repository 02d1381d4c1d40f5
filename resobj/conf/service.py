"""Options every resobj service shares: who it is on the RPC bus, and
when a service that stopped reporting counts as down.
"""

import socket

from oslo_config import cfg

service_opts = [
    cfg.StrOpt('host', default=socket.gethostname(),
               sample_default='<current hostname>',
               help='The name of this host: the RPC server name of its '
                    'services (topic.host) and the host of their Service '
                    'records. Must be unique in the cloud.'),
    cfg.IntOpt('service_down_time', default=60, min=1,
               help='Seconds after which a service that has not reported '
                    'in (its Service record\'s last_seen_up, or when it '
                    'never reported, the record\'s last update or '
                    'creation) counts as down: it no longer holds the '
                    'cloud to its service version, and resobj-status '
                    'upgrade check reports it as dead rather than '
                    'running.'),
]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return service_opts
