"""Flavor: a named instance size, and the extra specs that refine it.

Instances embed their flavor as a versioned primitive (a snapshot taken
when the instance was sized), so a Flavor primitive must survive a JSON
round trip unchanged, and primitives of every older version must stay
loadable.
"""

from resobj.db.api import flavor as flavor_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

# The fields save() may write. The others define the size that running
# instances hold embedded copies of; changing them in place would make
# those copies disagree silently with the flavor they name, so a new size
# is a new flavor.
MUTABLE_FIELDS = frozenset({'extra_specs', 'description', 'is_public',
                            'disabled'})


@base.ResobjObjectRegistry.register
class Flavor(base.ResobjPersistentObject, base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds description
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'flavorid': fields.StringField(),
        'name': fields.StringField(),
        'memory_mb': fields.NonNegativeIntegerField(),
        'vcpus': fields.NonNegativeIntegerField(),
        'root_gb': fields.NonNegativeIntegerField(),
        'ephemeral_gb': fields.NonNegativeIntegerField(),
        # In MB, unlike the disks.
        'swap': fields.NonNegativeIntegerField(),
        'rxtx_factor': fields.FloatField(default=1.0),
        'extra_specs': fields.DictOfStringsField(default={}),
        'is_public': fields.BooleanField(default=True),
        'disabled': fields.BooleanField(default=False),
        'description': fields.StringField(nullable=True),
    }

    _ADDED_IN = {'description': '1.1'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        base.drop_fields_added_after(primitive, target_version,
                                     self._ADDED_IN)

    # Change tracking sees assignments only; extra_specs is a dict that
    # callers edit in place (flavor.extra_specs['k'] = 'v'), so the object
    # keeps a copy of the value as of the last reset and compares.

    def _remember_extra_specs(self):
        self._orig_extra_specs = (dict(self.extra_specs)
                                  if self.obj_attr_is_set('extra_specs')
                                  else None)

    def obj_what_changed(self):
        changes = super().obj_what_changed()
        if self.obj_attr_is_set('extra_specs') and self.extra_specs != \
                getattr(self, '_orig_extra_specs', None):
            changes.add('extra_specs')
        return changes

    def obj_reset_changes(self, fields=None, recursive=False):
        super().obj_reset_changes(fields, recursive=recursive)
        # As in the base class, no fields (None or empty) means all.
        if not fields or 'extra_specs' in fields:
            self._remember_extra_specs()

    @classmethod
    def _obj_from_primitive(cls, context, objver, primitive):
        self = super()._obj_from_primitive(context, objver, primitive)
        # A primitive says itself whether extra_specs had changed (its
        # "changes" list); the value it carries is the baseline.
        self._remember_extra_specs()
        return self

    def obj_load_attr(self, attrname):
        if attrname == 'description':
            # Only a primitive from a 1.0 peer lacks it, and that peer
            # never had a description to send. Not marked changed: saving
            # must not overwrite a stored description with this None.
            self.description = None
            self.obj_reset_changes(['description'])
            return
        super().obj_load_attr(attrname)

    @classmethod
    @base.remotable
    def get_by_id(cls, context, flavor_id):
        return cls._from_db_object(context, cls(),
                                   flavor_db.get(context, flavor_id))

    @classmethod
    @base.remotable
    def get_by_flavor_id(cls, context, flavorid):
        return cls._from_db_object(
            context, cls(), flavor_db.get_by_flavor_id(context, flavorid))

    @classmethod
    @base.remotable
    def get_by_name(cls, context, name):
        return cls._from_db_object(context, cls(),
                                   flavor_db.get_by_name(context, name))

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        # Written explicitly: the column of extra_specs has no default,
        # and the others should not depend on the table's.
        self.obj_set_defaults('rxtx_factor', 'extra_specs', 'is_public',
                              'disabled')
        self._from_db_object(
            self.obj_context, self,
            flavor_db.create(self.obj_context, self.obj_get_db_changes()))

    @base.remotable
    def save(self):
        values = self.obj_get_db_changes()
        values.pop('id', None)
        fixed = sorted(set(values) - MUTABLE_FIELDS)
        if fixed:
            raise exception.ObjectActionError(
                action='save',
                reason='%s cannot change; create a new flavor'
                % ', '.join(fixed))
        if values:
            self._from_db_object(
                self.obj_context, self,
                flavor_db.update(self.obj_context, self.id, values))

    @base.remotable
    def destroy(self):
        # The deleted row: the caller's object shows deleted and deleted_at.
        self._from_db_object(self.obj_context, self,
                             flavor_db.destroy(self.obj_context, self.id))


@base.ResobjObjectRegistry.register
class FlavorList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Flavor 1.0
    # Version 1.1: Flavor 1.1
    VERSION = '1.1'

    fields = {
        'objects': fields.ListOfObjectsField('Flavor'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1')],
    }

    @classmethod
    @base.remotable
    def get_all(cls, context, is_public=None, include_disabled=True):
        return base.obj_make_list(
            context, cls(context),
            flavor_db.get_all(context, is_public=is_public,
                              include_disabled=include_disabled))
