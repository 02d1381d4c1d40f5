"""/resource_providers and /resource_providers/{uuid}."""

from resobj.api import errors
from resobj.api import negotiation
from resobj.api.policies import resource_provider as policies
from resobj.api import query
from resobj.api.schemas import common
from resobj.api.schemas import resource_provider as schema
from resobj.api import util
from resobj import exception
from resobj.objects import resource_provider as rp_obj


def links(version, uuid):
    base = '/resource_providers/%s' % uuid
    rels = [('self', ''), ('inventories', '/inventories'),
            ('usages', '/usages')]
    if version >= (1, 1):
        rels.append(('aggregates', '/aggregates'))
    if version >= (1, 6):
        rels.append(('traits', '/traits'))
    if version >= (1, 11):
        rels.append(('allocations', '/allocations'))
    return [{'rel': rel, 'href': base + path} for rel, path in rels]


def format_provider(version, rp):
    data = {'uuid': rp.uuid, 'name': rp.name, 'generation': rp.generation,
            'links': links(version, rp.uuid)}
    if version >= (1, 14):
        data['parent_provider_uuid'] = rp.parent_provider_uuid
        data['root_provider_uuid'] = rp.root_provider_uuid
    return data


NOT_FOUND = 'No resource provider with uuid %(uuid)s found'


def not_found(uuid, detail=NOT_FOUND):
    return errors.not_found(detail % {'uuid': uuid})


def provider_uuid(req, detail=NOT_FOUND):
    """The URL's ``{uuid}``, canonical; a 404 if it is not a uuid."""
    try:
        return query.canonical_uuid(req.urlvars['uuid'])
    except ValueError:
        raise not_found(req.urlvars['uuid'], detail)


def get_provider(req, detail=NOT_FOUND):
    """The provider named by the URL's ``{uuid}``, or a 404.

    ``detail``: placement's words for the 404, which differ by route.
    """
    uuid = provider_uuid(req, detail)
    try:
        return rp_obj.ResourceProvider.get_by_uuid(util.context(req), uuid)
    except exception.ResourceProviderNotFound:
        raise not_found(uuid, detail)


# Placement's words for a stale generation on a provider's traits or
# aggregates (its inventories' conflict is worded differently).
GENERATION_CHANGED = ("Resource provider's generation already changed. "
                      "Please update the generation and try again.")


def check_generation(rp, seen, detail='resource provider generation '
                     'conflict'):
    """Answer 409 before writing when the client's generation is stale.

    ``detail`` is placement's wording, which differs by route; it may
    name ``%(uuid)s``, ``%(actual)d`` and ``%(given)d``.
    """
    if rp.generation != seen:
        raise errors.conflict(
            detail % {'uuid': rp.uuid, 'actual': rp.generation,
                      'given': seen},
            errors.CONCURRENT_UPDATE)
    return rp


# As placement: a parameter of these given twice is its last value.
_LAST_VALUE_ONLY = ('name', 'uuid', 'in_tree', 'resources')


def list_resource_providers(req):
    util.authorize(req, policies.LIST)
    version = util.version(req)
    params = util.query(req, common.for_version(schema.list_query, version),
                        repeatable=('member_of', 'required'),
                        last_of=_LAST_VALUE_ONLY)
    filters = {}
    # An empty name filters nothing, as in placement (no provider has
    # one here: a name may not be empty).
    if params.get('name'):
        filters['name'] = params['name']
    if 'uuid' in params:
        filters['uuid'] = query.uuid(params['uuid'], 'uuid')
    if 'in_tree' in params:
        filters['in_tree'] = query.uuid(params['in_tree'], 'in_tree')
    if 'member_of' in params:
        filters['member_of'], forbidden = query.member_of(
            params['member_of'], version)
        if forbidden:
            filters['forbidden_aggregates'] = forbidden
    if 'required' in params:
        filters['required_traits'], filters['forbidden_traits'] = \
            query.required(params['required'], version,
                           conflicts=False)
    if 'resources' in params:
        filters['resources'] = query.resources(params['resources'])
    try:
        providers = rp_obj.ResourceProviderList.get_all_by_filters(
            util.context(req), filters)
    except exception.ResourceClassNotFound as exc:
        raise errors.bad_request('Invalid resource class in resources '
                                 'parameter: %s' % exc)
    except exception.TraitNotFound as exc:
        # Placement's words.
        raise errors.bad_request('Invalid trait(s) in "required" '
                                 'parameter: %s'
                                 % errors.placement_detail(exc))
    return util.respond(
        req, {'resource_providers': [format_provider(version, rp)
                                     for rp in providers]},
        last_modified=util.newest(*(rp.updated_at or rp.created_at
                                    for rp in providers)))


@negotiation.reads_json()
def create_resource_provider(req):
    util.authorize(req, policies.CREATE)
    version = util.version(req)
    data = util.json_body(req, common.for_version(schema.post, version))
    rp = rp_obj.ResourceProvider(util.context(req), name=data['name'])
    if data.get('uuid'):
        rp.uuid = query.canonical_uuid(data['uuid'])
    if data.get('parent_provider_uuid'):
        rp.parent_provider_uuid = query.canonical_uuid(
            data['parent_provider_uuid'])
    try:
        rp.create()
    except exception.ResourceProviderNotFound:
        raise errors.bad_request(_CREATE_FAILED % (
            rp.name, rp.uuid, 'parent provider UUID does not exist.'))
    except exception.InvalidResourceProviderParent as exc:
        raise errors.bad_request(_CREATE_FAILED % (
            rp.name, rp.uuid, _PARENT_FAULTS.get(
                exc.kwargs['reason'], exc.kwargs['reason'])))
    except exception.ResourceProviderExists:
        raise errors.conflict(_which_exists(req, rp), errors.DUPLICATE_NAME)
    location = '/resource_providers/%s' % rp.uuid
    if version >= (1, 20):
        return util.respond(req, format_provider(version, rp),
                            headers={'Location': location})
    return util.respond(req, status=201, headers={'Location': location})


# Placement's words for a provider it cannot create or save.
_CREATE_FAILED = ('Unable to create resource provider "%s", %s: Object '
                  'action create failed because: %s')
_SAVE_FAILED = 'Unable to save resource provider %s: Object action %s'
_PARENT_FAULTS = {
    'no such provider': 'parent provider UUID does not exist.',
    'a provider cannot be its own parent':
        'parent provider UUID cannot be same as UUID. Please set parent '
        'provider UUID to None if there is no parent.',
}


def _exists(req, uuid):
    try:
        rp_obj.ResourceProvider.get_by_uuid(util.context(req), uuid)
    except exception.ResourceProviderNotFound:
        return False
    return True


def _which_exists(req, rp):
    """Placement's 409 detail: whether the uuid or the name is taken."""
    if not _exists(req, rp.uuid):
        return ('Conflicting resource provider name: %s already exists.'
                % rp.name)
    return ('Conflicting resource provider uuid: %s already exists.'
            % rp.uuid)


def get_resource_provider(req):
    util.authorize(req, policies.SHOW)
    rp = get_provider(req)
    return util.respond(req, format_provider(util.version(req), rp),
                        last_modified=rp.updated_at or rp.created_at)


@negotiation.reads_json()
def update_resource_provider(req):
    util.authorize(req, policies.UPDATE)
    version = util.version(req)
    # In placement's order: the provider first, then the body.
    rp = get_provider(req)
    data = util.json_body(req, common.for_version(schema.put, version))
    rp.name = data['name']
    if 'parent_provider_uuid' in data:
        parent = data['parent_provider_uuid']
        parent = query.canonical_uuid(parent) if parent else None
        if parent != rp.parent_provider_uuid:
            if rp.parent_provider_uuid is not None and version < (1, 37):
                # Re-parenting and un-parenting came with 1.37; but a
                # parent that does not exist is reported first, as
                # placement does.
                if parent is not None and not _exists(req, parent):
                    raise errors.bad_request(_SAVE_FAILED % (
                        rp.uuid, 'create failed because: parent provider '
                        'UUID does not exist.'))
                raise errors.bad_request(_SAVE_FAILED % (
                    rp.uuid, 'update failed because: %s-parenting a '
                    'provider is not currently allowed.' % (
                        're' if parent else 'un')))
            rp.parent_provider_uuid = parent
    try:
        rp.save()
    except exception.ResourceProviderNotFound:
        raise errors.bad_request(_SAVE_FAILED % (
            rp.uuid, 'create failed because: parent provider UUID does '
            'not exist.'))
    except exception.InvalidResourceProviderParent as exc:
        if exc.kwargs['reason'] == 'no such provider':
            detail = ('create failed because: parent provider UUID does '
                      'not exist.')
        else:
            detail = ('update failed because: creating loop in the '
                      'provider tree is not allowed.')
        raise errors.bad_request(_SAVE_FAILED % (rp.uuid, detail))
    except exception.ResourceProviderExists:
        raise errors.conflict('Conflicting resource provider %s already '
                              'exists.' % rp.name, errors.DUPLICATE_NAME)
    return util.respond(req, format_provider(version, rp))


def delete_resource_provider(req):
    util.authorize(req, policies.DELETE)
    get_provider(req, NOT_FOUND + ' for delete').destroy()
    return util.respond(req, status=204)
