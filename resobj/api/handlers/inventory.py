"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

from resobj.api import errors
from resobj.api.handlers import resource_provider as rp_handler
from resobj.api import microversion
from resobj.api import negotiation
from resobj.api.policies import inventory as policies
from resobj.api.schemas import inventory as schema
from resobj.api import util
from resobj import exception
from resobj.objects import inventory as inv_obj

# The API's default max_unit is "no limit", unlike the object's 1.
_API_DEFAULTS = {'max_unit': schema.MAX_INT}


def _format(inventory):
    return {name: getattr(inventory, name) for name in schema.VALUE_FIELDS}


def build(req, rp, resource_class, values):
    """An Inventory from request values, checked as the API requires."""
    values = dict(_API_DEFAULTS, **values)
    reserved, total = values.get('reserved', 0), values['total']
    # Equal became legal in 1.26 (a provider taken out of service).
    if reserved > total or (reserved == total and
                            util.version(req) < (1, 26)):
        # Placement's words.
        raise errors.bad_request(
            "Unable to %s inventory for resource provider %s: Invalid "
            "inventory for '%s' on resource provider '%s'. The reserved "
            "value is greater than %stotal." % (
                _action(req), rp.uuid, resource_class, rp.uuid,
                '' if util.version(req) >= (1, 26) else 'or equal to '))
    fields = {k: v for k, v in values.items() if k in schema.VALUE_FIELDS}
    return inv_obj.Inventory(util.context(req), resource_class=resource_class,
                             **fields)


# Placement's words for a missing provider on these routes' GET.
_NOT_FOUND = rp_handler.NOT_FOUND + ' : ' + rp_handler.NOT_FOUND


def _one(rp, inventory):
    return dict(_format(inventory),
                resource_provider_generation=rp.generation)


def _all(rp, inventories):
    return {'resource_provider_generation': rp.generation,
            'inventories': {inv.resource_class: _format(inv)
                            for inv in inventories}}


def _newest(inventories):
    """The inventories' latest change time; NO_TIME if there are none."""
    if not inventories:
        return util.NO_TIME
    return util.newest(*(i.updated_at or i.created_at for i in inventories))


def _location(rp, resource_class):
    return '/resource_providers/%s/inventories/%s' % (rp.uuid, resource_class)


def _action(req):
    return 'create' if req.method == 'POST' else 'update'


def get_inventories(req):
    util.authorize(req, policies.LIST)
    rp = rp_handler.get_provider(req, _NOT_FOUND)
    inventories = inv_obj.InventoryList.get_all_by_resource_provider(
        util.context(req), rp)
    return util.respond(req, _all(rp, inventories),
                        last_modified=_newest(inventories))


@negotiation.reads_json()
def create_inventory(req):
    util.authorize(req, policies.CREATE)
    rp = rp_handler.get_provider(req)
    data = util.json_body(req, schema.POST)
    inventory = build(req, rp, data['resource_class'], data)
    try:
        rp.add_inventory(inventory)
    except exception.ResourceClassNotFound as exc:
        # Placement's words here.
        raise errors.bad_request(
            'Unable to create inventory for resource provider %s: %s'
            % (rp.uuid, exc))
    return util.respond(req, _one(rp, inventory), status=201, headers={
        'Location': _location(rp, inventory.resource_class)})


@negotiation.reads_json()
def set_inventories(req):
    util.authorize(req, policies.UPDATE)
    rp = rp_handler.get_provider(req)
    data = util.json_body(req, schema.PUT_ALL)
    rp_handler.check_generation(rp, data['resource_provider_generation'])
    # Checked in the order of the body, as placement reports the first
    # bad one; written in class order.
    built = [build(req, rp, rc, values)
             for rc, values in data['inventories'].items()]
    inventories = inv_obj.InventoryList(util.context(req), objects=sorted(
        built, key=lambda inventory: inventory.resource_class))
    try:
        rp.set_inventory(inventories)
    except exception.ResourceClassNotFound as exc:
        # Placement's words here.
        raise errors.bad_request(
            'Unknown resource class in inventory for resource provider '
            '%s: %s' % (rp.uuid, exc))
    except exception.InventoryInUse as exc:
        # Placement's words here.
        raise errors.conflict('update conflict: %s'
                              % errors.placement_detail(exc),
                              errors.INVENTORY_INUSE)
    return util.respond(req, _all(rp, inventories),
                        last_modified=None if inventories else util.NO_TIME)


@microversion.available((1, 5), status=405)
def delete_inventories(req):
    util.authorize(req, policies.DELETE)
    rp = rp_handler.get_provider(req)
    rp.set_inventory(inv_obj.InventoryList(util.context(req), objects=[]))
    return util.respond(req, status=204)


def _find(req, rp):
    resource_class = req.urlvars['resource_class']
    inventory = inv_obj.InventoryList.get_all_by_resource_provider(
        util.context(req), rp).find(resource_class)
    if inventory is None:
        raise errors.not_found('No inventory of class %s for %s'
                               % (resource_class, rp.uuid))
    return inventory


def get_inventory(req):
    util.authorize(req, policies.SHOW)
    rp = rp_handler.get_provider(req, _NOT_FOUND)
    inventory = _find(req, rp)
    return util.respond(req, _one(rp, inventory),
                        last_modified=inventory.updated_at or
                        inventory.created_at)


@negotiation.reads_json()
def update_inventory(req):
    util.authorize(req, policies.UPDATE)
    rp = rp_handler.get_provider(req)
    data = util.json_body(req, schema.PUT_ONE)
    rp_handler.check_generation(rp, data['resource_provider_generation'])
    resource_class = req.urlvars['resource_class']
    inventory = build(req, rp, resource_class, data)
    try:
        rp.update_inventory(inventory)
    except exception.ResourceClassNotFound as exc:
        # The class is the URL's: placement answers that it is not found.
        raise errors.not_found(str(exc))
    except exception.InventoryNotFound:
        raise errors.bad_request(
            'No inventory record with resource class for resource provider '
            '%s: No inventory of class %s found.'
            % (rp.uuid, resource_class))
    return util.respond(req, _one(rp, inventory))


def delete_inventory(req):
    util.authorize(req, policies.DELETE)
    rp = rp_handler.get_provider(req)
    resource_class = req.urlvars['resource_class']
    try:
        rp.delete_inventory(resource_class)
    except exception.ResourceClassNotFound as exc:
        raise errors.not_found(str(exc))
    except exception.InventoryNotFound:
        raise errors.not_found(
            'No inventory of class %s found for delete: No inventory of '
            'class %s found for delete' % (resource_class, resource_class))
    except exception.InventoryInUse as exc:
        # Placement's words here, and its code: on this route it is the
        # one of a concurrent update, not placement.inventory.inuse as on
        # the others.
        raise errors.conflict('Unable to delete inventory of class %s: %s'
                              % (resource_class,
                                 errors.placement_detail(exc)),
                              errors.CONCURRENT_UPDATE)
    return util.respond(req, status=204)
