"""PciDevicePool: a count of alike PCI devices on one compute node.

Pools have no table of their own: a compute node stores its
PciDevicePoolList in its ``pci_stats`` JSON column, written with
:func:`to_pci_stats` and read with :func:`from_pci_stats`, which also
reads the formats older code wrote there.
"""

from oslo_serialization import jsonutils

from resobj import exception
from resobj.objects import base
from resobj.objects import fields

# The keys of the legacy flat dict that are fields; every other key is a
# tag.
_FIELD_KEYS = ('product_id', 'vendor_id', 'numa_node', 'count')
_REQUIRED_KEYS = ('product_id', 'vendor_id', 'count')
_NAME_KEY = base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.name'
_CHANGES_KEY = base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.changes'


@base.ResobjObjectRegistry.register
class PciDevicePool(base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds numa_node
    VERSION = '1.1'

    fields = {
        'product_id': fields.StringField(),
        'vendor_id': fields.StringField(),
        'numa_node': fields.IntegerField(nullable=True),
        'tags': fields.DictOfNullableStringsField(),
        'count': fields.IntegerField(),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        base.drop_fields_added_after(primitive, target_version,
                                     {'numa_node': '1.1'})

    @classmethod
    def from_dict(cls, value):
        """A pool from the legacy flat dict.

        ``product_id``, ``vendor_id``, ``count`` (required) and
        ``numa_node`` (optional) are fields; every other key is a tag.
        Raises ValueError naming a missing key or a value of the wrong
        type.
        """
        if not isinstance(value, dict):
            raise ValueError('a PCI device pool must be a dict, not %s'
                             % type(value).__name__)
        missing = [key for key in _REQUIRED_KEYS if key not in value]
        if missing:
            raise ValueError('a PCI device pool needs %s'
                             % ', '.join(missing))
        pool = cls(tags={key: tag for key, tag in value.items()
                         if key not in _FIELD_KEYS})
        for key in _FIELD_KEYS:
            if key in value:
                setattr(pool, key, value[key])
        return pool

    def to_dict(self):
        """The legacy flat dict: the set fields, with the tags beside them.

        A tag named like a field could not be told apart from it, so it
        raises ValueError rather than be lost.
        """
        clashing = sorted(set(self.tags) & set(_FIELD_KEYS))
        if clashing:
            raise ValueError('tags %s clash with field names'
                             % ', '.join(clashing))
        value = dict(self.tags)
        for key in _FIELD_KEYS:
            if self.obj_attr_is_set(key):
                value[key] = getattr(self, key)
        return value


@base.ResobjObjectRegistry.register
class PciDevicePoolList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, PciDevicePool 1.0
    # Version 1.1: PciDevicePool 1.1
    VERSION = '1.1'

    fields = {
        'objects': fields.ListOfObjectsField('PciDevicePool'),
    }
    # The pool version each list version carries (see ObjectListBase).
    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1')],
    }


def from_pci_stats(value):
    """A PciDevicePoolList from a compute node's ``pci_stats``, or None.

    ``value`` is JSON text or already decoded, holding one of:

    * a PciDevicePoolList primitive of any version this code reads;
    * one legacy pool dict (see :meth:`PciDevicePool.from_dict`), or a
      dict ``{'pci_stats': [pool dict, ...]}``;
    * a list of legacy pool dicts.

    None, empty text and an empty dict or list give None. Anything else
    raises :class:`resobj.exception.InvalidPciStats` (a ValueError) saying
    what was wrong.
    """
    if isinstance(value, (str, bytes)):
        if not value.strip():
            return None
        try:
            value = jsonutils.loads(value)
        except ValueError as exc:
            raise exception.InvalidPciStats(reason='not JSON (%s)' % exc)
    if value is None or value == {} or value == []:
        return None
    if isinstance(value, dict) and _NAME_KEY in value:
        return _from_primitive(value)
    if isinstance(value, dict) and any(
            key.endswith('_object.name') for key in value):
        raise exception.InvalidPciStats(
            reason='an object primitive of another project (%s)'
            % ', '.join(sorted(value)))
    if isinstance(value, dict) and 'pci_stats' in value:
        beside = sorted(set(value) - {'pci_stats'})
        if beside:
            raise exception.InvalidPciStats(
                reason="keys beside 'pci_stats': %s" % ', '.join(beside))
        value = value['pci_stats']
        if value is None or value == []:
            return None
        if not isinstance(value, list):
            raise exception.InvalidPciStats(
                reason="'pci_stats' must be a list of pool dicts, not %s"
                % type(value).__name__)
    if isinstance(value, dict):
        return PciDevicePoolList(objects=[_pool(value, 'the pool')])
    if isinstance(value, list):
        return PciDevicePoolList(objects=[
            _pool(item, 'item %d' % index)
            for index, item in enumerate(value)])
    raise exception.InvalidPciStats(
        reason='expected a PciDevicePoolList primitive, a pool dict or a '
        'list of pool dicts, not %s' % type(value).__name__)


def _pool(value, what):
    try:
        return PciDevicePool.from_dict(value)
    except ValueError as exc:
        raise exception.InvalidPciStats(reason='%s: %s' % (what, exc))


def _from_primitive(value):
    try:
        return PciDevicePoolList.obj_from_primitive(value)
    except exception.WrongObjectPrimitive as exc:
        raise exception.InvalidPciStats(
            reason='a %s primitive, not a PciDevicePoolList'
            % exc.kwargs['actual'])
    except exception.ResobjException as exc:
        raise exception.InvalidPciStats(
            reason='unreadable PciDevicePoolList primitive: %s' % exc)


def to_pci_stats(pool_list):
    """``pool_list`` as ``pci_stats`` JSON text, or None for None.

    The primitive is of the newest version and records no pending
    changes: what is stored is data, not an edit in progress.
    """
    if pool_list is None:
        return None
    return jsonutils.dumps(_without_changes(pool_list.obj_to_primitive()))


def _without_changes(value):
    if isinstance(value, dict):
        return {key: _without_changes(item) for key, item in value.items()
                if key != _CHANGES_KEY}
    if isinstance(value, list):
        return [_without_changes(item) for item in value]
    return value
