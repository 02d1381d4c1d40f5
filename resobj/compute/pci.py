"""PCI requests: pick available devices, claim them, free them.

A request is ``{'count': n, 'vendor_id': v, 'product_id': p}`` (vendor
and product optional, matching any). Devices move available -> claimed
-> allocated through PciDeviceList's claim_for_instance,
allocate_for_instance and free_for_instance: each moves all the devices
in one transaction that compares and swaps every device's status, so a
claim of several devices that loses a race to another writer takes none
of them, and no reader sees part of it. The tracker's own device objects
are then refreshed from what was stored.
"""

from oslo_log import log as logging

from resobj.compute import claims
from resobj.compute import exception
from resobj.compute import numa
from resobj import exception as resobj_exc
from resobj import objects

LOG = logging.getLogger(__name__)

AVAILABLE = 'available'


def requests_for(flavor, pci_requests, aliases):
    """(request dicts for select, InstancePCIRequests to record).

    ``pci_requests`` given by the caller wins (older callers pass
    vendor/product dicts); otherwise the flavor's aliases are looked
    up in ``aliases`` ([compute] pci_alias).
    """
    recorded = recorded_requests(flavor)
    if pci_requests is not None:
        return pci_requests, recorded
    requests = []
    for name, count in numa.pci_requests_from_flavor(flavor):
        spec = aliases.get(name)
        if spec is None:
            raise resobj_exc.InvalidFlavorExtraSpec(
                flavor=flavor.flavorid, key=numa.PCI_ALIAS_SPEC,
                value=flavor.extra_specs.get(numa.PCI_ALIAS_SPEC),
                reason='no [compute] pci_alias named %r on this '
                       'host' % name)
        requests.append(dict(spec, count=count))
    return requests, recorded


def recorded_requests(flavor):
    """The flavor's PCI alias requests as Instance.pci_requests holds them."""
    return [objects.InstancePCIRequest(alias_name=name, count=count)
            for name, count in numa.pci_requests_from_flavor(flavor)]


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


_REFUSED = (resobj_exc.PciDeviceStatusChanged,
            resobj_exc.PciDeviceInvalidStatus,
            resobj_exc.PciDeviceInvalidOwner,
            resobj_exc.PciDeviceNotFound)


def _refresh(devices, stored):
    by_id = {d.id: d for d in stored}
    for device in devices:
        device.refresh_from(by_id[device.id])


def claim(devices, instance_uuid, node):
    """Claim and allocate ``devices`` for the instance; all or none."""
    devices = list(devices)
    if not devices:
        return devices
    context = devices[0].obj_context
    ids = [d.id for d in devices]
    try:
        objects.PciDeviceList.claim_for_instance(context, ids, instance_uuid)
    except _REFUSED as exc:
        raise exception.PciDeviceRequestFailed(
            node=node, consumer=instance_uuid,
            reasons='device taken concurrently (%s)' % exc)
    try:
        stored = objects.PciDeviceList.allocate_for_instance(
            context, ids, instance_uuid)
    except _REFUSED as exc:
        # Ours since the claim; only a foreign free could move them.
        with claims.logged_undo('undo PCI claim of %s' % instance_uuid):
            objects.PciDeviceList.free_for_instance(context, ids,
                                                    instance_uuid)
        raise exception.PciDeviceRequestFailed(
            node=node, consumer=instance_uuid,
            reasons='device freed concurrently (%s)' % exc)
    _refresh(devices, stored)
    return devices


def free(devices, instance_uuid):
    """Make the instance's devices available again, all in one write."""
    mine = [d for d in devices if d.instance_uuid == instance_uuid]
    if not mine:
        return
    stored = objects.PciDeviceList.free_for_instance(
        mine[0].obj_context, [d.id for d in mine], instance_uuid)
    _refresh(mine, stored)


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
