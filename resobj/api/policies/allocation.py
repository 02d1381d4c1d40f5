from resobj.api.policies import base

PREFIX = 'placement:allocations:%s'
LIST = PREFIX % 'list'
MANAGE = PREFIX % 'manage'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'
ITEM = '/allocations/{consumer_uuid}'

rules = [
    base.admin_op(LIST, 'Show a consumer\'s allocations.', ('GET', ITEM)),
    base.admin_op(MANAGE, 'Write the allocations of several consumers.',
                  ('POST', '/allocations')),
    base.admin_op(UPDATE, 'Replace a consumer\'s allocations.',
                  ('PUT', ITEM)),
    base.admin_op(DELETE, 'Delete a consumer\'s allocations.',
                  ('DELETE', ITEM)),
]
