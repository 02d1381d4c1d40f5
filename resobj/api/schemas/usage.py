def query(version):
    properties = {'project_id': {'type': 'string', 'minLength': 1,
                                 'maxLength': 255},
                  'user_id': {'type': 'string', 'minLength': 1,
                              'maxLength': 255}}
    if version >= (1, 38):
        properties['consumer_type'] = {
            'type': 'string', 'pattern': r'^([A-Z0-9_]+|all|unknown)\Z',
            'maxLength': 255}
    return {'type': 'object', 'properties': properties,
            'required': ['project_id'], 'additionalProperties': False}
