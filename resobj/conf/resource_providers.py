"""Options for resource providers and allocations."""

from oslo_config import cfg

opts = [
    cfg.IntOpt(
        'allocation_conflict_retry_count',
        default=10,
        min=0,
        help='How many times an allocation write is retried, each in a new '
             'transaction, when another writer changed one of its '
             'resource providers at the same time. A consumer generation '
             'conflict is never retried: the caller must re-read.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='resource_providers')


def list_opts():
    return opts
