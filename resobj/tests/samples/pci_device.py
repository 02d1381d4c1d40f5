import datetime

from hypothesis import strategies as st

from resobj import objects
from resobj.objects import pci_device as pci_device_obj
from resobj.tests import samples
from resobj.tests.samples import pci_device_pool

NOW = datetime.datetime(2026, 11, 21, 12, 0, 0,
                        tzinfo=datetime.timezone.utc)

# Domain, bus, slot (5 bits) and function (3 bits), as PCIAddressField
# accepts them.
ADDRESSES = st.builds('{:04x}:{:02x}:{:02x}.{:x}'.format,
                      st.integers(0, 0xffff), st.integers(0, 0xff),
                      st.integers(0, 0x1f), st.integers(0, 7))


@samples.sample('PciDevice')
def pci_device():
    objects.register_all()
    # A VF given to an instance; its PF address shows how versions
    # before 1.2 carry it in extra_info.
    return objects.PciDevice(
        id=11, compute_node_id=3, address='0000:81:00.1',
        vendor_id='8086', product_id='1520', dev_type='type-VF',
        status='allocated', dev_id='pci_0000_81_00_1',
        label='label_8086_1520',
        instance_uuid='5d0c1e5b-3f4a-4b8e-9a1d-2c7e6f8b9a01',
        request_id='b7e2a4c9-1d3f-4e5a-8b6c-0f9d2e1a3c4b', numa_node=1,
        parent_addr='0000:81:00.0', extra_info={'vf_number': '1'},
        created_at=NOW, updated_at=NOW, deleted_at=None, deleted=False)


@samples.sample('PciDeviceList')
def pci_device_list():
    objects.register_all()
    # Every value here exists since 1.0, so each list version has a
    # golden file.
    plain = objects.PciDevice(
        id=12, compute_node_id=3, address='0000:04:00.0',
        vendor_id='10de', product_id='1db6', dev_type='type-PCI',
        status='available', dev_id='pci_0000_04_00_0',
        label='label_10de_1db6', instance_uuid=None, request_id=None,
        numa_node=0, parent_addr=None, extra_info={},
        created_at=NOW, updated_at=None, deleted_at=None, deleted=False)
    return objects.PciDeviceList(objects=[pci_device(), plain])


samples.strategy('PciDevice', 'address')(lambda: ADDRESSES)
samples.strategy('PciDevice', 'parent_addr')(
    lambda: st.one_of(st.none(), ADDRESSES))
for _field in ('vendor_id', 'product_id'):
    samples.strategy('PciDevice', _field)(lambda: pci_device_pool.HEX4)


def _parent_and_extra_info(device):
    """The parent PF's address and the rest of extra_info.

    A device read at a version before 1.2 finds its parent_addr in
    extra_info (obj_load_attr).
    """
    extra_info = dict(device.extra_info) if device.obj_attr_is_set(
        'extra_info') else {}
    extra_info.pop(pci_device_obj.PHYS_FUNCTION, None)
    return device.parent_addr, extra_info


# Before 1.2 parent_addr travels inside extra_info['phys_function']; the
# unit tests of PciDevice check that conversion.
samples.converted('PciDevice', 'parent_addr', 'extra_info',
                  key=_parent_and_extra_info, before='1.2')
