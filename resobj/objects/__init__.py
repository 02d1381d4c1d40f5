"""resobj's versioned objects.

After :func:`register_all`, the newest registered version of each object
is available here by name, e.g. ``resobj.objects.Service``.
"""


def register_all():
    """Import every object module so each class registers itself."""
    # NOTE: importing a module registers its classes; add new modules here.
    __import__('resobj.objects.allocation')
    __import__('resobj.objects.compute_node')
    __import__('resobj.objects.consumer')
    __import__('resobj.objects.flavor')
    __import__('resobj.objects.instance')
    __import__('resobj.objects.inventory')
    __import__('resobj.objects.migration')
    __import__('resobj.objects.numa')
    __import__('resobj.objects.pci_device')
    __import__('resobj.objects.pci_device_pool')
    __import__('resobj.objects.project')
    __import__('resobj.objects.resource_class')
    __import__('resobj.objects.resource_provider')
    __import__('resobj.objects.service')
    __import__('resobj.objects.trait')
    __import__('resobj.objects.usage')
    __import__('resobj.objects.user')


def configure(conf):
    """Give the objects the configuration values they read.

    Call once per process after parsing ``conf``; until then objects use
    the option defaults. Today that is the allocation ratios given to
    compute nodes that have none, the allocation conflict retries and
    how long a silent service counts as up.
    """
    from resobj.conf import compute as compute_conf
    from resobj.objects import allocation
    from resobj.objects import compute_node
    from resobj.objects import service
    compute_node.set_allocation_ratio_defaults(
        compute_conf.allocation_ratio_defaults(conf))
    allocation.set_conflict_retries(
        conf.resource_providers.allocation_conflict_retry_count)
    service.set_service_down_time(conf.service_down_time)
