"""Options for compute nodes: allocation ratios."""

from oslo_config import cfg

RESOURCES = ('cpu', 'ram', 'disk')

_INITIAL = {'cpu': 4.0, 'ram': 1.0, 'disk': 1.0}

compute_opts = []
for _resource in RESOURCES:
    compute_opts.append(cfg.FloatOpt(
        '%s_allocation_ratio' % _resource,
        min=0.0,
        help='Overcommit ratio for %s given to compute nodes that have '
             'none (new nodes, and rows written by old code with an empty '
             'or zero ratio). When unset, such nodes get '
             'initial_%s_allocation_ratio.' % (_resource, _resource)))
    compute_opts.append(cfg.FloatOpt(
        'initial_%s_allocation_ratio' % _resource,
        default=_INITIAL[_resource],
        min=0.0,
        help='Ratio for %s given to compute nodes that have none, when '
             '%s_allocation_ratio is not set.' % (_resource, _resource)))


def register_opts(conf):
    conf.register_opts(compute_opts, group='compute')


def list_opts():
    return compute_opts


def allocation_ratio_defaults(conf):
    """{'cpu': ratio, 'ram': ..., 'disk': ...} for nodes that have none."""
    return {
        resource: (conf.compute['%s_allocation_ratio' % resource]
                   or conf.compute['initial_%s_allocation_ratio'
                                   % resource])
        for resource in RESOURCES
    }


def default_allocation_ratios():
    """The ratios implied by the option defaults (no configuration)."""
    return dict(_INITIAL)
