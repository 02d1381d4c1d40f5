from resobj.api.schemas import common

_AGGREGATES = {'type': 'array', 'items': common.UUID, 'uniqueItems': True}

# Before 1.19 the body is the bare list.
PUT_LIST = _AGGREGATES

PUT = {
    'type': 'object',
    'properties': {'aggregates': _AGGREGATES,
                   'resource_provider_generation': common.GENERATION},
    'required': ['aggregates', 'resource_provider_generation'],
    'additionalProperties': False,
}
