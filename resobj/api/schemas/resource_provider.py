from resobj.api.schemas import common

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 200}
# anyOf, as placement's: its error message says so.
_PARENT = {'anyOf': [common.UUID, {'type': 'null'}]}


def post(version):
    properties = {'name': _NAME, 'uuid': common.UUID}
    if version >= (1, 14):
        properties['parent_provider_uuid'] = _PARENT
    return {'type': 'object', 'properties': properties,
            'required': ['name'], 'additionalProperties': False}


def put(version):
    properties = {'name': _NAME}
    if version >= (1, 14):
        properties['parent_provider_uuid'] = _PARENT
    return {'type': 'object', 'properties': properties,
            'required': ['name'], 'additionalProperties': False}


# As placement checks them: a uuid with its dashes (jsonschema's format).
_UUID_PARAM = {'type': 'string', 'format': 'uuid'}


def list_query(version):
    properties = {'name': {'type': 'string', 'maxLength': 200},
                  'uuid': _UUID_PARAM}
    if version >= (1, 3):
        # Repeatable (from 1.24): the schema sees the last value.
        properties['member_of'] = {'type': 'string'}
    if version >= (1, 4):
        properties['resources'] = {'type': 'string'}
    if version >= (1, 14):
        properties['in_tree'] = _UUID_PARAM
    if version >= (1, 18):
        # Repeatable (from 1.39): the schema sees the last value.
        properties['required'] = {'type': 'string'}
    return {'type': 'object', 'properties': properties,
            'additionalProperties': False}
