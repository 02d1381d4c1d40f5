"""The allocation payload rules: what one instance holds, on which provider.

These are the rules of the allocations spec, in one place:

* VCPU = flavor.vcpus and MEMORY_MB = flavor.memory_mb, on the compute
  node's provider;
* DISK_GB = root_gb + ephemeral_gb + swap, swap converted from MB to GB
  and rounded up (a flavor's swap is in MB; nova once counted those MB
  as GB), with root_gb counted as 0 for an instance booted from a
  volume (its root disk is the volume's, not this host's);
* DISK_GB goes to the compute node's provider when the node uses local
  storage or the instance booted from a volume (its ephemeral and swap
  disks are local then), and to the sharing storage provider when the
  node uses shared storage;
* PCI_DEVICE = the number of the instance's ALLOCATED ``type-PCI``
  devices (SR-IOV PFs and VFs are not counted);
* zero amounts are omitted, and so is a provider left with none.
"""

import math

import os_resource_classes as orc

VCPU = orc.VCPU
MEMORY_MB = orc.MEMORY_MB
DISK_GB = orc.DISK_GB
PCI_DEVICE = orc.PCI_DEVICE

# The classes the node's own provider has inventory of.
NODE_CLASSES = (VCPU, MEMORY_MB, DISK_GB, PCI_DEVICE)

PCI_COUNTED_TYPE = 'type-PCI'
PCI_COUNTED_STATUS = 'allocated'


def swap_gb(swap_mb):
    """Swap in whole GB, rounded up: 1 MB of swap still needs 1 GB."""
    return int(math.ceil((swap_mb or 0) / 1024.0))


def disk_gb(flavor, booted_from_volume):
    root = 0 if booted_from_volume else flavor.root_gb
    return root + flavor.ephemeral_gb + swap_gb(flavor.swap)


def pci_count(devices, instance_uuid):
    """How many of ``devices`` count as the instance's PCI_DEVICE."""
    return sum(1 for d in devices
               if d.instance_uuid == instance_uuid and
               d.status == PCI_COUNTED_STATUS and
               d.dev_type == PCI_COUNTED_TYPE)


def build(flavor, booted_from_volume, node_provider, sharing_provider=None,
          pci_devices=0):
    """{provider uuid: {class: amount}} for one instance of ``flavor``.

    ``sharing_provider`` is the uuid of the provider that shares DISK_GB
    with the node when the node uses shared storage, else None.
    ``pci_devices`` is the count from :func:`pci_count`.
    """
    node = {VCPU: flavor.vcpus, MEMORY_MB: flavor.memory_mb,
            PCI_DEVICE: pci_devices}
    disk = disk_gb(flavor, booted_from_volume)
    payload = {node_provider: node}
    if sharing_provider is None or booted_from_volume:
        node[DISK_GB] = disk
    else:
        payload[sharing_provider] = {DISK_GB: disk}
    return strip_zeros(payload)


def strip_zeros(payload):
    """``payload`` without zero amounts and without empty providers."""
    out = {}
    for provider, amounts in payload.items():
        kept = {rc: int(n) for rc, n in amounts.items() if n}
        if kept:
            out[provider] = kept
    return out


def on_provider(payload, provider):
    """The amounts ``payload`` holds on ``provider`` ({} if none)."""
    return dict(payload.get(provider, {}))
