from resobj.api.schemas import common

LIST_QUERY = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'pattern': r'^(in:|startswith:).*\Z'},
        'associated': {'type': 'string', 'enum': ['true', 'false']},
    },
    'additionalProperties': False,
}

# GET /traits's parameter names only: placement refuses an unknown one
# before it looks at any value.
LIST_NAMES = {
    'type': 'object',
    'properties': dict.fromkeys(LIST_QUERY['properties'], {}),
    'additionalProperties': False,
}

PUT_PROVIDER_TRAITS = {
    'type': 'object',
    'properties': {
        # As placement: a name twice is one trait, and a name no trait
        # has (whatever its form) is an unknown trait.
        'traits': {'type': 'array',
                   'items': {'type': 'string', 'maxLength': 255}},
        'resource_provider_generation': common.GENERATION,
    },
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}
