"""The rules the per-noun defaults are written in."""

from oslo_policy import policy

ADMIN_OR_SERVICE = 'admin_or_service'
PROJECT_READER_OR_ADMIN = 'project_reader_or_admin'

rules = [
    policy.RuleDefault(
        ADMIN_OR_SERVICE, 'role:admin or role:service',
        description='An administrator or another OpenStack service.'),
    policy.RuleDefault(
        PROJECT_READER_OR_ADMIN,
        'rule:admin_or_service or '
        '(role:reader and project_id:%(project_id)s)',
        description='An administrator, a service, or a reader of the '
                    'project the request is about.'),
]


def operation(name, check_str, description, *routes):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': m, 'path': p} for m, p in routes])


def admin_op(name, description, *routes):
    return operation(name, 'rule:' + ADMIN_OR_SERVICE, description, *routes)
