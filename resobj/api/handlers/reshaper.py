"""POST /reshaper (1.30): move inventory and allocations atomically."""

from resobj.api import errors
from resobj.api.handlers import allocation as alloc_handler
from resobj.api.handlers import inventory as inv_handler
from resobj.api.handlers import resource_provider as rp_handler
from resobj.api import microversion
from resobj.api import negotiation
from resobj.api.policies import reshaper as policies
from resobj.api import query
from resobj.api.schemas import common
from resobj.api.schemas import reshaper as schema
from resobj.api import util
from resobj import exception
from resobj.objects import inventory as inv_obj
from resobj.objects import reshaper
from resobj.objects import resource_provider as rp_obj


def _provider(req, uuid):
    try:
        return rp_obj.ResourceProvider.get_by_uuid(util.context(req), uuid)
    except exception.ResourceProviderNotFound:
        # Placement's words.
        raise errors.bad_request(
            'Resource provider %s in inventories not found: No resource '
            'provider with uuid %s found' % (uuid, uuid),
            errors.PROVIDER_NOT_FOUND)


@microversion.available((1, 30))
@negotiation.reads_json()
def reshape(req):
    util.authorize(req, policies.RESHAPE)
    version = util.version(req)
    data = util.json_body(req, common.for_version(schema.post, version))
    ctx = util.context(req)
    # Checked in the order of the body, as placement reports the first
    # unknown provider or stale generation; built in uuid order.
    providers = {}
    for uuid, part in data['inventories'].items():
        rp = providers[uuid] = _provider(req, query.canonical_uuid(uuid))
        rp_handler.check_generation(
            rp, part['resource_provider_generation'],
            'resource provider generation conflict for provider %(uuid)s: '
            'actual: %(actual)d, given: %(given)d')
    inventories = {}
    for uuid, part in sorted(data['inventories'].items()):
        rp = providers[uuid]
        inventories[rp] = inv_obj.InventoryList(ctx, objects=[
            inv_handler.build(req, rp, rc, values)
            for rc, values in sorted(part['inventories'].items())])
    allocations, generations, emptied = alloc_handler.build_request(
        req, {query.canonical_uuid(c): part
              for c, part in data['allocations'].items()})
    try:
        reshaper.reshape(ctx, inventories, allocations,
                         consumer_generations=generations or None,
                         emptied=emptied)
    except exception.ResourceProviderNotFound as exc:
        # The inventories' providers were found above: this is one an
        # allocation names. Placement's words and code, as for a write of
        # allocations.
        raise errors.bad_request(
            "Allocation for resource provider '%s' that does not exist."
            % exc.kwargs.get('key', ''))
    except exception.ResourceClassNotFound as exc:
        # Placement's words.
        raise errors.bad_request('malformed reshaper data: %s' % exc)
    except exception.InventoryInUse as exc:
        # Placement's words here.
        raise errors.conflict('update conflict: %s'
                              % errors.placement_detail(exc),
                              errors.INVENTORY_INUSE)
    return util.respond(req, status=204)
