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
               help='Threads per worker that run the application. A '
                    'thread takes a request only once its headers and body '
                    'have arrived whole, so slow clients hold none.'),
    cfg.IntOpt('keepalive', default=30, min=0,
               help='Seconds an idle client connection is kept open '
                    'between requests.'),
    cfg.IntOpt('client_timeout', default=30, min=1,
               help='Seconds a client has to send one whole request, '
                    'headers and body, from its first byte (or from the '
                    'connection\'s opening, for its first request). A '
                    'client still sending then gets a 408 and is '
                    'disconnected, however steadily it trickles.'),
    cfg.IntOpt('connection_limit', default=1000, min=1,
               help='Open client connections each worker keeps at most. '
                    'A new connection beyond it closes the connection '
                    'that has been idle longest; when none is idle, it '
                    'joins a small reserve where only GET / and HEAD / '
                    'are answered (anything else gets 503). Each '
                    'connection takes a file descriptor: keep it, plus '
                    'the reserve, under the process\'s limit '
                    '(ulimit -n).'),
    cfg.IntOpt('connection_limit_per_client', default=100, min=1,
               help='Open connections each worker keeps at most from one '
                    'source address, within connection_limit. A new '
                    'connection beyond it closes that address\'s '
                    'connection that has been idle longest, or joins the '
                    'reserve (see connection_limit). Behind a proxy or '
                    'load balancer every client has its address: raise '
                    'it to connection_limit there.'),
    cfg.IntOpt('max_request_body_size', default=1024 * 1024, min=1024,
               help='Largest request body accepted, in bytes; a larger '
                    'one answers 413 without being read (announced by '
                    'Content-Length) or as soon as it passes the limit '
                    '(chunked). The default holds a POST /allocations of '
                    'a thousand consumers, the most any list of a body '
                    'may have.'),
    cfg.IntOpt('max_request_header_size', default=64 * 1024, min=1024,
               help='Largest request line plus headers accepted, in '
                    'bytes; a larger one answers 431. The default holds '
                    'a query string of a thousand UUIDs, the most items '
                    'a query may list.'),
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
