"""Consumer: whatever holds allocations (an instance, a migration...).

Its ``generation`` orders concurrent changes to its allocations: a write
states the generation it read, and :meth:`Consumer.increment_generation`
is a compare-and-swap that fails with ConcurrentUpdateDetected when
another writer got there first.
"""

import re

from resobj.db.api import consumer as consumer_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields
from resobj.objects import project as project_obj
from resobj.objects import user as user_obj

CONSUMER_TYPE = re.compile(r'^[A-Z0-9_]+\Z')
MAX_CONSUMER_TYPE_LENGTH = 255


def validate_consumer_type(name):
    """None, or upper-case letters, digits and underscores (≤ 255)."""
    if name is None:
        return
    if not isinstance(name, str) or len(name) > MAX_CONSUMER_TYPE_LENGTH \
            or not CONSUMER_TYPE.match(name):
        raise exception.InvalidConsumerType(name=name)


@base.ResobjObjectRegistry.register
class Consumer(base.ResobjObject):
    # Version 1.0: initial version
    # Version 1.1: adds consumer_type
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'project': fields.ObjectField('Project'),
        'user': fields.ObjectField('User'),
        # None: the consumer never said (placement reports it "unknown").
        'consumer_type': fields.StringField(nullable=True),
        'generation': fields.NonNegativeIntegerField(),
    }

    # Which Project and User versions each Consumer version carries, for
    # backports without a version manifest.
    obj_relationships = {
        'project': [('1.0', '1.0')],
        'user': [('1.0', '1.0')],
    }

    _ADDED_IN = {'consumer_type': '1.1'}

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        # Dropped rather than refused: the type classifies the consumer
        # for usage reports and changes nothing a 1.0 peer does with it,
        # and update() leaves the stored type alone when the object has
        # none, so a consumer passing through a 1.0 peer keeps its type.
        base.drop_fields_added_after(primitive, target_version,
                                     self._ADDED_IN)

    @staticmethod
    def _from_db_object(context, consumer, db_row, skip=()):
        consumer.project = project_obj.Project._from_db_object(
            context, project_obj.Project(),
            {'id': db_row['project_id'],
             'external_id': db_row['project_external_id']})
        consumer.user = user_obj.User._from_db_object(
            context, user_obj.User(),
            {'id': db_row['user_id'],
             'external_id': db_row['user_external_id']})
        return base.ResobjObject._from_db_object(context, consumer, db_row,
                                                 skip)

    @classmethod
    @base.remotable
    def get_by_uuid(cls, context, uuid):
        return cls._from_db_object(context, cls(),
                                   consumer_db.get_by_uuid(context, uuid))

    def _owner_ids(self):
        for name in ('project', 'user'):
            owner = getattr(self, name)
            if not owner.obj_attr_is_set('id'):
                raise exception.ObjectActionError(
                    action='write consumer',
                    reason='its %s has no id; use %s.get_or_create'
                    % (name, owner.obj_name()))
        return {'project_id': self.project.id, 'user_id': self.user.id}

    @base.remotable
    def create(self):
        """Insert at generation 0; ConsumerExists if the uuid is taken."""
        if self.obj_attr_is_set('id'):
            raise exception.ObjectActionError(action='create',
                                              reason='already created')
        consumer_type = self.consumer_type \
            if self.obj_attr_is_set('consumer_type') else None
        validate_consumer_type(consumer_type)
        ids = self._owner_ids()
        self._from_db_object(self.obj_context, self, consumer_db.create(
            self.obj_context, self.uuid, ids['project_id'], ids['user_id'],
            consumer_type))

    @base.remotable
    def update(self):
        """Write project, user and type, if the generation still matches.

        The type is written only when set on this object (one loaded from
        a 1.0 primitive has none and keeps the stored one). The
        generation is not bumped; ConcurrentUpdateDetected if it moved.
        """
        values = self._owner_ids()
        if self.obj_attr_is_set('consumer_type'):
            validate_consumer_type(self.consumer_type)
            values['consumer_type'] = self.consumer_type
        consumer_db.update(self.obj_context, self.id, self.generation, values)
        self.obj_reset_changes(['project', 'user', 'consumer_type'],
                               recursive=True)

    @base.remotable
    def increment_generation(self):
        """Compare-and-swap the generation one up from the one held.

        ConcurrentUpdateDetected when another writer changed (or deleted)
        the consumer since this object read it.
        """
        self.generation = consumer_db.increment_generation(
            self.obj_context, self.id, self.generation)
        self.obj_reset_changes(['generation'])

    @base.remotable
    def delete(self):
        """Delete the consumer; ConsumerInUse while it has allocations."""
        consumer_db.destroy(self.obj_context, self.id)
