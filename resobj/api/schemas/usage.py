def query(version):
    properties = {'project_id': {'type': 'string', 'minLength': 1,
                                 'maxLength': 255},
                  'user_id': {'type': 'string', 'minLength': 1,
                              'maxLength': 255}}
    if version >= (1, 38):
        # Placement's pattern as it is: its error quotes it, and
        # ``^all`` takes any value that starts so ('allx' is a type of
        # that name, which no consumer has). ``$`` cannot take a final
        # line break here: wellformed refuses one in every query value.
        properties['consumer_type'] = {
            'type': 'string', 'pattern': r'^[A-Z0-9_]+$|^all|^unknown$',
            'maxLength': 255}
    return {'type': 'object', 'properties': properties,
            'required': ['project_id'], 'additionalProperties': False}
