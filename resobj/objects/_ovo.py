"""oslo.versionedobjects, imported without its import-time noise.

Below the imports: the functions through which resobj reads and
writes the library's private names (the architecture page lists them,
with the private hook and field-type details used elsewhere).

oslo.versionedobjects imports oslo.messaging, which imports eventlet and
oslo.service; both warn at import time that eventlet is deprecated, and
eventlet's DNS support imports dnspython's DNSSEC algorithms, whose DSA
module warns that cryptography deprecates DSA. resobj never runs on
eventlet, so those warnings tell its users nothing.
They are silenced only while these modules are first imported, and only
for the modules that raise them: every other warning still shows.
"""

import typing
import warnings

with warnings.catch_warnings():
    warnings.filterwarnings(
        'ignore', module=r'oslo_service(\.|$)')
    warnings.filterwarnings(
        'ignore', category=DeprecationWarning,
        module=r'oslo_utils\.eventletutils$')
    # eventlet's green DNS imports dnspython's DNSSEC algorithms, whose
    # DSA module warns (cryptography deprecates DSA) at import time.
    warnings.filterwarnings(
        'ignore', message='DSA is deprecated',
        module=r'dns\.dnssecalgs(\.|$)')
    from oslo_versionedobjects import base  # noqa: F401
    from oslo_versionedobjects import exception  # noqa: F401
    from oslo_versionedobjects import fields  # noqa: F401
    from oslo_versionedobjects import fixture  # noqa: F401


# The private names of oslo.versionedobjects that resobj relies on, where
# the library offers no public way; each is used through one function
# here, tests/unit/objects/test_ovo.py fails if the library changes one,
# and doc/source/contributor/architecture.rst lists them.

def stored_field_key(name):
    """The key under which an object keeps field ``name``'s value.

    A set field's value is in the object's ``__dict__`` under this key,
    an unset field's is not: resobj's ``obj_attr_is_set`` tests that
    directly rather than through the library's list of set fields.
    """
    return base._get_attrname(name)


def changed_fields(obj):
    """The set of field names ``obj`` marks changed, children aside.

    The library's own record, which its ``obj_what_changed`` reads
    before looking into child objects; resobj's override reads it too.
    """
    return obj._changed_fields


def version_manifest(obj):
    """The version manifest that ``obj_to_primitive`` stashed on ``obj``.

    {object name: version} while ``obj_make_compatible`` runs for a
    ``version_manifest``, which the library reads back from ``obj`` to
    backport each child; None when there is none.
    """
    return getattr(obj, '_obj_version_manifest', None)


def replace_version_manifest(obj, manifest):
    """Make ``manifest`` what the rest of ``obj_make_compatible`` follows."""
    obj._obj_version_manifest = manifest


def field_type(field):
    """The FieldType (String, List, Object...) of ``field``.

    What a field's value must be; fingerprints describe it, where the
    library's own hash sees the field's ``repr`` only.
    """
    return field._type


class ObjectTarget(typing.NamedTuple):
    """What an Object field type holds: a class, maybe its subclasses."""

    name: str
    subclasses: bool


def object_target(field_type):
    """The ObjectTarget of an Object field type; None for other types.

    The type keeps it in ``_obj_name`` and ``_subclasses``.
    """
    if not hasattr(field_type, '_obj_name'):
        return None
    return ObjectTarget(field_type._obj_name,
                        getattr(field_type, '_subclasses', False))


def valid_values(field_type):
    """The values an Enum field type accepts; None for other types.

    The type keeps them in ``_valid_values``.
    """
    return getattr(field_type, '_valid_values', None)


def element_field(field_type):
    """The Field a List, Set or Dict field type holds each element as.

    None for other types. The type keeps it in ``_element_type``.
    """
    return getattr(field_type, '_element_type', None)


def set_context(obj, context):
    """Make ``context`` the one ``obj`` uses (its ``obj_context``).

    The library sets it only when it builds an object; ``obj_context``
    has no setter. An object filled from the DB API takes the caller's.
    """
    obj._context = context
