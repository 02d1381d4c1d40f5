"""What any request may carry, checked once for every route.

Before a handler reads anything, the application checks the URL's
variables and the query string (``check_url``, ``check_query``), and
``util.json_body`` checks the document it parsed (``check_json``). So no
field, nor one added later, is left out, and the schemas keep to each
field's own rules.

Text: every string (query parameter names and values, URL variables, a
body's member names and string values) is refused with a 400 naming
where it was, code ``resobj.input.bad_character``, if it has

* a NUL character: PostgreSQL cannot store one in a text column, nor
  compare a column with one (the statement fails);
* a lone surrogate (``"\\ud800"`` in JSON): it is no character, and no
  driver can encode it as UTF-8 (in a URL it arrives as bytes that are
  not UTF-8: the path is refused with the same code, the query string
  with ``placement.query.bad_value``, as any malformed query value);
* a line break at the end: no identifier, name or id of the API ends
  with one, and it is what a pattern anchored with ``$`` let through
  (Python's ``$`` matches before a final newline).

Size: no list and no object in a body holds more than ``MAX_ITEMS``
entries, a body holds at most ``MAX_BODY_ENTRIES`` in all, and nests
at most ``MAX_DEPTH`` levels; a query string lists at most
``MAX_ITEMS`` comma-separated items over all its parameters. A 400
names the place (for a query string, the parameter with the most). The
schema validator would otherwise spend seconds on a list of 70,000
items, and the database would refuse the statement it led to: the
limits are per request, not per field, because one statement may bind
the values of several fields (the providers of every consumer of a
``POST /allocations``, the aggregates of every request group).
"""

import urllib.parse

from resobj.api import errors

# The most entries a list may hold, and the most members an object of a
# body may have (allocations by provider, consumers, inventories by
# class); comma-separated query values count alike. Far beyond what a
# cloud sends (a provider has tens of traits and a handful of
# aggregates; a move names two consumers), and far below what one
# statement can bind (PostgreSQL takes 65,535 parameters).
MAX_ITEMS = 1000

# The most list items and object members a body may hold in all. A
# thousand consumers of one POST /allocations, each on one provider,
# take about 9,000; every value the database binds costs the body at
# least one entry, so no statement nears PostgreSQL's limit.
MAX_BODY_ENTRIES = 10 * MAX_ITEMS

# The deepest valid body (a reshaper's) has 6 levels; the schema
# validator recurses, so deeper ones are refused before it runs.
MAX_DEPTH = 32

_LINE_ENDS = ('\n', '\r')


def problem(value):
    """What is wrong with the string ``value``, or None."""
    if not value.isascii():
        try:
            value.encode('utf-8')
        except UnicodeEncodeError:
            return 'a lone surrogate (an invalid character)'
    if '\x00' in value:
        return 'a NUL character'
    if value.endswith(_LINE_ENDS):
        return 'a trailing line break'
    return None


def _refuse(where, what):
    return errors.bad_request(
        '%s contains %s, which is not accepted.' % (where, what),
        errors.BAD_CHARACTER)


def _place(path, top):
    return '/'.join(str(step) for step in path) if path else top


def check_json(data):
    """Raise a 400 naming the first fault of the parsed body ``data``.

    Walks without recursing: a body may be wide, and deep up to the
    parser's own limit.
    """
    stack = [(data, ())]
    entries = 0
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            what = problem(value)
            if what is not None:
                raise _refuse('The JSON value at %s' % _place(
                    path, 'the top level'), what)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if len(path) >= MAX_DEPTH:
            raise errors.bad_request('Malformed JSON: nested deeper than %d '
                                     'levels.' % MAX_DEPTH)
        if len(value) > MAX_ITEMS:
            raise errors.bad_request(
                'The JSON %s at %s has %d %s; at most %d are accepted.' % (
                    'object' if isinstance(value, dict) else 'list',
                    _place(path, 'the top level'), len(value),
                    'members' if isinstance(value, dict) else 'items',
                    MAX_ITEMS))
        entries += len(value)
        if entries > MAX_BODY_ENTRIES:
            raise errors.bad_request(
                'The JSON body has more than %d list items and object '
                'members in all (the limit was passed at %s).' % (
                    MAX_BODY_ENTRIES, _place(path, 'the top level')))
        if isinstance(value, dict):
            for key, item in value.items():
                what = problem(key)
                if what is not None:
                    raise _refuse('A JSON member name in %s' % _place(
                        path, 'the top-level object'), what)
                stack.append((item, path + (key,)))
        else:
            stack.extend((item, path + (index,))
                         for index, item in enumerate(value))


def check_query(req):
    """Raise a 400 naming the first bad query parameter of ``req``."""
    try:
        params = req.GET
    except UnicodeDecodeError:
        raise errors.bad_request('%s is not valid UTF-8.' % _undecodable(
            req.query_string), errors.QUERY_BAD_VALUE)
    counts = {}
    for key, value in params.items():
        what = problem(key)
        if what is not None:
            raise _refuse('A query parameter name', what)
        what = problem(value)
        if what is not None:
            raise _refuse('Query parameter %s' % key, what)
        counts[key] = counts.get(key, 0) + value.count(',') + 1
    total = sum(counts.values())
    if total > MAX_ITEMS:
        most = max(counts, key=counts.get)
        raise errors.bad_request(
            'The query string lists %d items (%d of them in %s); at most %d '
            'are accepted.' % (total, counts[most], most, MAX_ITEMS),
            errors.QUERY_BAD_VALUE)


def _undecodable(query_string):
    """Which part of ``query_string`` is not UTF-8, for the error."""
    # surrogateescape keeps each undecodable byte as a lone surrogate.
    for key, value in urllib.parse.parse_qsl(
            query_string, keep_blank_values=True, errors='surrogateescape'):
        if problem(key) is not None:
            return 'A query parameter name'
        if problem(value) is not None:
            return 'Query parameter %s' % key
    return 'The query string'


def check_url(urlvars):
    """Raise a 400 naming the first bad variable of the URL's path."""
    for name, value in sorted(urlvars.items()):
        what = problem(value)
        if what is not None:
            raise _refuse('The URL path variable {%s}' % name, what)
