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
# The largest value the databases' integer columns hold (signed 32 bits).
MAX_INT = 2147483647
NON_NEGATIVE_INT = {'type': 'integer', 'minimum': 0, 'maximum': MAX_INT}
POSITIVE_INT = {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT}


_CACHE = {}


def for_version(factory, version):
    """``factory(version)``, built once per (factory, version)."""
    key = (factory, version)
    schema = _CACHE.get(key)
    if schema is None:
        schema = _CACHE[key] = factory(version)
    return schema
