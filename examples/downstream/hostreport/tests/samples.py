"""Populated objects of the newest versions, every field set."""

import datetime

from resobj import objects as resobj_objects

from hostreport import objects

NOW = datetime.datetime(2026, 12, 1, 8, 0, tzinfo=datetime.timezone.utc)


def rack():
    return objects.Rack(name='r12', hosts=['compute-1', 'compute-2'],
                        power_kw=11.5)


def compute_node():
    resobj_objects.register_all()
    return resobj_objects.ComputeNode(
        id=3, uuid='5b0c4d1e-8f2a-4c3b-9d7e-1a2b3c4d5e6f', service_id=7,
        host='compute-1', hypervisor_hostname='compute-1.example.org',
        hypervisor_type='QEMU', hypervisor_version=8002000,
        cpu_info='{}', vcpus=64, memory_mb=262144, local_gb=1800,
        vcpus_used=12, memory_mb_used=49152, local_gb_used=240,
        cpu_allocation_ratio=4.0, ram_allocation_ratio=1.5,
        disk_allocation_ratio=1.0, numa_topology=None)


def host_report():
    return objects.HostReport(host='compute-1', collected_at=NOW,
                              node=compute_node(), rack=rack())


SAMPLES = {'Rack': rack, 'HostReport': host_report}
