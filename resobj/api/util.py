"""What every handler needs: bodies, query strings, responses, policy.

Handlers stay thin by calling these: ``json_body`` (content type, JSON,
schema), ``query`` (schema-checked query string), ``respond`` (JSON,
microversion-dependent caching headers) and ``authorize``.
"""

import datetime
import json
import pprint
import re
import textwrap

import jsonschema
import orjson
from oslo_utils import timeutils
import webob

from resobj.api import collector
from resobj.api import errors
from resobj.api import negotiation
from resobj.api.schemas import common
from resobj.api import wellformed

CONTEXT = 'resobj.context'
MICROVERSION = 'resobj.microversion'
POLICY = 'resobj.policy'
# When the request arrived whole (a time.monotonic() value): set by
# resobj-api's server (resobj.api.httpconnection), or by the application
# when it starts on a request another server hands it.
ARRIVED = 'resobj.arrived'


def context(req):
    return req.environ[CONTEXT]


def version(req):
    return req.environ[MICROVERSION]


# {(id(schema), id(formats)): (schema, validator)}: schemas are module
# constants or cached per microversion, so each is compiled once; the
# schema is kept so its id cannot be reused by another object.
_VALIDATORS = {}

# jsonschema's formats. In a body, 'uuid' is the pattern of
# schemas.common (dashes optional); in a query string, jsonschema's own
# (with its dashes), as placement reads each. Either way a malformed one
# is "'x' is not a 'uuid'", in placement's words.
_FORMATS = jsonschema.FormatChecker()
_QUERY_FORMATS = jsonschema.FormatChecker()
_UUID_RE = re.compile(common.UUID_PATTERN)


@_FORMATS.checks('uuid')
def _is_uuid(value):
    return not isinstance(value, str) or bool(_UUID_RE.match(value))


def _validator(schema, formats):
    # Format checking catches e.g. a malformed uuid string.
    entry = _VALIDATORS.get((id(schema), id(formats)))
    if entry is None or entry[0] is not schema:
        entry = (schema, jsonschema.Draft7Validator(
            schema, format_checker=formats))
        _VALIDATORS[(id(schema), id(formats))] = entry
    return entry[1]


def validate(data, schema, what, formats=None):
    """Raise a 400 naming the main error of ``data`` against ``schema``.

    The detail is ``what`` and jsonschema's full account of the error,
    on one line, as placement words it (clients and log scrapers match
    on "Failed validating 'maxLength'"): the message, the keyword, where
    in the schema and in the document, the schema part and the value.
    """
    # The error jsonschema's validate() would raise, as placement's does:
    # the most relevant (the shallowest) of them, not the first found.
    error = jsonschema.exceptions.best_match(
        _validator(schema, formats or _FORMATS).iter_errors(data))
    if error is not None:
        raise errors.bad_request('%s %s' % (what, describe(error)))


# jsonschema's messages quote the value: a long one is cut short.
_MESSAGE_LENGTH = 10000


def _cut(text):
    if len(text) > _MESSAGE_LENGTH:
        return text[:_MESSAGE_LENGTH] + '...'
    return text


def _indent(value):
    return textwrap.indent(pprint.pformat(value, width=72, sort_dicts=False),
                           '    ')


def _index(path):
    return ''.join('[%r]' % part for part in path)


# How a pattern's end reads in jsonschema's message (the repr of
# ``...\Z``), and how placement's patterns end there.
_OUR_ANCHOR = "\\\\Z'"
_PLACEMENT_ANCHOR = "$'"


def describe(error):
    """One line: what jsonschema's ``str(error)`` says over several.

    The message quotes a pattern as placement writes it, ending in
    ``$``: clients and operators read "does not match '^[1-9][0-9]*$'".
    Ours end in ``\\Z`` (see ``schemas.common``), which differs only for
    a final line break, a string ``wellformed`` has refused already.
    """
    message = error.message
    if error.validator in ('pattern', 'additionalProperties'):
        # The patterns come after the value (or values) the message
        # quotes first.
        for verb in (' does not match ', ' do not match '):
            value, said, patterns = message.rpartition(verb)
            if said:
                message = value + said + patterns.replace(
                    _OUR_ANCHOR, _PLACEMENT_ANCHOR)
                break
    text = '%s\n\nFailed validating %r in schema%s:\n%s\n\nOn instance%s:' \
        '\n%s' % (_cut(message), error.validator,
                  _index(list(error.relative_schema_path)[:-1]),
                  _indent(error.schema), _index(error.relative_path),
                  _cut(_indent(error.instance)))
    return text.replace('\n', ' ')


def json_body(req, schema):
    """The request's JSON document, validated against ``schema``."""
    negotiation.require_json(req)
    try:
        data = json.loads(req.body or b'', parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request('Malformed JSON: %s' % exc)
    except RecursionError:
        raise errors.bad_request('Malformed JSON: nested too deeply.')
    wellformed.check_json(data)
    validate(data, schema, 'JSON does not validate:')
    return data


def _no_constant(name):
    # NaN and Infinity are not JSON (RFC 8259); Python accepts them, and a
    # NaN passes every minimum/maximum check of a schema.
    raise ValueError('%s is not a JSON value' % name)


def query(req, schema, repeatable=(), only_known=False, first_of=(),
          last_of=()):
    """The query string as a dict, validated against ``schema``.

    A parameter given twice is a 400 unless it is in ``repeatable``,
    whose values are always lists, in ``first_of``, whose first value
    counts (each is validated), or in ``last_of``, whose last value
    counts (only that one is validated, as placement does). With
    ``only_known``, parameters the schema does not name are left out (for
    a caller that parses them).
    The schema sees one string per parameter, as placement's does (the
    last value of a repeatable one; its callers parse every value), so
    that a schema error shows the query as placement shows it.
    The application has checked the query string's text already (see
    :mod:`resobj.api.wellformed`).
    """
    params, shown = {}, {}
    given = req.GET
    for key in given.keys():
        if only_known and key not in schema['properties']:
            continue
        values = given.getall(key)
        shown[key] = values[-1]
        if key in repeatable:
            params[key] = values
        elif key in first_of:
            for value in values[1:]:
                _validate_query(dict(shown, **{key: value}), schema)
            params[key] = shown[key] = values[0]
        elif key in last_of:
            params[key] = values[-1]
        elif len(values) > 1:
            # Placement's words and code.
            raise errors.bad_request(
                "Query parameter '%s' may be specified only once." % key,
                errors.QUERY_DUPLICATE_KEY)
        else:
            params[key] = values[0]
    _validate_query(shown, schema)
    return params


def check_query_names(req, schema):
    """Refuse an unknown query parameter as placement does, first.

    Placement validates the whole query string against one schema, which
    reports an unknown name before any value's error; ``schema`` names
    the parameters only, for a handler whose values are checked later,
    in placement's words. Each parameter shows its last value.
    """
    _validate_query({key: req.GET.getall(key)[-1] for key in req.GET.keys()},
                    schema)


def _validate_query(shown, schema):
    validate(shown, schema, 'Invalid query string parameters:',
             formats=_QUERY_FORMATS)


def _http_date(value):
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value


def dumps(data):
    """``data`` as UTF-8 JSON bytes.

    orjson writes a large candidate answer several times faster than
    the standard library (bench/README.md). It refuses what
    the standard library takes (integers beyond 64 bits, non-string
    keys), and such a body is written by the standard library instead:
    the same JSON either way.
    """
    try:
        return orjson.dumps(data)
    except TypeError:
        return json.dumps(data, separators=(',', ':')).encode()


# ``respond(last_modified=NO_TIME)``: what is returned has no change
# time (a provider's inventories when it has none), and, as placement
# does, the answer has no Last-Modified.
NO_TIME = object()


def respond(req, data=None, status=200, headers=None, last_modified=None,
            cache_headers=False):
    """A JSON (or empty) response with the version's caching headers.

    ``last_modified``: the newest change time of what is returned; now
    if unknown. Placement sends both headers from 1.15 on every GET and
    on every write that answers with a representation (a PUT of
    inventories, traits, aggregates or a provider; POST of an
    inventory or, from 1.20, a provider), never on errors;
    ``cache_headers`` sends them on an empty answer too (placement's
    ``PUT /traits/{name}``).
    """
    resp = webob.Response(status=status)
    if data is not None:
        resp.body = dumps(data)
        # Freed once the body is sent, not before: freeing a large answer
        # is work the client need not wait for.
        collector.keep_until_sent(req.environ, data)
        resp.content_type = 'application/json'
        resp.charset = None
    else:
        resp.content_type = None
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    if version(req) >= (1, 15) and (req.method == 'GET' or cache_headers
                                    or data is not None):
        if last_modified is not NO_TIME:
            resp.last_modified = _http_date(last_modified or
                                            timeutils.utcnow())
        resp.cache_control = 'no-cache'
    return resp


def newest(*times):
    """The latest of the non-None datetimes, or None."""
    times = [t for t in times if t is not None]
    return max(times) if times else None


def authorize(req, rule, target=None):
    req.environ[POLICY].authorize(context(req), rule, target)
