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

    One that never reported (no ``last_seen_up``) counts from its row's
    last update, or its creation: a service that has just registered is
    up until it has had the time to report.
    """
    seen = sa.func.coalesce(_TABLE.c.last_seen_up, _TABLE.c.updated_at,
                            _TABLE.c.created_at)
    # CASE rather than the bare comparison: a row without any timestamp
    # compares as NULL, which is "not live", not unknown.
    return sa.type_coerce(
        sa.case((sa.and_(seen >= seen_since,
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
