from resobj import objects
from resobj.tests import samples


@samples.sample('NUMACell')
def numa_cell(cell_id=0):
    objects.register_all()
    first = cell_id * 8
    return objects.NUMACell(
        id=cell_id, cpuset=set(range(first, first + 8)), memory_mb=65536,
        pinned_cpus={first, first + 1}, memory_usage=8192)


@samples.sample('NUMATopology')
def numa_topology():
    objects.register_all()
    return objects.NUMATopology(cells=[numa_cell(0), numa_cell(1)])


@samples.sample('InstanceNUMACell')
def instance_numa_cell():
    objects.register_all()
    return objects.InstanceNUMACell(id=1, cpuset={0, 1}, memory_mb=4096,
                                    pinned_cpus={8, 9})


@samples.sample('InstanceNUMATopology')
def instance_numa_topology(pinned=True):
    objects.register_all()
    cell = instance_numa_cell()
    if not pinned:
        cell.pinned_cpus = set()
    return objects.InstanceNUMATopology(cells=[cell])


@samples.sample('InstancePCIRequest')
def instance_pci_request():
    objects.register_all()
    return objects.InstancePCIRequest(alias_name='nic-fast', count=2)
