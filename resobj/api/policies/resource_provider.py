from resobj.api.policies import base

PREFIX = 'placement:resource_providers:%s'
COLLECTION = '/resource_providers'
ITEM = '/resource_providers/{uuid}'
LIST = PREFIX % 'list'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'
AGGREGATES_LIST = PREFIX % 'aggregates:list'
AGGREGATES_UPDATE = PREFIX % 'aggregates:update'
TRAITS_LIST = PREFIX % 'traits:list'
TRAITS_UPDATE = PREFIX % 'traits:update'
TRAITS_DELETE = PREFIX % 'traits:delete'
ALLOCATIONS_LIST = PREFIX % 'allocations:list'
USAGES = PREFIX % 'usages'

rules = [
    base.admin_op(LIST, 'List resource providers.', ('GET', COLLECTION)),
    base.admin_op(CREATE, 'Create a resource provider.',
                  ('POST', COLLECTION)),
    base.admin_op(SHOW, 'Show a resource provider.', ('GET', ITEM)),
    base.admin_op(UPDATE, 'Update a resource provider.', ('PUT', ITEM)),
    base.admin_op(DELETE, 'Delete a resource provider.', ('DELETE', ITEM)),
    base.admin_op(AGGREGATES_LIST, 'List a provider\'s aggregates.',
                  ('GET', ITEM + '/aggregates')),
    base.admin_op(AGGREGATES_UPDATE, 'Replace a provider\'s aggregates.',
                  ('PUT', ITEM + '/aggregates')),
    base.admin_op(TRAITS_LIST, 'List a provider\'s traits.',
                  ('GET', ITEM + '/traits')),
    base.admin_op(TRAITS_UPDATE, 'Replace a provider\'s traits.',
                  ('PUT', ITEM + '/traits')),
    base.admin_op(TRAITS_DELETE, 'Remove all of a provider\'s traits.',
                  ('DELETE', ITEM + '/traits')),
    base.admin_op(ALLOCATIONS_LIST, 'List the allocations on a provider.',
                  ('GET', ITEM + '/allocations')),
    base.admin_op(USAGES, 'Show a provider\'s usages.',
                  ('GET', ITEM + '/usages')),
]
