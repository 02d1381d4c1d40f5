"""Usage: how much of one resource class is allocated.

Read-only report objects: the sums are computed by the database
(``resobj.db.api.usage``), never by loading allocations.
"""

from resobj.db.api import usage as usage_db
from resobj.objects import base
from resobj.objects import fields

UNKNOWN_TYPE = usage_db.UNKNOWN_TYPE
ALL_TYPES = usage_db.ALL_TYPES

DATA = base.ResobjObject.OBJ_SERIAL_NAMESPACE + '.data'


@base.ResobjObjectRegistry.register
class Usage(base.ResobjObject):
    # Version 1.0: initial version: resource_class, usage
    # Version 1.1: adds consumer_type and consumer_count (dropped below
    #              1.1; UsageList merges the rows they told apart)
    VERSION = '1.1'

    fields = {
        'resource_class': fields.StringField(),
        'usage': fields.NonNegativeIntegerField(),
        # 'unknown' for consumers without a type, 'all' for every type.
        'consumer_type': fields.StringField(default=UNKNOWN_TYPE),
        'consumer_count': fields.NonNegativeIntegerField(),
    }

    _ADDED_IN = {'consumer_type': '1.1', 'consumer_count': '1.1'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        # Dropped, not refused: a 1.0 peer asked for usage per class and
        # still gets it; UsageList sums the per-type rows back together.
        base.drop_fields_added_after(primitive, target_version,
                                     self._ADDED_IN)


@base.ResobjObjectRegistry.register
class UsageList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Usage 1.0; get_all_by_resource_provider_
    #              uuid and get_all_by_project_user(project_id, user_id)
    # Version 1.1: Usage 1.1; get_all_by_project_user takes consumer_type
    # Version 1.2: adds resource_provider_generation, set by
    #              get_all_by_resource_provider_uuid (dropped below 1.2);
    #              get_all_by_project_user takes count_consumers
    VERSION = '1.2'

    fields = {
        'objects': fields.ListOfObjectsField('Usage'),
        # The provider's generation when its usages were read, so that a
        # caller needs no second read (and no second transaction); None
        # for a project's usages.
        'resource_provider_generation': fields.NonNegativeIntegerField(
            nullable=True, default=None),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1'), ('1.2', '1.1')],
    }

    _ADDED_IN = {'resource_provider_generation': '1.2'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        base.drop_fields_added_after(primitive, target_version,
                                     self._ADDED_IN)
        if base.version_tuple(target_version) >= (1, 1):
            return
        # Rows per (consumer type, class) lose their type below 1.1; a
        # 1.0 peer would read two VCPU rows where it expects one per
        # class. Sum them, keeping the first row's position.
        merged = {}
        for child in primitive.get('objects', []):
            data = child[DATA]
            first = merged.get(data['resource_class'])
            if first is None:
                merged[data['resource_class']] = child
            else:
                first[DATA]['usage'] += data['usage']
        if 'objects' in primitive:
            primitive['objects'] = list(merged.values())

    @classmethod
    @base.remotable
    def get_all_by_resource_provider_uuid(cls, context, rp_uuid):
        """Usage of every class ``rp_uuid`` has inventory of, 0 if unused.

        Counts and types are per consumer, which a provider's usage does
        not break down: rows say 'all' types and no consumer count is set.
        ``resource_provider_generation`` is set, read with the usages.
        """
        found = usage_db.get_provider_usages(context, rp_uuid)
        usages = base.obj_make_list(context, cls(context), [
            dict(row, consumer_type=ALL_TYPES) for row in found['usages']])
        usages.resource_provider_generation = \
            found['resource_provider_generation']
        usages.obj_reset_changes(['resource_provider_generation'])
        return usages

    @classmethod
    @base.remotable
    def get_all_by_project_user(cls, context, project_id, user_id=None,
                                consumer_type=None, count_consumers=True):
        """Usage of a project's (or one user's) consumers.

        External ids. ``consumer_type``: None, a name, 'unknown' or 'all'
        (see resobj.db.api.usage.get_all_by_project_user).
        ``count_consumers=False``: leave ``consumer_count`` unset and
        skip counting, for a caller that does not report it.
        """
        rows = usage_db.get_all_by_project_user(
            context, project_id, user_id=user_id,
            consumer_type=consumer_type, count_consumers=count_consumers)
        return base.obj_make_list(context, cls(context), rows)

    def as_dict(self):
        """{resource class: usage}, summed over consumer types."""
        totals = {}
        for usage in self.objects:
            totals[usage.resource_class] = \
                totals.get(usage.resource_class, 0) + usage.usage
        return totals
