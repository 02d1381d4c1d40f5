"""Options every resobj service shares: when a silent service is down."""

from oslo_config import cfg

service_down_time_opt = cfg.IntOpt(
    'service_down_time', default=60, min=1,
    help='Seconds after its last report (Service.last_seen_up) that a '
         'service counts as down. Services report at start and then '
         'periodically (a compute node at each audit of its resource '
         'tracker, so keep this above the audit interval). A service that '
         'is down no longer holds Service.get_minimum_version down, so a '
         'dead old service does not keep a rolling upgrade from '
         'completing. A service that has never reported (code older than '
         'this option) always counts.')


def register_opts(conf):
    conf.register_opt(service_down_time_opt)


def list_opts():
    return [service_down_time_opt]
