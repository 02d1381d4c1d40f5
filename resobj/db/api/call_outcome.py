"""Queries on the call_outcomes table: answers of recent keyed calls.

The conductor runs a keyed call and records its answer in one
transaction: :func:`begin` first (a repeat of a call in progress waits
on the key's row, and fails once the first commits), then the call,
then :func:`finish`. A call either committed its effect and its answer
together or left neither. Values are plain: the key, the method's name
and the answer as JSON text.
"""

import datetime

from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import base as models_base
from resobj.db.models import call_outcome as models
from resobj import exception

_TABLE = models.CallOutcome.__table__


@facade.owning_writer
def run_recorded(context, key, method, run):
    """Run ``run()`` once for ``key`` and record its answer, atomically.

    One transaction holds :func:`begin`, whatever ``run()`` writes
    through the DB API with ``context`` (its writers join it) and
    :func:`finish` with the JSON text ``run()`` returns, which this
    returns too. CallOutcomeExists when a committed call had ``key``:
    nothing of this run is kept. A deadlock, a conflict a writer inside
    would have retried or a Prerequisite runs it all again in a fresh
    transaction (facade.owning_writer), so ``run`` must start from
    scratch each time it is called.
    """
    begin(context, key, method)
    answer = run()
    finish(context, key, answer)
    return answer


@facade.writer
def begin(context, key, method):
    """Take ``key`` for a call of ``method`` in the caller's transaction.

    Meant as the first statement of the transaction that runs the call:
    CallOutcomeExists when a committed call had the key. A concurrent
    transaction holding the key makes this wait until it ends (and fail
    if it committed).
    """
    try:
        utils.execute(context, sa.insert(_TABLE).values(
            idempotency_key=key, method=method,
            created_at=models_base.utcnow()))
    except db_exc.DBDuplicateEntry:
        raise exception.CallOutcomeExists(key=key)


@facade.writer
def finish(context, key, answer):
    """Store ``answer`` (JSON text) for ``key``, taken by :func:`begin`."""
    count = utils.execute(context, sa.update(_TABLE).where(
        _TABLE.c.idempotency_key == key).values(answer=answer)).rowcount
    if not count:
        raise exception.ObjectActionError(
            action='record call outcome',
            reason='key %s was not taken in this transaction' % key)


@facade.reader
def get_answer(context, key):
    """The answer (JSON text) recorded for ``key``; None if none is."""
    return utils.execute(context, sa.select(_TABLE.c.answer).where(
        _TABLE.c.idempotency_key == key)).scalar_one_or_none()


@facade.writer
def purge(context, older_than):
    """Delete the outcomes recorded more than ``older_than`` seconds ago.

    Returns how many were deleted.
    """
    cutoff = models_base.utcnow() - datetime.timedelta(seconds=older_than)
    return utils.execute(context, sa.delete(_TABLE).where(
        _TABLE.c.created_at < cutoff)).rowcount
