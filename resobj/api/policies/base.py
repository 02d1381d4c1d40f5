"""The rules the per-noun defaults are written in.

Placement's secure-RBAC defaults: an admin or another service does
everything, a reader of a project reads that project's ``/usages``, and
only a service reshapes. Each base rule carries the legacy default it
replaced (everything was ``role:admin``) as its deprecated rule, so with
``[oslo_policy] enforce_new_defaults = False`` oslo.policy accepts
either, as legacy placement did. Every rule a request is checked
against is for project-scoped tokens: a system-scoped token is refused.
"""

from oslo_policy import policy

ADMIN_API = 'admin_api'
SERVICE_API = 'service_api'
ADMIN_OR_SERVICE_API = 'admin_or_service_api'
PROJECT_READER_API = 'project_reader_api'
ADMIN_OR_PROJECT_READER_OR_SERVICE_API = \
    'admin_or_project_reader_or_service_api'

PROJECT_SCOPE = ['project']

_DEPRECATED_REASON = (
    'The placement API now has secure-RBAC defaults (admin, service and '
    'project reader roles, project scope); the legacy admin-only rule is '
    'accepted only while [oslo_policy] enforce_new_defaults is False.')


def _legacy(name):
    """The admin-only default every rule had before secure RBAC.

    Under the rule's own name: only the check changed, so there is no
    rename for ``oslopolicy-policy-upgrade`` to carry out.
    """
    return policy.DeprecatedRule(
        name=name, check_str='role:admin',
        deprecated_reason=_DEPRECATED_REASON, deprecated_since='W')


rules = [
    policy.RuleDefault(
        ADMIN_API, 'role:admin',
        description='An administrator.', scope_types=PROJECT_SCOPE),
    policy.RuleDefault(
        SERVICE_API, 'role:service',
        description='Another OpenStack service, acting for itself.',
        scope_types=PROJECT_SCOPE, deprecated_rule=_legacy(SERVICE_API)),
    policy.RuleDefault(
        ADMIN_OR_SERVICE_API, 'role:admin or role:service',
        description='An administrator or another OpenStack service; the '
                    'default of most of the API.',
        scope_types=PROJECT_SCOPE,
        deprecated_rule=_legacy(ADMIN_OR_SERVICE_API)),
    policy.RuleDefault(
        PROJECT_READER_API, 'role:reader and project_id:%(project_id)s',
        description='A reader of the project the request is about.',
        deprecated_rule=_legacy(PROJECT_READER_API)),
    policy.RuleDefault(
        ADMIN_OR_PROJECT_READER_OR_SERVICE_API,
        'role:admin or rule:%s or role:service' % PROJECT_READER_API,
        description='An administrator, a service, or a reader of the '
                    'project the request is about.',
        scope_types=PROJECT_SCOPE,
        deprecated_rule=_legacy(ADMIN_OR_PROJECT_READER_OR_SERVICE_API)),
]


def operation(name, check_str, description, *routes):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': m, 'path': p} for m, p in routes],
        scope_types=PROJECT_SCOPE)


def admin_op(name, description, *routes):
    return operation(name, 'rule:' + ADMIN_OR_SERVICE_API, description,
                     *routes)


def service_op(name, description, *routes):
    return operation(name, 'rule:' + SERVICE_API, description, *routes)
