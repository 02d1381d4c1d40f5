def query(version):
    properties = {'project_id': {'type': 'string', 'minLength': 1,
                                 'maxLength': 255},
                  'user_id': {'type': 'string', 'minLength': 1,
                              'maxLength': 255}}
    if version >= (1, 38):
        # What placement's pattern, '^[A-Z0-9_]+$|^all|^unknown$', takes:
        # its '^all' any value that starts so ('allx' is a type of that
        # name, which no consumer has), but no line break here.
        properties['consumer_type'] = {
            'type': 'string', 'pattern': r'^([A-Z0-9_]+|all.*|unknown)\Z',
            'maxLength': 255}
    return {'type': 'object', 'properties': properties,
            'required': ['project_id'], 'additionalProperties': False}
