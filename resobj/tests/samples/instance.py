import datetime

from resobj import objects
from resobj.tests import samples

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)

# Below 1.3 a volume-backed instance is sent with root_gb=0.
samples.converted('Instance', 'root_gb')


def _other(name):
    return samples.factories()[name]()


@samples.sample('Instance')
def instance():
    objects.register_all()
    flavor = _other('Flavor')
    bigger = _other('Flavor')
    bigger.flavorid, bigger.name, bigger.vcpus = 'big', 'm1.big', 8
    return objects.Instance(
        id=11, uuid='9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a', host='compute-1',
        node='compute-1.example.org', vm_state='active',
        task_state='resize_prep', project_id='p-42', user_id='u-7', vcpus=4,
        memory_mb=8192, root_gb=40, ephemeral_gb=10, flavor=flavor,
        old_flavor=flavor.obj_clone(), new_flavor=bigger,
        pci_devices=_other('PciDeviceList'), booted_from_volume=False,
        # Not pinned: a pinned instance cannot be backported before 1.5
        # (its own test covers the refusal), and the golden files hold
        # every version.
        numa_topology=samples.factories()['InstanceNUMATopology'](
            pinned=False),
        pci_requests=[_other('InstancePCIRequest')],
        created_at=NOW, updated_at=NOW, deleted_at=None, deleted=False)


@samples.sample('InstanceList')
def instance_list():
    objects.register_all()
    return objects.InstanceList(objects=[instance()])
