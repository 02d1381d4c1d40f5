import datetime

from resobj import objects
from resobj.tests import samples

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)


def _service(node):
    """The node's service as known without a database: -1 is none."""
    return None if node.service_id in (None, -1) else node.service_id


# Before 1.2 a None service_id is replaced by the service's id looked up
# on the node's host (or -1): the value changes form on purpose.
samples.converted('ComputeNode', 'service_id', key=_service, before='1.2')


def _pools(count):
    objects.register_all()
    return objects.PciDevicePoolList(objects=[
        objects.PciDevicePool(
            vendor_id='8086', product_id='154d', numa_node=n % 2,
            tags={'physical_network': 'physnet%d' % n, 'trusted': 'true'},
            count=4 + n)
        for n in range(count)])


@samples.sample('ComputeNode')
def compute_node(pools=2):
    objects.register_all()
    return objects.ComputeNode(
        id=3, uuid='5b0c4d1e-8f2a-4c3b-9d7e-1a2b3c4d5e6f', service_id=7,
        host='compute-1', hypervisor_hostname='compute-1.example.org',
        host_ip='192.0.2.10', hypervisor_type='QEMU',
        hypervisor_version=8002000, cpu_info='{"arch": "x86_64"}',
        vcpus=64, memory_mb=262144, local_gb=1800, vcpus_used=12,
        memory_mb_used=49152, local_gb_used=240, free_ram_mb=212992,
        free_disk_gb=1560, disk_available_least=1500, current_workload=1,
        running_vms=6, vcpus_reserved=2, memory_mb_reserved=4096,
        local_gb_reserved=0, cpu_allocation_ratio=4.0,
        ram_allocation_ratio=1.5,
        disk_allocation_ratio=1.0, stats={'num_instances': '6',
                                          'io_workload': '1'},
        pci_device_pools=_pools(pools),
        numa_topology=samples.factories()['NUMATopology'](),
        created_at=NOW, updated_at=NOW,
        deleted_at=None, deleted=False)


@samples.variant('ComputeNode')
def node_without_service():
    # Goes to versions before 1.2 with service_id -1 (no context here).
    node = compute_node()
    node.service_id = None
    return node


@samples.sample('ComputeNodeList')
def compute_node_list():
    objects.register_all()
    return objects.ComputeNodeList(objects=[compute_node()])
