"""Options for the conductor and for the nodes that call it.

``[conductor]`` says whether a service reaches the database itself or
through a conductor, and on which topic conductors listen;
``[upgrade_levels]`` caps the RPC versions a service sends while older
services are still running (see doc/source/user/upgrade.rst).
"""

from oslo_config import cfg

conductor_opts = [
    cfg.BoolOpt('use_local', default=True,
                help='Run every object method in this process, against '
                     'the [database] this service is configured with. '
                     'False: this service has no database access; every '
                     'remotable object method, lazy load and backport is '
                     'sent to a resobj-conductor over [DEFAULT] '
                     'transport_url, and an attempt to reach the database '
                     'directly fails.'),
    cfg.IntOpt('call_timeout', default=10, min=1,
               help='Seconds one try of a keyed call to a conductor (RPC '
                    '1.1: state-changing object methods, sent with an '
                    'idempotency key) waits for its answer. A try '
                    'unanswered in that time (its message lost with a '
                    'conductor or the broker) is sent again with the same '
                    'key after a short pause, until [DEFAULT] '
                    'rpc_response_timeout has passed since the first; '
                    'ConductorTimeout only then. A conductor carries a '
                    'keyed call out at most once, however often it is '
                    'sent, and answers every repeat as it answered the '
                    'first. Keep it above the slowest call a loaded '
                    'conductor answers: a try that times out while the '
                    'first still runs waits for it, and costs nothing '
                    'else.'),
    cfg.IntOpt('call_retries', default=0, min=0,
               help='For calls without an idempotency key only (sent as '
                    'RPC 1.0, when [upgrade_levels] conductor caps to '
                    '1.0 while a conductor of the previous release runs): '
                    'how many times such a call that got no answer within '
                    '[DEFAULT] rpc_response_timeout is sent again before '
                    'ConductorTimeout is raised. A conductor that died in '
                    'the middle of a call left nothing of it written, but '
                    'one that answered too late may have carried it out: '
                    'a call sent again then runs twice (a claim fails on '
                    'its own generation check, a read is harmless). 0 '
                    'leaves the decision to the caller; the tracker\'s '
                    'next audit puts its node right either way. Keyed '
                    'calls are retried by call_timeout instead.'),
    cfg.IntOpt('call_outcome_retention', default=900, min=60,
               help='Seconds a conductor keeps the recorded outcome of a '
                    'keyed call (table call_outcomes), to answer a repeat '
                    'of it without carrying it out again. Older outcomes '
                    'are purged by the conductors as they serve calls. '
                    'Keep it well above the longest [DEFAULT] '
                    'rpc_response_timeout of any service: a repeat sent '
                    'after its outcome was purged would run again.'),
    cfg.StrOpt('topic', default='resobj-conductor',
               help='The RPC topic conductors listen on and other services '
                    'call. Every conductor on one topic serves the same '
                    'calls; several run side by side.'),
]

upgrade_levels_opts = [
    cfg.StrOpt('compute',
               help='The newest compute RPC API version this service sends '
                    'to compute services, for example "1.0", or "auto": '
                    'what the oldest live compute service serves while any '
                    'runs an older service version than this one, and no '
                    'cap once none does (from their Service records, read '
                    'again every auto_interval seconds). Unset, calls use '
                    'the newest version this release knows.'),
    cfg.StrOpt('conductor',
               help='The newest conductor RPC API version this service '
                    'sends, for example "1.0", or "auto": what the oldest '
                    'live conductor serves while any runs an older service '
                    'version than this one, and no cap once none does '
                    '(read again every auto_interval seconds). Set it '
                    'while conductors are upgraded one by one; unset, '
                    'calls use the newest version this release knows.'),
    cfg.IntOpt('auto_interval', default=10, min=1,
               help='Seconds an "auto" cap is kept before the oldest live '
                    'service\'s version is read again (at the next call '
                    'after that). A service that starts with an older '
                    'version (a node rolled back) is capped for within '
                    'this long; one that stops holds the cap until it is '
                    'down ([DEFAULT] service_down_time) and this long '
                    'after. Each change of the cap is logged.'),
]


def register_opts(conf):
    conf.register_opts(conductor_opts, group='conductor')
    conf.register_opts(upgrade_levels_opts, group='upgrade_levels')


def list_opts():
    return [('conductor', conductor_opts),
            ('upgrade_levels', upgrade_levels_opts)]
