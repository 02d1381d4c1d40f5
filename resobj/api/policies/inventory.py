from resobj.api.policies import base

PREFIX = 'placement:resource_providers:inventories:%s'
COLLECTION = '/resource_providers/{uuid}/inventories'
ITEM = COLLECTION + '/{resource_class}'
LIST = PREFIX % 'list'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'

rules = [
    base.admin_op(LIST, 'List a provider\'s inventories.',
                  ('GET', COLLECTION)),
    base.admin_op(CREATE, 'Add one inventory to a provider.',
                  ('POST', COLLECTION)),
    base.admin_op(SHOW, 'Show one inventory.', ('GET', ITEM)),
    base.admin_op(UPDATE, 'Replace or update inventories.',
                  ('PUT', COLLECTION), ('PUT', ITEM)),
    base.admin_op(DELETE, 'Delete inventories.',
                  ('DELETE', COLLECTION), ('DELETE', ITEM)),
]
