from resobj.api.schemas import common

MAX_INT = common.MAX_INT
_FIELDS = {
    'total': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
    'reserved': {'type': 'integer', 'minimum': 0, 'maximum': MAX_INT},
    'min_unit': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
    'max_unit': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
    'step_size': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
    'allocation_ratio': {'type': 'number', 'minimum': 0,
                         'exclusiveMinimum': 0, 'maximum': 3.40282e38},
}
VALUE_FIELDS = tuple(_FIELDS)

_INVENTORY = {
    'type': 'object', 'properties': dict(_FIELDS),
    'required': ['total'], 'additionalProperties': False,
}

POST = {
    'type': 'object',
    # A generation is accepted and, as in placement, not checked.
    'properties': dict(_FIELDS, resource_class=common.RESOURCE_CLASS,
                       resource_provider_generation=common.GENERATION),
    'required': ['total', 'resource_class'],
    'additionalProperties': False,
}

PUT_ONE = {
    'type': 'object',
    'properties': dict(_FIELDS,
                       resource_provider_generation=common.GENERATION),
    'required': ['total', 'resource_provider_generation'],
    'additionalProperties': False,
}

PUT_ALL = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': common.GENERATION,
        'inventories': {
            # Any name, as in placement: one that no class has is an
            # unknown class when it is looked up.
            'type': 'object',
            'additionalProperties': _INVENTORY,
        },
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}
