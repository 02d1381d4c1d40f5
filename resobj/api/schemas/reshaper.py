from resobj.api.schemas import allocation
from resobj.api.schemas import common
from resobj.api.schemas import inventory


def post(version):
    per_provider = {
        'type': 'object',
        'properties': {
            'resource_provider_generation': common.GENERATION,
            'inventories': inventory.PUT_ALL['properties']['inventories'],
        },
        'required': ['resource_provider_generation', 'inventories'],
        'additionalProperties': False,
    }
    # jsonschema reports errors in the order of the schema's keys: an
    # unknown member first, as placement does.
    return {
        'type': 'object',
        'additionalProperties': False,
        'properties': {
            'inventories': {
                'type': 'object', 'minProperties': 1,
                'patternProperties': {common.UUID_PATTERN: per_provider},
                'additionalProperties': False},
            'allocations': dict(allocation.post(version), minProperties=0),
        },
        'required': ['inventories', 'allocations'],
    }
