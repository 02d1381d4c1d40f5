import datetime

from resobj import objects
from resobj.tests import samples

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)


def _local_root_disk(instance):
    """The root disk the host provides: none for a volume-backed one."""
    if instance.obj_attr_is_set('booted_from_volume') and \
            instance.booted_from_volume:
        return 0
    return instance.root_gb


# Below 1.3 a volume-backed instance is sent with root_gb=0.
samples.converted('Instance', 'root_gb', key=_local_root_disk,
                  before='1.3')


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


@samples.variant('Instance')
def volume_backed_instance():
    # Its root_gb goes to versions before 1.3 as 0.
    found = instance()
    found.booted_from_volume = True
    return found


@samples.variant('Instance')
def pinned_instance():
    # Refused below 1.5 (ObjectBackportError).
    found = instance()
    found.numa_topology = samples.factories()['InstanceNUMATopology'](
        pinned=True)
    return found


@samples.sample('InstanceList')
def instance_list():
    objects.register_all()
    return objects.InstanceList(objects=[instance()])
