"""User: the user a consumer was created for, by identity-service id.

Users are created on first use (:meth:`User.get_or_create`); the
``external_id`` is the identity service's, ``id`` is this database's.
"""

from resobj.db.api import consumer as consumer_db
from resobj.objects import base
from resobj.objects import fields
from resobj.objects import project


@base.ResobjObjectRegistry.register
class User(base.ResobjObject):
    # Version 1.0: initial version
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'external_id': fields.StringField(),
    }

    @classmethod
    @base.remotable
    def get_by_external_id(cls, context, external_id):
        return cls._from_db_object(
            context, cls(), consumer_db.get_user(context, external_id))

    @classmethod
    @base.remotable
    def get_or_create(cls, context, external_id):
        """The user, created if new; safe against concurrent callers."""
        project.validate_external_id('user', external_id)
        return cls._from_db_object(
            context, cls(),
            consumer_db.get_or_create_user(context, external_id))
