"""A configurable in-memory virt driver for tests and resobj-sim."""

from resobj.compute import driver


class FakeDriver(driver.ComputeDriver):
    """One node with the resources it is given.

    ``pci_devices`` are dicts as ``get_pci_devices`` returns them; a
    device without ``dev_type`` is a plain ``type-PCI`` device. The
    running guests are what ``spawn``/``destroy`` recorded, so a test
    can leave an orphan behind by spawning a guest the database does
    not know.

    ``numa_cells`` (a count) splits the node's CPUs and memory evenly
    into that many NUMA cells (CPU ids in order); None, the default,
    is a flat host.
    """

    def __init__(self, nodename, vcpus=16, memory_mb=32768, local_gb=500,
                 shared_storage=False, pci_devices=(),
                 hypervisor_type='fake', hypervisor_version=1000, uuid=None,
                 numa_cells=None):
        self.nodename = nodename
        # The node's uuid (and so its provider's), when the caller must
        # know it in advance, e.g. to put the provider in an aggregate.
        self.uuid = uuid
        self.vcpus = vcpus
        self.memory_mb = memory_mb
        self.local_gb = local_gb
        self.shared_storage = shared_storage
        self.pci_devices = [dict(d) for d in pci_devices]
        for device in self.pci_devices:
            device.setdefault('dev_type', 'type-PCI')
            device.setdefault('label', 'label_%s_%s' % (
                device['vendor_id'], device['product_id']))
        self.hypervisor_type = hypervisor_type
        self.hypervisor_version = hypervisor_version
        self.running = {}
        if numa_cells is not None and (
                numa_cells < 1 or vcpus % numa_cells or
                memory_mb % numa_cells):
            raise ValueError('numa_cells must divide vcpus and memory_mb')
        self.numa_cells = numa_cells

    def get_available_nodes(self):
        return [self.nodename]

    def _check(self, nodename):
        if nodename != self.nodename:
            raise KeyError('FakeDriver has node %s, not %s'
                           % (self.nodename, nodename))

    def get_available_resource(self, nodename):
        self._check(nodename)
        resources = {
            'vcpus': self.vcpus, 'memory_mb': self.memory_mb,
            'local_gb': self.local_gb, 'vcpus_used': 0,
            'memory_mb_used': 0, 'local_gb_used': 0,
            'hypervisor_type': self.hypervisor_type,
            'hypervisor_version': self.hypervisor_version,
            'hypervisor_hostname': nodename, 'cpu_info': '{}',
        }
        if self.uuid:
            resources['uuid'] = self.uuid
        return resources

    def uses_shared_storage(self, nodename):
        self._check(nodename)
        return self.shared_storage

    def get_pci_devices(self, nodename):
        self._check(nodename)
        return [dict(d) for d in self.pci_devices]

    def get_numa_topology(self, nodename):
        self._check(nodename)
        if not self.numa_cells:
            return None
        per_cell = self.vcpus // self.numa_cells
        return [{'id': n,
                 'cpuset': list(range(n * per_cell, (n + 1) * per_cell)),
                 'memory_mb': self.memory_mb // self.numa_cells}
                for n in range(self.numa_cells)]

    def spawn(self, instance_uuid, memory_mb):
        self.running[instance_uuid] = {'memory_mb': memory_mb}

    def destroy(self, instance_uuid):
        self.running.pop(instance_uuid, None)

    def get_per_instance_usage(self):
        return {uuid: dict(usage) for uuid, usage in self.running.items()}
