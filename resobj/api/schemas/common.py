"""Schema pieces several nouns share."""

UUID = {
    'type': 'string',
    'pattern': '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
               '[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$',
}
RESOURCE_CLASS = {'type': 'string', 'pattern': '^[A-Z0-9_]+$',
                  'maxLength': 255}
CUSTOM_NAME = {'type': 'string', 'pattern': '^CUSTOM_[A-Z0-9_]+$',
               'maxLength': 255}
TRAIT = {'type': 'string', 'pattern': '^[A-Z0-9_]+$', 'maxLength': 255}
GENERATION = {'type': 'integer', 'minimum': 0}
NON_NEGATIVE_INT = {'type': 'integer', 'minimum': 0,
                    'maximum': 2147483647}
POSITIVE_INT = {'type': 'integer', 'minimum': 1, 'maximum': 2147483647}


_CACHE = {}


def for_version(factory, version):
    """``factory(version)``, built once per (factory, version)."""
    key = (factory, version)
    schema = _CACHE.get(key)
    if schema is None:
        schema = _CACHE[key] = factory(version)
    return schema
