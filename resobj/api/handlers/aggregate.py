"""/resource_providers/{uuid}/aggregates (from 1.1).

From 1.19 both directions carry the provider generation, and a PUT is
checked against and bumps it; before, neither.
"""

from resobj.api.handlers import resource_provider as rp_handler
from resobj.api import microversion
from resobj.api import negotiation
from resobj.api.policies import resource_provider as policies
from resobj.api import query
from resobj.api.schemas import aggregate as schema
from resobj.api import util


def _format(req, rp, aggregates):
    data = {'aggregates': aggregates}
    if util.version(req) >= (1, 19):
        data['resource_provider_generation'] = rp.generation
    return data


@microversion.available((1, 1))
def get_aggregates(req):
    util.authorize(req, policies.AGGREGATES_LIST)
    rp = rp_handler.get_provider(req)
    return util.respond(req, _format(req, rp, rp.get_aggregates()))


@microversion.available((1, 1))
@negotiation.reads_json()
def set_aggregates(req):
    util.authorize(req, policies.AGGREGATES_UPDATE)
    rp = rp_handler.get_provider(req)
    with_generation = util.version(req) >= (1, 19)
    if with_generation:
        data = util.json_body(req, schema.PUT)
        rp_handler.check_generation(rp, data['resource_provider_generation'],
                                    rp_handler.GENERATION_CHANGED)
        aggregates = data['aggregates']
    else:
        aggregates = util.json_body(req, schema.PUT_LIST)
    aggregates = [query.canonical_uuid(a) for a in aggregates]
    rp.set_aggregates(aggregates, increment_generation=with_generation)
    # As placement: the answer lists them as the request did.
    return util.respond(req, _format(req, rp, aggregates))
