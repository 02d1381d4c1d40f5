import datetime

from hypothesis import strategies as st

from resobj import objects
from resobj.tests import samples
from resobj.tests.samples import resource_provider as rp_samples

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)


@samples.strategy('Inventory', 'resource_class')
def _resource_classes():
    # Random text would almost never start with CUSTOM_, the prefix whose
    # backport to 1.0 must raise.
    return st.sampled_from(['VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_FPGA'])


def inventory(resource_class='VCPU', total=64, **kw):
    objects.register_all()
    values = dict(
        resource_provider_uuid=rp_samples.ROOT, resource_class=resource_class,
        total=total, reserved=4, min_unit=1, max_unit=16, step_size=1,
        allocation_ratio=4.0, created_at=NOW, updated_at=NOW)
    values.update(kw)
    return objects.Inventory(**values)


@samples.sample('Inventory')
def sample_inventory():
    # A standard class, so that every version can carry it.
    return inventory()


@samples.sample('InventoryList')
def inventory_list():
    objects.register_all()
    return objects.InventoryList(objects=[
        inventory(),
        inventory('MEMORY_MB', 262144, reserved=512, max_unit=131072,
                  allocation_ratio=1.5, updated_at=None),
        inventory('DISK_GB', 1800, reserved=0, min_unit=10, max_unit=900,
                  step_size=10, allocation_ratio=1.0)])
