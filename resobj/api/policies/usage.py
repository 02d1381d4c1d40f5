from resobj.api.policies import base

USAGES = 'placement:usages'

rules = [
    base.operation(USAGES,
                   'rule:' + base.ADMIN_OR_PROJECT_READER_OR_SERVICE_API,
                   'Show the usages of a project or a user; a reader may '
                   'see their own project\'s.', ('GET', '/usages')),
]
