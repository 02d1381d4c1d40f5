"""Which services run an old service version, and which of them are up.

For ``resobj-status upgrade check``: a service that stopped reporting no
longer holds the cloud back, one that still reports does.
"""

import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import service as models

_TABLE = models.Service.__table__


def _live(seen_since):
    """A service reported at or after ``seen_since`` and is not forced down.

    One that never reported (no ``last_seen_up``) is live: it runs code
    from before services reported, nothing tells whether it is alive, and
    Service.get_minimum_version counts it the same way, so that this
    check and the cloud's version gate never disagree.
    """
    return sa.type_coerce(
        sa.case((sa.and_(sa.or_(_TABLE.c.last_seen_up.is_(None),
                                _TABLE.c.last_seen_up >= seen_since),
                         _TABLE.c.forced_down == sa.false()), 1),
                else_=0),
        sa.Boolean)


@facade.reader
def older_than(context, version, seen_since):
    """The services below service version ``version``, live or not.

    Rows with ``binary``, ``host``, ``version``, ``last_seen_up`` and
    ``live`` (see :func:`_live`; ``seen_since`` is naive UTC), of every
    service not deleted whose version is below ``version``, oldest version
    first, then by binary and host.
    """
    return utils.execute(
        context,
        sa.select(_TABLE.c.binary, _TABLE.c.host, _TABLE.c.version,
                  _TABLE.c.last_seen_up, _live(seen_since).label('live'))
        .where(_TABLE.c.deleted == 0, _TABLE.c.version < version)
        .order_by(_TABLE.c.version, _TABLE.c.binary, _TABLE.c.host)).all()
