"""Migration: one move of an instance from one compute node to another.

Rows written before 1.1/1.2 lack ``migration_type`` and ``uuid``. Reading
one completes it: the type is inferred (not stored), and a uuid is
generated and stored at once so that the migration keeps it on every
later read. ``resobj.db.api.migration.complete_legacy_rows`` completes the
rest in the background.
"""

from oslo_utils import uuidutils

# The inference rule lives with the queries, which need it too; it is
# private there because the DB API's public names are all transactional.
from resobj.db.api import migration as migration_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

# Re-exported: which statuses end a migration is part of this object's
# meaning, not only of the query that filters on it.
TERMINAL_STATUSES = migration_db.TERMINAL_STATUSES


def _complete_uuids(context, rows):
    """Give rows from old code a stored uuid (one transaction for all)."""
    missing = [row['id'] for row in rows if row['uuid'] is None]
    if missing:
        uuids = migration_db.ensure_uuids(context, missing)
        for row in rows:
            if row['uuid'] is None:
                row['uuid'] = uuids[row['id']]
    return rows


@base.ResobjObjectRegistry.register
class Migration(base.ResobjPersistentObject, base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds migration_type and hidden
    # Version 1.2: adds uuid
    VERSION = '1.2'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'source_compute': fields.StringField(nullable=True),
        'dest_compute': fields.StringField(nullable=True),
        'source_node': fields.StringField(nullable=True),
        'dest_node': fields.StringField(nullable=True),
        'dest_host': fields.StringField(nullable=True),
        'instance_uuid': fields.UUIDField(),
        'old_instance_type_id': fields.IntegerField(nullable=True),
        'new_instance_type_id': fields.IntegerField(nullable=True),
        'status': fields.StringField(),
        'migration_type': fields.MigrationTypeField(),
        'hidden': fields.BooleanField(default=False),
    }

    _ADDED_IN = {'migration_type': '1.1', 'hidden': '1.1', 'uuid': '1.2'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        base.drop_fields_added_after(primitive, target_version,
                                     self._ADDED_IN)

    def obj_load_attr(self, attrname):
        # Only objects from older peers' primitives lack these fields.
        if attrname == 'migration_type':
            self.migration_type = migration_db._infer_migration_type(
                self._value_or_none('old_instance_type_id'),
                self._value_or_none('new_instance_type_id'))
        elif attrname == 'hidden':
            self.hidden = False
        elif attrname == 'uuid':
            if self.obj_context is None or not self.obj_attr_is_set('id'):
                raise exception.ObjectActionError(
                    action='obj_load_attr',
                    reason='uuid needs a stored migration and a context')
            self.uuid = migration_db.ensure_uuids(self.obj_context,
                                                  [self.id])[self.id]
        else:
            super().obj_load_attr(attrname)
            return
        # Guessed or stored values, not edits: save() must not write a
        # guessed type over the one the database may hold.
        self.obj_reset_changes([attrname])

    def _value_or_none(self, name):
        return getattr(self, name) if self.obj_attr_is_set(name) else None

    @classmethod
    def _from_db_row(cls, context, obj, row):
        return cls._from_db_object(context, obj,
                                   _complete_uuids(context, [row])[0])

    @classmethod
    @base.remotable
    def get_by_id(cls, context, migration_id):
        return cls._from_db_row(context, cls(),
                                migration_db.get(context, migration_id))

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context, uuid):
        return cls._from_db_row(context, cls(),
                                migration_db.get_by_uuid(context, uuid))

    @base.remotable
    def create(self):
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        # The columns are nullable for the sake of old rows; the object's
        # fields are not, and a row without them could not be read back.
        for name in ('instance_uuid', 'status'):
            if not self.obj_attr_is_set(name):
                raise exception.ObjectActionError(
                    action='create', reason='%s is required' % name)
        if not self.obj_attr_is_set('uuid'):
            self.uuid = uuidutils.generate_uuid()
        if not self.obj_attr_is_set('migration_type'):
            self.migration_type = migration_db._infer_migration_type(
                self._value_or_none('old_instance_type_id'),
                self._value_or_none('new_instance_type_id'))
        self.obj_set_defaults('hidden')
        self._from_db_object(
            self.obj_context, self,
            migration_db.create(self.obj_context, self.obj_get_db_changes()))

    @base.remotable
    def save(self):
        values = self.obj_get_db_changes()
        values.pop('id', None)
        if values:
            self._from_db_object(
                self.obj_context, self,
                migration_db.update(self.obj_context, self.id, values))

    @base.remotable
    def destroy(self):
        # The deleted row: the caller's object shows deleted and deleted_at.
        self._from_db_row(self.obj_context, self,
                          migration_db.destroy(self.obj_context, self.id))


@base.ResobjObjectRegistry.register
class MigrationList(base.ObjectListBase, base.ResobjObject):
    # Version 1.0: initial version, Migration 1.0
    # Version 1.1: Migration 1.1
    # Version 1.2: Migration 1.2
    VERSION = '1.2'

    fields = {
        'objects': fields.ListOfObjectsField('Migration'),
    }

    obj_relationships = {
        'objects': [('1.0', '1.0'), ('1.1', '1.1'), ('1.2', '1.2')],
    }

    @classmethod
    def _from_db_rows(cls, context, rows):
        return base.obj_make_list(context, cls(context),
                                  _complete_uuids(context, rows))

    @classmethod
    @base.remotable
    def get_in_progress_by_host_and_node(cls, context, host, node):
        """Migrations into or out of ``node`` on ``host`` not yet ended.

        Ended means a status in ``TERMINAL_STATUSES``, or soft-deleted.
        """
        return cls._from_db_rows(
            context, migration_db.get_in_progress_by_host_and_node(
                context, host, node))

    @classmethod
    @base.remotable
    def get_by_instance_uuid(cls, context, instance_uuid):
        return cls._from_db_rows(
            context, migration_db.get_by_instance_uuid(context,
                                                       instance_uuid))
