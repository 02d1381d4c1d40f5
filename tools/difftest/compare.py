"""Normalise two answers to one request and say how they differ.

Pure functions, no I/O: the runner feeds them what each server answered.
What is normalised away is what the two servers cannot agree on by
design: uuids a server generates, request ids, dates, the host in a
``Location``, and the order of lists whose order the reference leaves
unspecified.
"""

import ast
import json
import re

UUID_RE = re.compile(
    r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}')
REQUEST_ID_RE = re.compile(r'req-' + UUID_RE.pattern)
_ABSOLUTE_URL_RE = re.compile(r'^https?://[^/]+')

# Headers whose value must match once normalised; others are ignored
# (Date, Server, Connection, Content-Length: bodies differ in whitespace).
COMPARED_HEADERS = ('content-type', 'location', 'allow', 'cache-control',
                    'openstack-api-version', 'vary')
# Headers that must be present on both or on neither; their value is a
# time or an id.
PRESENCE_HEADERS = ('last-modified', 'x-openstack-request-id')

# Lists whose order the reference does not define: compared as sorted.
# Keyed by the member name holding the list. Placement lists traits in
# id order, and inserts the standard ones from a set, whose order
# differs between processes; it lists providers and resource classes in
# no particular order (id order on SQLite, not on PostgreSQL, where an
# updated row moves: a provider or a class renamed).
UNORDERED_MEMBERS = frozenset(['allocation_requests', 'traits',
                               'resource_providers', 'resource_classes'])


class Answer:
    """One server's answer: status, lower-cased headers, raw body."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = {k.lower(): v for k, v in headers}
        self.body = body

    def json(self):
        if 'json' not in self.headers.get('content-type', ''):
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return None


class UuidNames:
    """Replaces uuids the harness did not choose by ``<uuid-N>``.

    Each server gets its own instance; a server-generated uuid is named
    by the order in which it first appears, so the same sequence gives
    the same names on both sides.
    """

    def __init__(self, known):
        self.known = self._known = known
        self._names = {}
        self._created = 0

    def bind(self, value):
        """Name ``value``, a uuid a server chose, by a count of its own.

        Both sides name the provider one request created the same way,
        whatever else either side printed before.
        """
        self._created += 1
        self._names[value] = '<created-%d>' % self._created

    def __call__(self, text):
        def replace(match):
            value = match.group(0)
            if value in self._known:
                return value
            if value not in self._names:
                self._names[value] = '<uuid-%d>' % (len(self._names) + 1)
            return self._names[value]
        return UUID_RE.sub(replace, text)


# A schema error's detail is jsonschema's full message, which prints the
# failing part of the server's own schema: the two schemas are written
# differently, so only the message, the keyword, the paths and the
# instance are compared.
_SCHEMA_DUMP_RE = re.compile(
    r"(Failed validating '[^']+' in schema)[^:]*:.*?(  On instance)",
    re.DOTALL)


# Lists of group suffixes placement builds from a set, whose order
# changes from one of its processes to the next: the resourceless groups
# no same_subtree names, and the same_subtree suffixes of no group.
_SUFFIX_SETS_RE = re.compile(
    r"(bad group\(s\) - |Real suffixes should be specified in "
    r"`same_subtree`: )(\[[^\]]*\])")


def _sorted_suffixes(match):
    try:
        suffixes = ast.literal_eval(match.group(2))
    except (ValueError, SyntaxError):
        return match.group(0)
    return match.group(1) + repr(sorted(suffixes))


def normalise_detail(value):
    """An error detail without its trailing spaces and schema dump.

    Suffix lists placement builds from a set are sorted.
    """
    value = _SCHEMA_DUMP_RE.sub(r'\1 <schema>\2', value)
    value = _SUFFIX_SETS_RE.sub(_sorted_suffixes, value)
    return value.rstrip()


def _normalise_string(value, names):
    value = REQUEST_ID_RE.sub('<request-id>', value)
    return names(value)


def normalise_json(value, names, member=None):
    if isinstance(value, dict):
        if member == 'mappings':
            # Placement builds each group's providers from a set: their
            # order changes from one process to the next.
            value = {k: sorted(v) if isinstance(v, list) else v
                     for k, v in value.items()}
        if member == 'errors' or 'detail' in value and 'status' in value:
            value = dict(value)
            if isinstance(value.get('detail'), str):
                value['detail'] = normalise_detail(value['detail'])
        return {_normalise_string(k, names): normalise_json(v, names, k)
                for k, v in value.items()}
    if isinstance(value, list):
        if member in UNORDERED_MEMBERS:
            # Named in an order that does not depend on the server's:
            # uuids a server chose are named by appearance.
            value = sorted(value, key=lambda v: UUID_RE.sub(
                lambda m: m.group(0) if m.group(0) in names.known
                else '<uuid>', json.dumps(v, sort_keys=True)))
        items = [normalise_json(v, names) for v in value]
        if member in UNORDERED_MEMBERS:
            items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return items
    if isinstance(value, str):
        return _normalise_string(value, names)
    return value


def normalise(answer, names):
    """A comparable dict for ``answer``."""
    headers = {}
    for name in COMPARED_HEADERS:
        if name in answer.headers:
            value = answer.headers[name]
            if name == 'location':
                value = names(_ABSOLUTE_URL_RE.sub('', value))
            elif name in ('openstack-api-version', 'vary', 'content-type'):
                value = value.lower().replace(' ', '')
            elif name == 'allow':
                value = ','.join(sorted(v.strip() for v in value.split(',')))
            headers[name] = value
    for name in PRESENCE_HEADERS:
        headers[name + '?'] = name in answer.headers
    data = answer.json()
    if data is not None:
        body = normalise_json(data, names)
    else:
        body = _normalise_string(answer.body.decode('utf-8', 'replace'),
                                 names)
    return {'status': answer.status, 'headers': headers, 'body': body}


def differences(ref, res, path=''):
    """[(path, reference value, resobj value)] for each leaf that differs."""
    if isinstance(ref, dict) and isinstance(res, dict):
        found = []
        for key in sorted(set(ref) | set(res), key=str):
            where = '%s/%s' % (path, key)
            if key not in ref:
                found.append((where, '<absent>', res[key]))
            elif key not in res:
                found.append((where, ref[key], '<absent>'))
            else:
                found.extend(differences(ref[key], res[key], where))
        return found
    if (isinstance(ref, list) and isinstance(res, list)
            and len(ref) == len(res)):
        found = []
        for index, (a, b) in enumerate(zip(ref, res)):
            found.extend(differences(a, b, '%s/%d' % (path, index)))
        return found
    if ref != res:
        return [(path or '/', ref, res)]
    return []


def signature(request, diffs):
    """A short key for a kind of difference.

    The method, the route's shape and the paths that differ, so that a
    long run reports each kind once.
    """
    route = UUID_RE.sub('{uuid}', request['path'].split('?')[0])
    route = re.sub(r'CUSTOM_[A-Z0-9_]+', 'CUSTOM_*', route)
    paths = sorted(set(re.sub(r'/\d+', '/N', d[0]) for d in diffs))
    return '%s %s %s' % (request['method'], route, ' '.join(paths))
