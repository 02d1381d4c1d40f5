from resobj.api.policies import base

PREFIX = 'placement:resource_classes:%s'
COLLECTION = '/resource_classes'
ITEM = '/resource_classes/{name}'
LIST = PREFIX % 'list'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'

rules = [
    base.admin_op(LIST, 'List resource classes.', ('GET', COLLECTION)),
    base.admin_op(CREATE, 'Create a resource class.', ('POST', COLLECTION)),
    base.admin_op(SHOW, 'Show a resource class.', ('GET', ITEM)),
    base.admin_op(UPDATE, 'Create or update a resource class.',
                  ('PUT', ITEM)),
    base.admin_op(DELETE, 'Delete a resource class.', ('DELETE', ITEM)),
]
