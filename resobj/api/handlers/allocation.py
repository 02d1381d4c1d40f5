"""Allocations: of one consumer, of several (POST, 1.13), of a provider.

Routes: /allocations/{consumer_uuid}, /allocations and
/resource_providers/{uuid}/allocations.
"""

from resobj.api import errors
from resobj.api.handlers import resource_provider as rp_handler
from resobj.api import microversion
from resobj.api import negotiation
from resobj.api.policies import allocation as policies
from resobj.api.policies import resource_provider as rp_policies
from resobj.api import query
from resobj.api.schemas import allocation as schema
from resobj.api.schemas import common
from resobj.api import util
from resobj import exception
from resobj.objects import allocation as alloc_obj

# Who owns allocations written before 1.8, when requests named no
# project or user (placement's incomplete-consumer placeholders).
INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'


def _consumer_uuid(req):
    """The URL's consumer uuid as the database stores it, or None.

    None when it is no uuid: no consumer has it. Placement reads such a
    consumer's allocations as empty and finds none to delete (a 404),
    and refuses to write them (a 400).
    """
    try:
        return query.canonical_uuid(req.urlvars['consumer_uuid'])
    except ValueError:
        return None


def list_for_consumer(req):
    util.authorize(req, policies.LIST)
    version = util.version(req)
    consumer_uuid = _consumer_uuid(req)
    if consumer_uuid is None:
        return util.respond(req, {'allocations': {}})
    view = alloc_obj.get_consumer_view(util.context(req), consumer_uuid)
    if not view['allocations']:
        return util.respond(req, {'allocations': {}})
    data = {'allocations': view['allocations']}
    if version >= (1, 12):
        data.update(project_id=view['project_id'], user_id=view['user_id'])
    if version >= (1, 28):
        data['consumer_generation'] = view['consumer_generation']
    if version >= (1, 38):
        data['consumer_type'] = view['consumer_type'] or 'unknown'
    return util.respond(req, data)


def list_for_resource_provider(req):
    util.authorize(req, rp_policies.ALLOCATIONS_LIST)
    rp = rp_handler.get_provider(
        req, "Resource provider '%(uuid)s' not found: " +
        rp_handler.NOT_FOUND)
    view = alloc_obj.get_provider_view(util.context(req), rp.uuid)
    if util.version(req) < (1, 28):
        for entry in view.values():
            del entry['consumer_generation']
    return util.respond(req, {'allocations': view,
                              'resource_provider_generation': rp.generation})


def _allocations(version, consumer_uuid, data):
    """Allocation objects for one consumer's part of a request."""
    owner = {
        'consumer_uuid': consumer_uuid,
        'project_id': data.get('project_id', INCOMPLETE_CONSUMER_ID),
        'user_id': data.get('user_id', INCOMPLETE_CONSUMER_ID),
    }
    if 'consumer_type' in data:
        owner['consumer_type'] = data['consumer_type']
    if isinstance(data['allocations'], list):
        pairs = [(a['resource_provider']['uuid'], a['resources'])
                 for a in data['allocations']]
    else:
        pairs = [(rp, a['resources'])
                 for rp, a in data['allocations'].items()]
    seen = set()
    result = []
    for rp_uuid, resources in pairs:
        rp_uuid = query.canonical_uuid(rp_uuid)
        if rp_uuid in seen:
            raise errors.bad_request(
                'Resource provider %s appears more than once in the '
                'allocations of consumer %s.' % (rp_uuid, consumer_uuid))
        seen.add(rp_uuid)
        for resource_class, used in sorted(resources.items()):
            result.append(alloc_obj.Allocation(
                resource_provider_uuid=rp_uuid,
                resource_class=resource_class, used=used, **owner))
    return result, owner


def build_request(req, consumers):
    """What ``replace_all`` needs for {consumer uuid: request part}.

    Returns (AllocationList, consumer generations, emptied consumers).
    """
    version = util.version(req)
    objects, generations, emptied = [], {}, {}
    for consumer_uuid, data in consumers.items():
        allocations, owner = _allocations(version, consumer_uuid, data)
        objects.extend(allocations)
        if not allocations:
            emptied[consumer_uuid] = (owner['project_id'], owner['user_id'])
        if version >= (1, 28):
            generations[consumer_uuid] = data['consumer_generation']
    return (alloc_obj.AllocationList(util.context(req), objects=objects),
            generations, emptied)


def _replace(req, consumers):
    """Write {consumer uuid: request part} in one transaction."""
    allocation_list, generations, emptied = build_request(req, consumers)
    try:
        allocation_list.replace_all(
            consumer_generations=generations or None, emptied=emptied)
    except exception.ResourceProviderNotFound as exc:
        # Placement's words.
        raise errors.bad_request(
            "Allocation for resource provider '%s' that does not exist."
            % exc.kwargs.get('key', ''))
    except exception.ResourceClassNotFound as exc:
        # Placement's words, which differ by route.
        if req.method == 'PUT':
            (consumer_uuid,) = consumers
            raise errors.bad_request(
                'Unable to allocate inventory for consumer %s: %s'
                % (consumer_uuid, exc))
        raise errors.bad_request('Unable to allocate inventory %s' % exc)
    return util.respond(req, status=204)


@negotiation.reads_json()
def set_allocations_for_consumer(req):
    util.authorize(req, policies.UPDATE)
    version = util.version(req)
    data = util.json_body(req, common.for_version(schema.put, version))
    consumer_uuid = _consumer_uuid(req)
    if consumer_uuid is None:
        # Placement's words.
        raise errors.bad_request('Malformed consumer_uuid: %s'
                                 % req.urlvars['consumer_uuid'])
    return _replace(req, {consumer_uuid: data})


@microversion.available((1, 13))
@negotiation.reads_json()
def set_allocations(req):
    util.authorize(req, policies.MANAGE)
    version = util.version(req)
    data = util.json_body(req, common.for_version(schema.post, version))
    return _replace(req, {query.canonical_uuid(uuid): part
                          for uuid, part in data.items()})


def delete_allocations(req):
    util.authorize(req, policies.DELETE)
    consumer_uuid = _consumer_uuid(req)
    # Placement's words.
    none_found = "No allocations for consumer '%s'"
    if consumer_uuid is None:
        raise errors.not_found(none_found % req.urlvars['consumer_uuid'])
    try:
        alloc_obj.AllocationList.delete_all(util.context(req), consumer_uuid)
    except exception.ConsumerNotFound:
        raise errors.not_found(none_found % consumer_uuid)
    return util.respond(req, status=204)
