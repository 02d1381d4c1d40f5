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


class ExternalOwner(base.ResobjObject):
    """A project or user: an identity-service id with a local one.

    Created on first use; ``external_id`` is the identity service's,
    ``id`` this database's. Subclasses name the kind and their DB API.
    """

    fields = {
        'id': fields.IntegerField(read_only=True),
        'external_id': fields.StringField(),
    }

    KIND = None
    _db_get = None
    _db_get_or_create = None

    @classmethod
    @base.remotable
    def get_by_external_id(cls, context, external_id):
        return cls._from_db_object(context, cls(),
                                   cls._db_get(context, external_id))

    @classmethod
    @base.remotable
    def get_or_create(cls, context, external_id):
        """The owner, created if new; safe against concurrent callers."""
        validate_external_id(cls.KIND, external_id)
        return cls._from_db_object(
            context, cls(), cls._db_get_or_create(context, external_id))


@base.ResobjObjectRegistry.register
class Project(ExternalOwner):
    # Version 1.0: initial version
    VERSION = '1.0'

    KIND = 'project'
    _db_get = staticmethod(consumer_db.get_project)
    _db_get_or_create = staticmethod(consumer_db.get_or_create_project)
