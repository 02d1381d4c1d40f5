"""GET /: the versions document; needs no token."""

from resobj.api import microversion
from resobj.api import negotiation
from resobj.api import util


@negotiation.any_accept
def home(req):
    return util.respond(req, {'versions': [{
        'id': 'v1.0',
        'min_version': str(microversion.MIN),
        'max_version': str(microversion.MAX),
        'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': ''}],
    }]})
