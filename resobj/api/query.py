"""Parsers for the query parameters several routes share.

``resources=VCPU:2,MEMORY_MB:512``, ``member_of=in:A,B`` / ``!A`` /
``!in:A,B`` and ``required=T1,!T2`` / ``in:T1,T2`` follow placement's
grammar, and are accepted only from the microversion that introduced
each form. A malformed value is a 400 with ``placement.undefined_code``,
as placement answers for these parameters (placement's specific query
codes are for the few checks that use them there: ``root_required``,
``same_subtree``, a request group without resources).
"""

import re
import uuid as uuid_lib

from resobj.api import errors
from resobj.api.schemas import common

# A uuid as a body may give it (schemas.common): 32 ASCII hex digits,
# each dash of the usual five groups optional.
_UUID_RE = re.compile(common.UUID_PATTERN)


def bad_value(detail):
    return errors.bad_request(detail)


# Placement's words for a malformed resources= value.
_BADLY_FORMED = ('Badly formed resources parameter. Expected resources '
                 'query string parameter in form: '
                 '?resources=VCPU:2,MEMORY_MB:1024. Got: %s.')


def resources(value):
    """``VCPU:2,DISK_GB:10`` -> {'VCPU': 2, 'DISK_GB': 10}.

    As placement reads it: each item is a name and an amount, the item
    quoted when it is not; a name is taken as written (``vcpu``,
    `` VCPU``), and one that names no class is an unknown class when it
    is looked up, not a malformed value.
    """
    result = {}
    if not value:
        raise bad_value(_BADLY_FORMED % 'empty string')
    for item in value.split(','):
        parts = item.split(':')
        if len(parts) != 2:
            raise bad_value(_BADLY_FORMED % item)
        name, amount = parts
        try:
            amount = int(amount)
        except ValueError:
            raise bad_value('Requested resource %s expected positive '
                            'integer amount. Got: %s.' % (name, amount))
        if amount < 1:
            raise bad_value('Requested resource %s requires amount >= 1. '
                            'Got: %d.' % (name, amount))
        if amount > common.MAX_INT:
            # No allocation can hold more, and the databases' integer
            # columns would overflow on comparing.
            raise bad_value(
                'Requested resource %s amount %d is above the largest '
                'possible, %d.' % (name, amount, common.MAX_INT))
        if name in result:
            raise bad_value('Resource class %s appears more than once in '
                            'resources=%s.' % (name, value))
        result[name] = amount
    return result


def _uuid_list(text, what):
    result = []
    for item in (u.strip() for u in text.split(',')):
        if not _UUID_RE.match(item):
            # Placement's words.
            raise bad_value("Invalid query string parameters: Expected "
                            "'%s' parameter to contain valid UUID(s). "
                            "Got: %s" % (what, item))
        result.append(canonical_uuid(item))
    return result


def member_of(values, version):
    """[values] -> ([any-of sets], forbidden set) for 1.3+ member_of."""
    if len(values) > 1 and version < (1, 24):
        # Placement's words.
        raise bad_value('Multiple member_of parameters are not supported')
    required, forbidden = [], set()
    for value in values:
        negative = value.startswith('!')
        if negative:
            if version < (1, 32):
                # Placement's words.
                raise bad_value('Forbidden member_of parameters are not '
                                'supported in the specified microversion')
            value = value[1:]
        is_in = value.startswith('in:')
        if is_in:
            value = value[3:]
        uuids = _uuid_list(value, 'member_of')
        if len(uuids) > 1 and not is_in:
            # Placement's words.
            raise bad_value("Multiple values for 'member_of' must be "
                            "prefixed with the 'in:' or '!in:' keyword "
                            "using the valid microversion. Got: %s"
                            % (('!' if negative else '') + value))
        if negative:
            forbidden.update(uuids)
        else:
            required.append(set(uuids))
    # An aggregate both required and forbidden is no error, as in
    # placement: no provider passes both, and the answer is empty.
    return required, forbidden


# Placement's words for the parts of required= and root_required= (it
# names 'required' for both).
_FORM = ("Invalid query string parameters: Expected 'required' parameter "
         "value of the form: %s. ")
_IN_FORM = ("Invalid query string parameters: The format "
            "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since "
            "microversion 1.39. Got: %s")


def required(values, version, param='required', conflicts=True):
    """[values] -> ([any-of sets], forbidden set) for required=.

    Repeating ``required`` means "all of these" from 1.39; before, as
    in placement, the last one given replaces the others. With
    ``conflicts``, a trait both required and forbidden is a 400 naming
    ``param`` (the parameter's name with its group's suffix); without,
    as placement lists providers, it is no error: no provider passes.
    """
    if version < (1, 39):
        values = values[-1:]
    any_of, forbidden, order = [], set(), []
    for value in values:
        if value.startswith('in:'):
            if version < (1, 39):
                raise bad_value(_IN_FORM % value)
            names = [n.strip() for n in value[3:].split(',')]
            if not all(names):
                raise bad_value(
                    _FORM % 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC'
                    + 'Got an empty trait in: %s' % value)
            if any(name.startswith('!') for name in names):
                # Placement's words.
                raise bad_value(
                    "Invalid query string parameters: The format "
                    "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support "
                    "forbidden traits. Got: %s" % value)
            any_of.append(set(names))
            continue
        names, more_forbidden = _traits(value, 'required',
                                        forbidden_ok=version >= (1, 22))
        any_of.extend({name} for name in names)
        order.extend(names)
        forbidden |= more_forbidden
    both = [name for name in dict.fromkeys(order) if name in forbidden]
    if both and conflicts:
        # Placement's words.
        raise bad_value('Conflicting required and forbidden traits found '
                        'in the following traits keys: %s'
                        % ', '.join('%s: (%s)' % (param, name)
                                    for name in both))
    return any_of, forbidden


def root_required(value):
    """root_required=A,!B -> (required set, forbidden set) (from 1.35).

    The syntax of required= before 1.39: names, forbidden ones with a
    leading ``!``; no ``in:`` form.
    """
    if value.startswith('in:'):
        raise bad_value(_IN_FORM % value)
    names, forbidden = _traits(value, 'root_required')
    both = set(names) & forbidden
    if both:
        # Placement's words and code.
        raise errors.bad_request(
            'Conflicting required and forbidden traits found in '
            'root_required: %s' % ', '.join(sorted(both)),
            errors.QUERY_BAD_VALUE)
    return set(names), forbidden


def _traits(value, param, forbidden_ok=True):
    """'A,!B' -> ([required names], {forbidden names}), each checked."""
    required, forbidden = [], set()
    # Placement's words, which name the form the version accepts.
    form = _FORM % ('HW_CPU_X86_VMX,%sCUSTOM_MAGIC'
                    % ('!' if forbidden_ok else ''))
    for name in (n.strip() for n in value.split(',')):
        # ``!`` alone (or ``!!``) is an empty name too, in placement's
        # words.
        if not name.lstrip('!'):
            raise bad_value(form + 'Got an empty trait in: %s' % value)
        if name.startswith('!'):
            if not forbidden_ok:
                raise bad_value(form + 'Got: %s' % value)
            _check_traits([name[1:]], value, param)
            forbidden.add(name[1:])
        else:
            required.append(name)
    return required, forbidden


def _check_traits(names, value, param='required'):
    """A name with a second ``!`` is refused (resobj is stricter there).

    Any other name that is no trait's is looked up and answered as
    placement answers an unknown trait.
    """
    for name in names:
        if name.startswith('!'):
            raise bad_value('Invalid trait name %r in %s=%s.'
                            % (name, param, value))


def uuid(value, what):
    if not _UUID_RE.match(value):
        raise bad_value("Invalid query string parameters: Expected '%s' "
                        "parameter to be a format of uuid. Got: %s"
                        % (what, value))
    return canonical_uuid(value)


def canonical_uuid(value):
    """The form the database stores (lower case, dashed).

    ValueError unless ``value`` is a uuid in a form a body may give
    (``_UUID_RE``): Python's reading of a uuid also takes ``{...}``,
    ``urn:uuid:`` and any script's decimal digits (U+FF10, U+0661),
    which would make a URL path accept what a body refuses.
    """
    if not _UUID_RE.match(value):
        raise ValueError('%r is not a uuid' % value)
    return str(uuid_lib.UUID(value))


def boolean(value, what):
    if value.lower() in ('true', 'false'):
        return value.lower() == 'true'
    raise bad_value('Invalid %s value %r: expected true or false.'
                    % (what, value))
