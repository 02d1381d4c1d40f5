"""The virt driver interface the resource tracker reads its host from.

A driver describes the hypervisor, never the database: what resources a
node has, whether its instance disks live on shared storage, which PCI
devices it exposes and which guests actually run. The tracker turns
that into objects and allocations.
"""

import abc


class ComputeDriver(metaclass=abc.ABCMeta):

    @abc.abstractmethod
    def get_available_nodes(self):
        """The hypervisor node names this driver manages."""

    @abc.abstractmethod
    def get_available_resource(self, nodename):
        """What ``nodename`` has, as update_from_virt_driver takes it.

        At least ``vcpus``, ``memory_mb``, ``local_gb``,
        ``hypervisor_type``, ``hypervisor_version``,
        ``hypervisor_hostname`` and ``cpu_info``. ``local_gb`` is local
        disk only: a node on shared storage gets instance disks from the
        sharing provider, not from here.
        """

    @abc.abstractmethod
    def uses_shared_storage(self, nodename):
        """Whether instance disks of ``nodename`` live on shared storage.

        Placement knows that storage as a provider sharing DISK_GB
        through an aggregate.
        """

    def get_pci_devices(self, nodename):
        """PCI devices of ``nodename``.

        Dicts with ``address``, ``vendor_id``, ``product_id``,
        ``dev_type``, ``label`` and optionally ``numa_node`` and
        ``parent_addr``.
        """
        return []

    def get_numa_topology(self, nodename):
        """The NUMA cells of ``nodename``, or None for a flat host.

        A list of dicts ``{'id', 'cpuset' (host CPU ids), 'memory_mb'}``;
        the cells' CPUs together are the node's ``vcpus`` and their
        memory its ``memory_mb``.
        """
        return None

    def get_per_instance_usage(self):
        """{instance uuid: {'memory_mb': n}} of the guests running now.

        The tracker charges guests it does not know (orphans) their
        memory, as the hypervisor really spends it.
        """
        return {}

    def estimate_instance_overhead(self, instance):
        """Extra resources the hypervisor needs per instance."""
        return {}
