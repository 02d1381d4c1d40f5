"""/resource_classes and /resource_classes/{name} (from 1.2)."""

from resobj.api import errors
from resobj.api import microversion
from resobj.api import negotiation
from resobj.api.policies import resource_class as policies
from resobj.api.schemas import resource_class as schema
from resobj.api import util
from resobj import exception
from resobj.objects import resource_class as rc_obj


def _format(name):
    return {'name': name, 'links': [
        {'rel': 'self', 'href': '/resource_classes/%s' % name}]}


@microversion.available((1, 2))
def list_resource_classes(req):
    util.authorize(req, policies.LIST)
    classes = rc_obj.ResourceClassList.get_all(util.context(req))
    return util.respond(req, {'resource_classes': [
        _format(rc.name) for rc in classes]})


@microversion.available((1, 2))
@negotiation.reads_json()
def create_resource_class(req):
    util.authorize(req, policies.CREATE)
    data = util.json_body(req, schema.POST)
    rc = rc_obj.ResourceClass(util.context(req), name=data['name'])
    rc.create()
    location = '/resource_classes/%s' % rc.name
    return util.respond(req, status=201, headers={'Location': location})


def _get(req):
    try:
        return rc_obj.ResourceClass.get_by_name(util.context(req),
                                                req.urlvars['name'])
    except exception.ResourceClassNotFound as exc:
        raise errors.not_found(str(exc))


@microversion.available((1, 2))
def get_resource_class(req):
    util.authorize(req, policies.SHOW)
    return util.respond(req, _format(_get(req).name))


@microversion.available((1, 2))
@negotiation.reads_json((1, 6))
def update_resource_class(req):
    util.authorize(req, policies.UPDATE)
    if util.version(req) >= (1, 7):
        return _create_or_verify(req)
    data = util.json_body(req, schema.PUT_RENAME)
    rc = _get(req)
    rc.name = data['name']
    try:
        rc.save()
    except exception.ResourceClassExists as exc:
        # Placement's words for a rename onto another class's name,
        # not those of a duplicate POST.
        raise errors.conflict('Resource class already exists: %s'
                              % exc.kwargs['name'])
    return util.respond(req, _format(rc.name))


def _create_or_verify(req):
    """1.7+: PUT without a body makes sure the custom class exists."""
    name = req.urlvars['name']
    # As placement checks it: as the body of a POST would be.
    util.validate({'name': name}, schema.POST, 'JSON does not validate:')
    rc = rc_obj.ResourceClass(util.context(req), name=name)
    status = 201
    try:
        rc.create()
    except exception.ResourceClassExists:
        status = 204
    # Both answers name it, as placement's do.
    return util.respond(req, status=status, headers={
        'Location': '/resource_classes/%s' % name})


@microversion.available((1, 2))
def delete_resource_class(req):
    util.authorize(req, policies.DELETE)
    _get(req).destroy()
    return util.respond(req, status=204)
