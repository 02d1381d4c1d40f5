"""Options every resobj service shares: who it is on the RPC bus, and
when a service that stopped reporting counts as down.
"""

import socket

from oslo_config import cfg

host_opt = cfg.StrOpt(
    'host', default=socket.gethostname(),
    sample_default='<current hostname>',
    help='The name of this host: the RPC server name of its services '
         '(topic.host) and the host of their Service records. Must be '
         'unique in the cloud.')

service_down_time_opt = cfg.IntOpt(
    'service_down_time', default=60, min=1,
    help='Seconds after its last report (Service.last_seen_up) that a '
         'service counts as down. Services report at start and then '
         'periodically (a compute node at each audit of its resource '
         'tracker, so keep this above [compute] audit_interval). A service '
         'that is down no longer holds Service.get_minimum_version down, so '
         'a dead old service does not keep a rolling upgrade from '
         'completing, and resobj-status upgrade check reports it as dead '
         'rather than running. A service that has never reported (code '
         'older than this option) always counts.')

report_interval_opt = cfg.IntOpt(
    'report_interval', default=10, min=1,
    help='Seconds between two reports (Service.last_seen_up) of a '
         'resobj-conductor or resobj-api worker. Keep it well below '
         'service_down_time. Compute services report at each audit '
         '([compute] audit_interval) instead.')

service_opts = [host_opt, service_down_time_opt, report_interval_opt]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return service_opts
