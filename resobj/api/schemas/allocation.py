"""Allocation bodies: their shape changed at 1.8, 1.12, 1.28, 1.34, 1.38."""

from resobj.api.schemas import common

_RESOURCES = {
    'type': 'object', 'minProperties': 1,
    'patternProperties': {r'^[A-Z0-9_]+\Z': common.POSITIVE_INT},
    'additionalProperties': False,
}
_EXTERNAL_ID = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_CONSUMER_TYPE = {'type': 'string', 'pattern': r'^[A-Z0-9_]+\Z',
                  'minLength': 1, 'maxLength': 255}
_MAPPINGS = {
    'type': 'object',
    # As in placement: an empty mapping is refused, not ignored.
    'minProperties': 1,
    # A provider listed twice for one group is taken, as in placement.
    'patternProperties': {r'^_?[a-zA-Z0-9_-]{0,64}\Z': {
        'type': 'array', 'minItems': 1, 'items': common.UUID}},
    'additionalProperties': False,
}


def _list_form(version):
    """1.0 - 1.11: [{"resource_provider": {"uuid"}, "resources"}]."""
    item = {
        'type': 'object',
        'properties': {
            'resource_provider': {
                'type': 'object',
                'properties': {'uuid': common.UUID},
                'required': ['uuid'], 'additionalProperties': False},
            'resources': _RESOURCES,
        },
        'required': ['resource_provider', 'resources'],
        'additionalProperties': False,
    }
    return {'type': 'array', 'minItems': 1, 'items': item}


def _dict_form(version, allow_empty=False):
    """1.12+: {RP_UUID: {"resources": {...}, "generation"?}}.

    Empty (the consumer's allocations removed) from 1.28 in a PUT, and
    always in a POST, where moving allocations empties their old holder.
    """
    per_provider = {
        'type': 'object',
        'properties': {'resources': _RESOURCES,
                       # Sent back by clients that echo a GET; ignored.
                       'generation': {'type': ['integer', 'null']}},
        'required': ['resources'], 'additionalProperties': False,
    }
    schema = {'type': 'object',
              'patternProperties': {common.UUID_PATTERN: per_provider},
              'additionalProperties': False}
    if version < (1, 28) and not allow_empty:
        schema['minProperties'] = 1
    return schema


def _consumer(version, post=False):
    """The members describing one consumer (PUT body, POST value)."""
    if version >= (1, 12):
        allocations = _dict_form(version, allow_empty=post)
    else:
        allocations = _list_form(version)
    properties = {'allocations': allocations}
    required = ['allocations']
    if version >= (1, 8):
        properties.update(project_id=_EXTERNAL_ID, user_id=_EXTERNAL_ID)
        required += ['project_id', 'user_id']
    if version >= (1, 28):
        # No minimum: placement takes any integer, and one that is not
        # the consumer's generation is a conflict (409), not a 400.
        properties['consumer_generation'] = {'type': ['integer', 'null']}
        required.append('consumer_generation')
    if version >= (1, 34):
        properties['mappings'] = _MAPPINGS
    if version >= (1, 38):
        properties['consumer_type'] = _CONSUMER_TYPE
        required.append('consumer_type')
    return {'type': 'object', 'properties': properties,
            'required': required, 'additionalProperties': False}


def put(version):
    return _consumer(version)


def post(version):
    """1.13+: {CONSUMER_UUID: <consumer>, ...}."""
    return {'type': 'object', 'minProperties': 1,
            'patternProperties': {common.UUID_PATTERN:
                                  _consumer(version, post=True)},
            'additionalProperties': False}
