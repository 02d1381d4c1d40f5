from resobj.api.policies import base

PREFIX = 'placement:traits:%s'
LIST = PREFIX % 'list'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'

rules = [
    base.admin_op(LIST, 'List traits.', ('GET', '/traits')),
    base.admin_op(SHOW, 'Check that a trait exists.',
                  ('GET', '/traits/{name}')),
    base.admin_op(UPDATE, 'Create a custom trait.',
                  ('PUT', '/traits/{name}')),
    base.admin_op(DELETE, 'Delete a custom trait.',
                  ('DELETE', '/traits/{name}')),
]
