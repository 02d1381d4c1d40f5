"""Authorisation: oslo.policy with placement's rule names and defaults.

The defaults (``policies/``) are placement's secure-RBAC rules: an admin
or a service does everything, a project's reader reads its own
``/usages``, only a service reshapes; every rule is for project-scoped
tokens, so a system-scoped one is refused. With ``[oslo_policy]
enforce_new_defaults = False`` each rule also accepts its legacy
(admin-only) default. An operator's policy file (``[oslo_policy]
policy_file``) overrides any of them.

Decisions are cached. oslo.policy re-checks the policy file's path and
mtime and inspects every check's signature on each call, which cost a
quarter of a small request's CPU; a decision depends only on the rule,
the target and the credentials, so it is kept until the rules are next
reloaded, at most ``RELOAD_INTERVAL`` seconds later. An edited policy
file therefore takes effect within that interval, not on the very next
request.
"""

import time

from oslo_policy import policy as oslo_policy

from resobj.api import errors
from resobj.api import policies

# How often (seconds) the policy file is checked for changes.
RELOAD_INTERVAL = 1.0
# Distinct (rule, target, credentials) decisions kept; a cloud with more
# callers than this between reloads only loses the cache's benefit.
MAX_DECISIONS = 4096


# The credentials oslo.context gives oslo.policy, the current names only:
# its deprecated aliases (such as ``system``) are derived from these, and
# reading one warns.
CREDENTIAL_KEYS = (
    'user_id', 'user_domain_id', 'system_scope', 'domain_id', 'project_id',
    'project_domain_id', 'roles', 'is_admin_project', 'service_user_id',
    'service_user_domain_id', 'service_project_id',
    'service_project_domain_id', 'service_roles')


def _frozen(values):
    """A hashable form of a credentials or target dict."""
    return tuple(sorted(
        (key, tuple(value) if isinstance(value, list) else value)
        for key, value in values.items()))


class Policy:
    def __init__(self, conf, clock=time.monotonic):
        self._enforcer = oslo_policy.Enforcer(conf)
        self._enforcer.register_defaults(policies.list_rules())
        self._clock = clock
        self._decisions = {}
        self._reload_at = None

    def _refresh(self):
        now = self._clock()
        if self._reload_at is None or now >= self._reload_at:
            # Reloads a changed policy file (or directory); whatever it
            # did, decisions made under the old rules are dropped.
            self._enforcer.load_rules()
            self._decisions.clear()
            self._reload_at = now + RELOAD_INTERVAL

    def authorize(self, context, rule, target=None):
        target = dict(target or {})
        target.setdefault('project_id', context.project_id)
        target.setdefault('user_id', context.user_id)
        credentials = context.to_policy_values()
        self._refresh()
        try:
            key = (rule, _frozen(target), _frozen(
                {k: credentials.get(k) for k in CREDENTIAL_KEYS}))
            allowed = self._decisions.get(key)
        except TypeError:
            # A value that cannot be hashed: decide without the cache.
            key = allowed = None
        if allowed is None:
            allowed = self._decide(rule, target, credentials)
            if key is not None and len(self._decisions) < MAX_DECISIONS:
                self._decisions[key] = allowed
        if allowed is not True:
            raise errors.HTTPError(403, allowed)

    def _decide(self, rule, target, credentials):
        """True, or the detail of the 403 that refuses the request."""
        try:
            self._enforcer.authorize(rule, target, credentials,
                                     do_raise=True)
        except oslo_policy.InvalidScope:
            # The detail placement gives for a token of the wrong scope.
            return rule
        except oslo_policy.PolicyNotAuthorized:
            return 'Policy does not allow %s to be performed.' % rule
        return True


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
