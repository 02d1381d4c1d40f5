from resobj.api.policies import base

LIST = 'placement:allocation_candidates:list'

rules = [
    base.admin_op(LIST, 'List allocation candidates.',
                  ('GET', '/allocation_candidates')),
]
