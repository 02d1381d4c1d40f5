"""One request per documented route and caller, for the policy matrix.

Each request is a valid way to reach the route's policy check: a caller
the policy refuses gets 403; one it lets through gets whatever the
handler answers (a 404 for the providers and classes that do not exist,
a 400 for the empty bodies), never 403. The same requests are sent to
the real application by ``test_policy_matrix`` and were sent to the
reference service by ``tools/probe_policy_reference.py``.
"""

from resobj.api import policy_matrix

VERSION = 'placement 1.39'

# URL variables: names nothing exists under, so a write changes little.
PATH_VALUES = {
    'uuid': 'a2ae9a5f-8fb6-4a8c-9a31-3a14b8b0e1c1',
    'consumer_uuid': '6f1a8d4e-2c5b-4c8e-b6f7-0d6c3e1a9b22',
    'name': 'CUSTOM_POLICY_MATRIX',
    'resource_class': 'VCPU',
}

QUERIES = {
    '/usages': 'project_id=' + policy_matrix.PROJECT,
    '/allocation_candidates': 'resources=VCPU:1',
}

# Routes whose PUT takes no body at this microversion.
NO_BODY = {('PUT', '/resource_classes/{name}'), ('PUT', '/traits/{name}')}


def path(operation):
    url = operation.path.format(**PATH_VALUES)
    query = QUERIES.get(operation.path)
    return url + '?' + query if query else url


def body(operation):
    if operation.method in ('POST', 'PUT') and \
            (operation.method, operation.path) not in NO_BODY:
        return b'{}'
    return None


def headers(persona):
    """noauth2 headers that make the caller ``persona``."""
    project = persona.project_id or policy_matrix.PROJECT
    result = {'X-Auth-Token': 'user:%s' % project,
              'X-Roles': ','.join(persona.roles),
              'OpenStack-API-Version': VERSION,
              'Accept': 'application/json'}
    if persona.system_scope:
        result['OpenStack-System-Scope'] = persona.system_scope
    return result


def key(operation):
    return '%s %s' % (operation.method, operation.path)
