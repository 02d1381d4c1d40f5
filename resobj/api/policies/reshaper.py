from resobj.api.policies import base

RESHAPE = 'placement:reshaper:reshape'

rules = [
    # Only the service that owns the providers (nova) reshapes them.
    base.service_op(RESHAPE, 'Move inventories and allocations in one '
                    'transaction.', ('POST', '/reshaper')),
]
