"""User: the user a consumer was created for, by identity-service id.

Users are created on first use (:meth:`User.get_or_create`); the
``external_id`` is the identity service's, ``id`` is this database's.
"""

from resobj.db.api import consumer as consumer_db
from resobj.objects import base
from resobj.objects import project


@base.ResobjObjectRegistry.register
class User(project.ExternalOwner):
    # Version 1.0: initial version
    VERSION = '1.0'

    KIND = 'user'
    _db_get = staticmethod(consumer_db.get_user)
    _db_get_or_create = staticmethod(consumer_db.get_or_create_user)
