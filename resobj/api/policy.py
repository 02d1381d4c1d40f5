"""Authorisation: oslo.policy with placement's rule names and defaults.

The defaults (``policies/``) let an admin or a service do everything and
a project's reader read its own ``/usages``; an operator's policy file
(``[oslo_policy] policy_file``) overrides any of them.
"""

from oslo_policy import policy as oslo_policy

from resobj.api import errors
from resobj.api import policies


class Policy:
    def __init__(self, conf):
        self._enforcer = oslo_policy.Enforcer(conf)
        self._enforcer.register_defaults(policies.list_rules())

    def authorize(self, context, rule, target=None):
        target = dict(target or {})
        target.setdefault('project_id', context.project_id)
        target.setdefault('user_id', context.user_id)
        credentials = context.to_policy_values()
        if not self._enforcer.authorize(rule, target, credentials,
                                        do_raise=False):
            raise errors.HTTPError(
                403, 'Policy does not allow %s to be performed.' % rule)


def get_enforcer():
    """For oslopolicy-sample-generator and oslopolicy-checker."""
    from oslo_config import cfg

    from resobj import conf as resobj_conf
    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    conf([], project='resobj')
    enforcer = oslo_policy.Enforcer(conf)
    enforcer.register_defaults(policies.list_rules())
    return enforcer
