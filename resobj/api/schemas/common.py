r"""Schema pieces several nouns share.

Patterns end in ``\Z``, never ``$``: jsonschema tests a pattern with
``re.search``, where ``$`` also matches before a final newline, so
``"INSTANCE\n"`` would pass ``^[A-Z0-9_]+$``.
"""

UUID_PATTERN = ('^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                r'[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}\Z')
# Checked by the 'uuid' format (resobj.api.util), which is this pattern:
# a schema error says "'x' is not a 'uuid'", as placement's does.
UUID = {'type': 'string', 'format': 'uuid'}
RESOURCE_CLASS = {'type': 'string', 'pattern': r'^[A-Z0-9_]+\Z',
                  'maxLength': 255}
CUSTOM_NAME = {'type': 'string', 'pattern': r'^CUSTOM_[A-Z0-9_]+\Z',
               'maxLength': 255}
TRAIT = {'type': 'string', 'pattern': r'^[A-Z0-9_]+\Z', 'maxLength': 255}
# Any integer, as in placement: one the provider cannot have is a 409.
GENERATION = {'type': 'integer'}
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
