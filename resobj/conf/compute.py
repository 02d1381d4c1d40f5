"""Options for compute nodes: allocation ratios, reserved host resources,
PCI aliases."""

import json

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

compute_opts += [
    cfg.IntOpt('reserved_host_cpus', default=0, min=0,
               help='VCPUs of each compute node kept for the host, '
                    'written as the reserved amount of its VCPU '
                    'inventory.'),
    cfg.IntOpt('reserved_host_memory_mb', default=512, min=0,
               help='Memory (MB) of each compute node kept for the host, '
                    'written as the reserved amount of its MEMORY_MB '
                    'inventory.'),
    cfg.IntOpt('reserved_host_disk_mb', default=0, min=0,
               help='Local disk (MB) of each compute node kept for the '
                    'host. DISK_GB inventory is in GB: the reserved '
                    'amount is this divided by 1024, rounded up.'),
]


compute_opts += [
    cfg.StrOpt('topic', default='resobj-compute',
               help='The RPC topic compute services listen on; each also '
                    'listens on topic.host for calls to its own host.'),
    cfg.StrOpt('driver', default='fake', choices=['fake'],
               help='The virt driver resobj-compute reads its node from. '
                    '"fake" reports the [fake_driver] amounts, for tests '
                    'and demonstrations.'),
    cfg.MultiStrOpt('pci_alias', default=[],
                    help='A PCI alias flavors can ask for with the extra '
                         'spec pci_passthrough:alias = "<name>:<count>": '
                         'JSON {"name": ..., "vendor_id": ..., '
                         '"product_id": ...} (vendor and product '
                         'optional: any device matches). Repeat the '
                         'option for each alias.'),
    cfg.IntOpt('audit_interval', default=60, min=1,
               help='Seconds between two periodic audits of each node '
                    '(update_available_resource), which also report the '
                    'service alive.'),
    cfg.IntOpt('call_timeout', default=10, min=1,
               help='Seconds one try of a state-changing call to another '
                    'compute service (compute RPC 1.1: builds, deletes, '
                    'resizes, live migrations) waits for its answer '
                    'before it is sent again with the same idempotency '
                    'key. The receiver carries a call out at most once '
                    'per key, so a retry never builds or moves twice.'),
    cfg.IntOpt('call_retries', default=5, min=0,
               help='How many times a state-changing compute call is sent '
                    'again after a try timed out; ComputeTimeout only '
                    'after call_timeout * (call_retries + 1) seconds in '
                    'all. Calls capped to compute RPC 1.0 ([upgrade_levels] '
                    'compute) carry no key and are never retried: they '
                    'wait [DEFAULT] rpc_response_timeout once.'),
    cfg.IntOpt('outcome_record_size', default=1000, min=1,
               help='How many recent call outcomes (idempotency key -> '
                    'answer) a compute service keeps to answer a retried '
                    'call with what the first try did.'),
    cfg.IntOpt('outcome_record_age', default=3600, min=1,
               help='Seconds a compute service keeps the outcome of a '
                    'finished call for its retries; older ones are '
                    'forgotten first.'),
]

fake_driver_opts = [
    cfg.IntOpt('vcpus', default=16, min=0,
               help='VCPUs the fake driver reports for its node.'),
    cfg.IntOpt('memory_mb', default=32768, min=0,
               help='Memory (MB) the fake driver reports for its node.'),
    cfg.IntOpt('local_gb', default=500, min=0,
               help='Local disk (GB) the fake driver reports for its '
                    'node.'),
    cfg.IntOpt('numa_cells', min=1,
               help='NUMA cells the fake driver splits its node\'s CPUs '
                    'and memory into (each cell becomes a child resource '
                    'provider). Unset: a flat host.'),
]


def register_opts(conf):
    conf.register_opts(compute_opts, group='compute')
    conf.register_opts(fake_driver_opts, group='fake_driver')


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


def reserved(conf):
    """ResourceTracker keyword arguments for the reserved amounts."""
    return {'reserved_vcpus': conf.compute.reserved_host_cpus,
            'reserved_memory_mb': conf.compute.reserved_host_memory_mb,
            'reserved_disk_mb': conf.compute.reserved_host_disk_mb}


def pci_aliases(conf):
    """{alias name: {'vendor_id', 'product_id'}} of [compute] pci_alias.

    ValueError names a malformed entry.
    """
    out = {}
    for text in conf.compute.pci_alias:
        try:
            entry = json.loads(text)
        except ValueError as exc:
            raise ValueError('[compute] pci_alias %r is not JSON: %s'
                             % (text, exc))
        if not isinstance(entry, dict) or not isinstance(
                entry.get('name'), str) or not entry['name']:
            raise ValueError('[compute] pci_alias %r needs a "name"' % text)
        out[entry['name']] = {key: entry[key]
                              for key in ('vendor_id', 'product_id')
                              if entry.get(key) is not None}
    return out


def default_allocation_ratios():
    """The ratios implied by the option defaults (no configuration)."""
    return dict(_INITIAL)
