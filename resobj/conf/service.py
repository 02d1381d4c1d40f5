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

graceful_shutdown_timeout_opt = cfg.IntOpt(
    'graceful_shutdown_timeout', default=60, min=0,
    help='Seconds a resobj-conductor or resobj-compute given SIGTERM or '
         'SIGINT waits for the calls it has taken to be answered before '
         'it exits anyway (with status 1, naming the option). It takes no '
         'new call meanwhile: the broker hands those to the other services '
         'on the topic. 0 waits as long as the calls take. The same name '
         'and meaning as oslo.service\'s option, which resobj does not '
         'use.')

rpc_connection_retries_opt = cfg.IntOpt(
    'rpc_connection_retries', default=3, min=-1,
    help='How many more times a call or cast to another service tries to '
         'reach the message broker when it cannot, before the caller gets '
         'an error (ConductorUnavailable for a call to the conductors) '
         'instead of waiting for the broker. The tries are '
         '[oslo_messaging_rabbit] rabbit_retry_interval, then '
         'rabbit_retry_backoff more, up to rabbit_interval_max seconds '
         'apart. -1 waits as long as the broker is away, whatever the '
         'call\'s timeout (oslo.messaging\'s own default).')

service_opts = [host_opt, service_down_time_opt, report_interval_opt,
                graceful_shutdown_timeout_opt, rpc_connection_retries_opt]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return service_opts
