"""PCI requests: pick available devices, claim them, free them.

A request is ``{'count': n, 'vendor_id': v, 'product_id': p}`` (vendor
and product optional, matching any). Devices move available -> claimed
-> allocated in memory and are saved with PciDevice.save(), whose status
compare-and-swap makes a device taken by another writer since it was
read fail the save; a claim of several devices then frees the ones it
already saved, so it takes all of them or none.
"""

from oslo_log import log as logging

from resobj.compute import exception
from resobj import exception as resobj_exc

LOG = logging.getLogger(__name__)

AVAILABLE = 'available'


def _matches(device, request):
    return all(request.get(key) in (None, getattr(device, key))
               for key in ('vendor_id', 'product_id', 'dev_type'))


def _spec(request):
    return '%s:%s x%d' % (request.get('vendor_id') or '*',
                          request.get('product_id') or '*',
                          request.get('count', 1))


def select(devices, requests, node, consumer):
    """The devices satisfying ``requests``, or PciDeviceRequestFailed.

    Checks every request before raising, so the error names all that
    is short.
    """
    free = [d for d in devices if d.status == AVAILABLE]
    chosen, short = [], []
    for request in requests or ():
        count = int(request.get('count', 1))
        matching = [d for d in free if _matches(d, request)
                    and d not in chosen]
        if len(matching) < count:
            short.append({'spec': _spec(request), 'requested': count,
                          'free': len(matching),
                          'short': count - len(matching)})
            continue
        chosen.extend(matching[:count])
    if short:
        raise exception.PciDeviceRequestFailed(
            node=node, consumer=consumer, shortages=short)
    return chosen


def claim(devices, instance_uuid, node):
    """Claim and allocate ``devices`` for the instance; all or none."""
    done = []
    try:
        for device in devices:
            device.claim(instance_uuid)
            device.allocate(instance_uuid)
            device.save()
            done.append(device)
    except (resobj_exc.PciDeviceStatusChanged,
            resobj_exc.PciDeviceInvalidStatus) as exc:
        free(done, instance_uuid)
        raise exception.PciDeviceRequestFailed(
            node=node, consumer=instance_uuid,
            reasons='device taken concurrently (%s)' % exc)
    return done


def free(devices, instance_uuid):
    """Make the instance's devices available again and save them."""
    for device in devices:
        if device.instance_uuid != instance_uuid:
            continue
        device.free(instance_uuid)
        device.save()


def sync(context, node, devices, reported, pci_device_cls):
    """Create devices the driver reports that the node does not have yet.

    Returns the node's devices (existing plus created). Devices no
    longer reported are marked removed when available.
    """
    by_address = {d.address: d for d in devices}
    out = list(devices)
    seen = set()
    for spec in reported:
        seen.add(spec['address'])
        if spec['address'] in by_address:
            continue
        device = pci_device_cls(context, compute_node_id=node.id,
                                status=AVAILABLE, **spec)
        device.create()
        out.append(device)
    for device in devices:
        if device.address not in seen and device.status == AVAILABLE:
            LOG.info('PCI device %s left node %s', device.address,
                     node.hypervisor_hostname)
            device.remove()
            device.save()
    return out
