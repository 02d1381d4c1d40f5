"""/resource_providers/{uuid}/usages and /usages (from 1.9)."""

from resobj.api.handlers import resource_provider as rp_handler
from resobj.api import microversion
from resobj.api.policies import resource_provider as rp_policies
from resobj.api.policies import usage as policies
from resobj.api.schemas import common
from resobj.api.schemas import usage as schema
from resobj.api import util
from resobj import exception
from resobj.objects import usage as usage_obj


def list_usages(req):
    util.authorize(req, rp_policies.USAGES)
    # Placement's words for a missing provider here.
    detail = rp_handler.NOT_FOUND + ': ' + rp_handler.NOT_FOUND
    uuid = rp_handler.provider_uuid(req, detail)
    try:
        usages = usage_obj.UsageList.get_all_by_resource_provider_uuid(
            util.context(req), uuid)
    except exception.ResourceProviderNotFound:
        raise rp_handler.not_found(uuid, detail)
    return util.respond(req, {
        'resource_provider_generation': usages.resource_provider_generation,
        'usages': usages.as_dict()})


@microversion.available((1, 9))
def get_total_usages(req):
    version = util.version(req)
    # As placement: a repeated parameter is its last value.
    params = util.query(req, common.for_version(schema.query, version),
                        last_of=('project_id', 'user_id', 'consumer_type'))
    util.authorize(req, policies.USAGES,
                   {'project_id': params['project_id']})
    typed = version >= (1, 38)
    usages = usage_obj.UsageList.get_all_by_project_user(
        util.context(req), params['project_id'],
        user_id=params.get('user_id'),
        # Before 1.38 the usages are per class only: summed over the
        # types by the database.
        consumer_type=(params.get('consumer_type') if typed
                       else usage_obj.ALL_TYPES),
        # Consumer counts are reported from 1.38 only.
        count_consumers=typed)
    if not typed:
        return util.respond(req, {'usages': usages.as_dict()})
    by_type = {}
    for usage in usages:
        entry = by_type.setdefault(usage.consumer_type, {
            'consumer_count': usage.consumer_count})
        entry[usage.resource_class] = usage.usage
    return util.respond(req, {'usages': by_type})
