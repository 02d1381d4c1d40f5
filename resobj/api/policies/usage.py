from resobj.api.policies import base

USAGES = 'placement:usages'

rules = [
    base.operation(USAGES, 'rule:' + base.PROJECT_READER_OR_ADMIN,
                   'Show the usages of a project or a user; a reader may '
                   'see their own project\'s.', ('GET', '/usages')),
]
