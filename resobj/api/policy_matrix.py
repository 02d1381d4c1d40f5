"""Who may do what under the default policy: the documented matrix.

For every route a default rule documents, for each of a set of callers
(``PERSONAS``: a role set and a token scope) and in both policy modes
(``MODES``: the secure-RBAC defaults, and ``[oslo_policy]
enforce_new_defaults = False``), :func:`allowed` asks a fresh
oslo.policy enforcer holding only the default rules. Nothing of the
running service is involved, so the tests can compare what the real
application answers with this, and the documentation prints it.
"""

import collections
import warnings

from oslo_config import cfg
from oslo_policy import policy as oslo_policy

from resobj.api import policies

# The project the callers' tokens (and ``GET /usages?project_id=``) name.
PROJECT = 'p1'
OTHER_PROJECT = 'p2'
USAGES_RULE = 'placement:usages'

Persona = collections.namedtuple(
    'Persona', ['name', 'description', 'roles', 'project_id',
                'system_scope'])

PERSONAS = [
    Persona('admin', 'admin of a project', ['admin'], PROJECT, None),
    Persona('service', 'service role in a project', ['service'],
            PROJECT, None),
    Persona('member', 'member of a project', ['member'], PROJECT, None),
    Persona('reader', 'reader of the project asked about', ['reader'],
            PROJECT, None),
    Persona('other_reader', 'reader of another project', ['reader'],
            OTHER_PROJECT, None),
    Persona('no_role', 'project token without roles', [], PROJECT, None),
    Persona('system_admin', 'admin, system-scoped token', ['admin'],
            None, 'all'),
    Persona('system_reader', 'reader, system-scoped token', ['reader'],
            None, 'all'),
]

Mode = collections.namedtuple('Mode', ['name', 'enforce_new_defaults'])

MODES = [Mode('new', True), Mode('legacy', False)]

Operation = collections.namedtuple('Operation', ['method', 'path', 'rule'])


def operations():
    """Every (method, path, rule) the default rules document."""
    return [Operation(op['method'], op['path'], rule.name)
            for rule in policies.list_rules()
            for op in getattr(rule, 'operations', ())]


def credentials(persona):
    return {'user_id': 'user', 'roles': list(persona.roles),
            'project_id': persona.project_id,
            'system_scope': persona.system_scope}


def target(operation, persona):
    """The project a request is about: the one asked for, or the caller's."""
    project = PROJECT if operation.rule == USAGES_RULE \
        else persona.project_id
    return {'project_id': project, 'user_id': 'user'}


class Matrix:
    """The default rules' decisions, one enforcer per mode."""

    def __init__(self):
        self._enforcers = {}
        for mode in MODES:
            conf = cfg.ConfigOpts()
            conf([], default_config_files=[])
            enforcer = oslo_policy.Enforcer(conf)
            conf.set_override('enforce_new_defaults',
                              mode.enforce_new_defaults,
                              group='oslo_policy')
            enforcer.register_defaults(policies.list_rules())
            with warnings.catch_warnings():
                # The legacy mode's deprecation warnings are for
                # operators; this enforcer serves no requests.
                warnings.simplefilter('ignore', UserWarning)
                enforcer.load_rules()
            self._enforcers[mode.name] = enforcer

    def allowed(self, operation, persona, mode):
        return self._enforcers[mode.name].authorize(
            operation.rule, target(operation, persona),
            credentials(persona), do_raise=False)

    def cells(self):
        """(operation, persona, mode, allowed) for every combination."""
        for operation in operations():
            for persona in PERSONAS:
                for mode in MODES:
                    yield (operation, persona, mode,
                           self.allowed(operation, persona, mode))


def _cell(decisions):
    new, legacy = decisions
    if new and legacy:
        return 'yes'
    if legacy:
        return 'legacy only'
    if new:
        return 'new only'
    return 'no'


def rst_lines():
    """The matrix as a reStructuredText list table, for the documentation.

    A row per documented route, a column per caller; a cell says whether
    the default policy lets that caller through in both modes ("yes"),
    in neither ("no") or only with ``enforce_new_defaults = False``
    ("legacy only").
    """
    matrix = Matrix()
    lines = ['Callers (``p1`` is the project ``GET /usages`` asks about):', '']
    for persona in PERSONAS:
        scope = ('system-scoped (``%s``)' % persona.system_scope
                 if persona.system_scope
                 else 'scoped to project ``%s``' % persona.project_id)
        lines.append('``%s``' % persona.name)
        lines.append('   %s: roles %s; token %s.' % (
            persona.description.capitalize(),
            ', '.join('``%s``' % r for r in persona.roles) or 'none',
            scope))
    lines.extend(['', '.. list-table::', '   :header-rows: 1', '',
                  '   * - Route', '     - Rule'])
    lines.extend('     - ``%s``' % persona.name for persona in PERSONAS)
    for operation in operations():
        lines.append('   * - ``%s %s``' % (operation.method, operation.path))
        lines.append('     - ``%s``' % operation.rule)
        for persona in PERSONAS:
            lines.append('     - ' + _cell(
                [matrix.allowed(operation, persona, mode)
                 for mode in MODES]))
    lines.append('')
    return lines
