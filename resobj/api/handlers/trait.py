"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (1.6)."""

from resobj.api import errors
from resobj.api.handlers import resource_provider as rp_handler
from resobj.api import microversion
from resobj.api import negotiation
from resobj.api.policies import resource_provider as rp_policies
from resobj.api.policies import trait as policies
from resobj.api.schemas import common
from resobj.api.schemas import trait as schema
from resobj.api import util
from resobj import exception
from resobj.objects import trait as trait_obj

_6 = (1, 6)


@microversion.available(_6)
def list_traits(req):
    util.authorize(req, policies.LIST)
    util.check_query_names(req, schema.LIST_NAMES)
    _check_list_query(req)
    # As placement (and _check_list_query): a repeated parameter is its
    # last value.
    params = util.query(req, schema.LIST_QUERY,
                        last_of=('name', 'associated'))
    name_in = prefix = associated = None
    name = params.get('name')
    if name is not None and name.startswith('in:'):
        name_in = [n.strip() for n in name[3:].split(',') if n.strip()]
    elif name is not None:
        prefix = name[len('startswith:'):]
    if 'associated' in params:
        associated = params['associated'] == 'true'
    traits = trait_obj.TraitList.get_all(
        util.context(req), name_in=name_in, prefix=prefix,
        associated=associated)
    return util.respond(req, {'traits': [t.name for t in traits]})


def _check_list_query(req):
    # Placement's words for the two mistakes its users make most.
    name = req.GET.get('name')
    if name is not None and not name.startswith(('in:', 'startswith:')):
        raise errors.bad_request(
            'Badly formatted name parameter. Expected name query string '
            'parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. '
            'Got: "%s"' % name)
    associated = req.GET.get('associated')
    if associated is not None and associated not in ('true', 'false'):
        raise errors.bad_request('The query parameter "associated" only '
                                 'accepts "true" or "false"')


_INVALID_TRAIT = ('The trait is invalid. A valid trait must be no longer '
                  'than 255 characters, start with the prefix "CUSTOM_" and '
                  'use following characters: "A"-"Z", "0"-"9" and "_"')


def _name(req):
    name = req.urlvars['name']
    try:
        util.validate(name, common.TRAIT, 'Trait name')
    except errors.HTTPError:
        raise errors.bad_request(_INVALID_TRAIT)
    return name


@microversion.available(_6)
@negotiation.any_accept
def get_trait(req):
    util.authorize(req, policies.SHOW)
    name = req.urlvars['name']
    try:
        trait_obj.Trait.get_by_name(util.context(req), name)
    except exception.TraitNotFound as exc:
        raise errors.not_found(errors.placement_detail(exc))
    return util.respond(req, status=204)


@microversion.available(_6)
def put_trait(req):
    util.authorize(req, policies.UPDATE)
    name = _name(req)
    if not name.startswith('CUSTOM_'):
        raise errors.bad_request(_INVALID_TRAIT)
    trait = trait_obj.Trait(util.context(req), name=name)
    # Both answers name it, as placement's do.
    location = {'Location': '/traits/%s' % name}
    status = 201
    try:
        trait.create()
    except exception.TraitExists:
        status = 204
    return util.respond(req, status=status, cache_headers=True,
                        headers=location)


@microversion.available(_6)
def delete_trait(req):
    util.authorize(req, policies.DELETE)
    name = req.urlvars['name']
    try:
        trait_obj.Trait(util.context(req), name=name).destroy()
    except exception.TraitNotFound as exc:
        raise errors.not_found(errors.placement_detail(exc))
    return util.respond(req, status=204)


_NOT_FOUND = rp_handler.NOT_FOUND + ': ' + rp_handler.NOT_FOUND


def _provider_traits(rp):
    return {'traits': rp.get_traits(),
            'resource_provider_generation': rp.generation}


@microversion.available(_6)
def list_traits_for_resource_provider(req):
    util.authorize(req, rp_policies.TRAITS_LIST)
    rp = rp_handler.get_provider(req, _NOT_FOUND)
    return util.respond(req, _provider_traits(rp))


@microversion.available(_6)
@negotiation.reads_json()
def update_traits_for_resource_provider(req):
    util.authorize(req, rp_policies.TRAITS_UPDATE)
    # In placement's order: the body first, then the provider.
    data = util.json_body(req, schema.PUT_PROVIDER_TRAITS)
    rp = rp_handler.get_provider(req)
    rp_handler.check_generation(rp, data['resource_provider_generation'],
                                rp_handler.GENERATION_CHANGED)
    try:
        rp.set_traits(data['traits'])
    except exception.TraitNotFound as exc:
        # Placement's words here.
        raise errors.bad_request('No such trait %s' % exc.kwargs['name'])
    return util.respond(req, _provider_traits(rp))


@microversion.available(_6)
def delete_traits_for_resource_provider(req):
    util.authorize(req, rp_policies.TRAITS_DELETE)
    rp = rp_handler.get_provider(req)
    rp.set_traits([])
    return util.respond(req, status=204)
