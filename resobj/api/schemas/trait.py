from resobj.api.schemas import common

LIST_QUERY = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'pattern': r'^(in:|startswith:).*\Z'},
        'associated': {'type': 'string', 'enum': ['true', 'false']},
    },
    'additionalProperties': False,
}

PUT_PROVIDER_TRAITS = {
    'type': 'object',
    'properties': {
        'traits': {'type': 'array', 'items': common.TRAIT,
                   'uniqueItems': True},
        'resource_provider_generation': common.GENERATION,
    },
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}
