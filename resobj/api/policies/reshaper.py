from resobj.api.policies import base

RESHAPE = 'placement:reshaper:reshape'

rules = [
    base.admin_op(RESHAPE, 'Move inventories and allocations in one '
                  'transaction.', ('POST', '/reshaper')),
]
