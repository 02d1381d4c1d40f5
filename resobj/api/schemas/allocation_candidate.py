"""The query string of GET /allocation_candidates, per microversion."""

import re

# Granular group suffixes: digits from 1.25, any [a-zA-Z0-9_-]{1,64}
# from 1.33.
SUFFIX_1_25 = re.compile(r'^[1-9][0-9]*\Z')
SUFFIX_1_33 = re.compile(r'^[a-zA-Z0-9_-]{1,64}\Z')
GROUP_KEYS = ('resources', 'required', 'member_of', 'in_tree')
# The most request groups one search takes. A server asks for one per
# port or device with resources of its own: a few, tens at most. The
# search's cost grows faster than the number of groups (on PostgreSQL
# forty took seconds, ninety minutes), and a thousand passed the most
# terms a SQLite statement may have.
MAX_GROUPS = 32


def query(version):
    """Keys other than the grouped ones; those are checked by name."""
    properties = {}
    if version >= (1, 16):
        properties['limit'] = {'type': 'string',
                               'pattern': r'^[1-9][0-9]*\Z'}
    if version >= (1, 25):
        properties['group_policy'] = {'type': 'string',
                                      'enum': ['none', 'isolate']}
    if version >= (1, 35):
        properties['root_required'] = {'type': 'string'}
    if version >= (1, 36):
        # Repeatable: the schema sees the last value.
        properties['same_subtree'] = {'type': 'string'}
    return {'type': 'object', 'properties': properties}


def group_keys(version):
    """The unsuffixed group parameters the version accepts."""
    keys = ['resources']
    if version >= (1, 17):
        keys.append('required')
    if version >= (1, 21):
        keys.append('member_of')
    if version >= (1, 31):
        keys.append('in_tree')
    return keys


def names(version):
    """Every parameter name the version takes, as placement checks them.

    For its words on an unknown name, or on no resources before 1.25.
    """
    properties = {key: {} for key in query(version)['properties']}
    schema = {'type': 'object', 'properties': properties}
    if version < (1, 25):
        properties.update((key, {}) for key in group_keys(version))
        # Before additionalProperties, as in placement's schema: of two
        # errors of one place jsonschema reports the first one found,
        # so no resources is reported before an unknown name.
        schema['required'] = ['resources']
    schema['additionalProperties'] = False
    if version >= (1, 25):
        suffix = (SUFFIX_1_33 if version >= (1, 33)
                  else SUFFIX_1_25).pattern[1:-2]
        schema['patternProperties'] = {
            r'^%s(%s)?\Z' % (key, suffix): {}
            for key in group_keys(version)}
    return schema
