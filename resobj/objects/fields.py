"""Field types for resobj objects.

Re-exports oslo.versionedobjects' fields so object modules import one
place, and replaces the UUID type: the stock ``UUIDField`` stores an
invalid UUID after a ``FutureWarning``; resobj's raises ``ValueError``.
"""

import uuid as uuid_lib

from resobj.objects._ovo import fields as ovo_fields

# Re-exported: the field types objects use.
BaseEnumField = ovo_fields.BaseEnumField
BooleanField = ovo_fields.BooleanField
DateTimeField = ovo_fields.DateTimeField
DictOfIntegersField = ovo_fields.DictOfIntegersField
DictOfNullableStringsField = ovo_fields.DictOfNullableStringsField
DictOfStringsField = ovo_fields.DictOfStringsField
Enum = ovo_fields.Enum
EnumField = ovo_fields.EnumField
Field = ovo_fields.Field
FieldType = ovo_fields.FieldType
FlexibleBooleanField = ovo_fields.FlexibleBooleanField
FloatField = ovo_fields.FloatField
IntegerField = ovo_fields.IntegerField
IPAddressField = ovo_fields.IPAddressField
ListOfIntegersField = ovo_fields.ListOfIntegersField
ListOfObjectsField = ovo_fields.ListOfObjectsField
ListOfStringsField = ovo_fields.ListOfStringsField
NonNegativeFloatField = ovo_fields.NonNegativeFloatField
NonNegativeIntegerField = ovo_fields.NonNegativeIntegerField
ObjectField = ovo_fields.ObjectField
PCIAddressField = ovo_fields.PCIAddressField
SetOfStringsField = ovo_fields.SetOfStringsField
StateMachine = ovo_fields.StateMachine
StringField = ovo_fields.StringField


class UUID(ovo_fields.UUID):
    """A UUID in its canonical form; anything else raises ValueError."""

    @staticmethod
    def coerce(obj, attr, value):
        if isinstance(value, uuid_lib.UUID):
            return str(value)
        try:
            return str(uuid_lib.UUID(str(value)))
        except ValueError:
            raise ValueError('Field %s: %r is not a valid UUID'
                             % (attr, value))


class UUIDField(ovo_fields.AutoTypedField):
    AUTO_TYPE = UUID()


class SortedSetOfIntegers(ovo_fields.Set):
    """A set of integers whose primitive lists them in order.

    The stock Set primitive follows the set's iteration order, which
    differs between equal sets built differently; sorted, equal sets
    always give equal primitives (and stable golden files).
    """

    def __init__(self, **kwargs):
        super().__init__(ovo_fields.Integer(), **kwargs)

    def to_primitive(self, obj, attr, value):
        return tuple(sorted(super().to_primitive(obj, attr, value)))


class SetOfIntegersField(ovo_fields.AutoTypedField):
    AUTO_TYPE = SortedSetOfIntegers()


class MigrationType(Enum):
    """How an instance moves: the values of ``Migration.migration_type``."""

    MIGRATION = 'migration'  # cold, same flavor
    RESIZE = 'resize'  # cold, new flavor
    LIVE_MIGRATION = 'live-migration'
    EVACUATION = 'evacuation'  # rebuilt elsewhere, its host being down

    ALL = (MIGRATION, RESIZE, LIVE_MIGRATION, EVACUATION)

    def __init__(self):
        super().__init__(valid_values=MigrationType.ALL)


class MigrationTypeField(BaseEnumField):
    AUTO_TYPE = MigrationType()
