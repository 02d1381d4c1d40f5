"""Project: the owner of consumers, by its identity-service id.

Projects are created on first use (:meth:`Project.get_or_create`); the
``external_id`` is the identity service's, ``id`` is this database's.
"""

from resobj.db.api import consumer as consumer_db
from resobj import exception
from resobj.objects import base
from resobj.objects import fields

MAX_EXTERNAL_ID_LENGTH = 255


def validate_external_id(kind, external_id):
    """Raise InvalidExternalId unless a non-empty string of ≤ 255 chars."""
    if not isinstance(external_id, str) or not external_id or \
            len(external_id) > MAX_EXTERNAL_ID_LENGTH:
        raise exception.InvalidExternalId(kind=kind, external_id=external_id)


@base.ResobjObjectRegistry.register
class Project(base.ResobjObject):
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
            context, cls(), consumer_db.get_project(context, external_id))

    @classmethod
    @base.remotable
    def get_or_create(cls, context, external_id):
        """The project, created if new; safe against concurrent callers."""
        validate_external_id('project', external_id)
        return cls._from_db_object(
            context, cls(),
            consumer_db.get_or_create_project(context, external_id))
