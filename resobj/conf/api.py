"""Options of the resobj-api service."""

from oslo_config import cfg

opts = [
    cfg.HostAddressOpt(
        'host', default='127.0.0.1',
        help='Address resobj-api listens on. The default answers only '
             'this machine; with auth_strategy=noauth2 any caller can act '
             'as any user, so bind elsewhere only behind keystone.'),
    cfg.PortOpt('port', default=8778,
                help='TCP port resobj-api listens on (placement\'s port).'),
    cfg.IntOpt('workers', default=2, min=1,
               help='Worker processes serving requests.'),
    cfg.IntOpt('threads', default=4, min=1,
               help='Threads per worker; each keeps client connections '
                    'alive between requests.'),
    cfg.IntOpt('keepalive', default=30, min=0,
               help='Seconds an idle client connection is kept open.'),
    cfg.StrOpt('auth_strategy', default='noauth2',
               choices=[('noauth2', 'X-Auth-Token is "user[:project]"; the '
                                    'user "admin" has the admin role. For '
                                    'development and tests only.'),
                        ('keystone', 'keystonemiddleware auth_token '
                                     'validates tokens; configure it in '
                                     '[keystone_authtoken].')],
               help='How requests are authenticated.'),
    cfg.StrOpt('access_log', default='-',
               help='Where resobj-api writes its access log: a file path, '
                    'or "-" for standard output; empty to disable.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='api')


def list_opts():
    return opts
