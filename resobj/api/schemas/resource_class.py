from resobj.api.schemas import common

POST = {
    'type': 'object',
    'properties': {'name': common.CUSTOM_NAME},
    'required': ['name'],
    'additionalProperties': False,
}

# 1.2 - 1.6: PUT renames a custom class.
PUT_RENAME = POST
