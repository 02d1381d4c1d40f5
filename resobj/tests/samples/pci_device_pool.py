from hypothesis import strategies as st

from resobj import objects
from resobj.tests import samples

# Vendor and product ids are four lower-case hex digits, as in sysfs.
HEX4 = st.text('0123456789abcdef', min_size=4, max_size=4)


@samples.sample('PciDevicePool')
def pci_device_pool():
    objects.register_all()
    return objects.PciDevicePool(
        product_id='1520', vendor_id='8086', numa_node=1, count=6,
        tags={'dev_type': 'type-VF', 'physical_network': 'physnet1',
              'trusted': None})


@samples.sample('PciDevicePoolList')
def pci_device_pool_list():
    objects.register_all()
    return objects.PciDevicePoolList(objects=[
        pci_device_pool(),
        objects.PciDevicePool(product_id='1521', vendor_id='8086',
                              numa_node=None, count=1,
                              tags={'dev_type': 'type-PF'}),
    ])


for _field in ('vendor_id', 'product_id'):
    samples.strategy('PciDevicePool', _field)(lambda: HEX4)
