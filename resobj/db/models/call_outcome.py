"""The call_outcomes table: what recent keyed conductor calls answered.

A caller that got no answer sends its call again with the same
idempotency key; the row the first run wrote in its own transaction
answers the repeat instead of a second run (resobj/conductor/manager.py).
Rows are purged once older than ``[conductor] call_outcome_retention``.
"""

import datetime

import sqlalchemy as sa
from sqlalchemy import orm

from resobj.db.models import base


class CallOutcome(base.Base):
    __tablename__ = 'call_outcomes'
    __table_args__ = (
        sa.Index('ix_call_outcomes_created_at', 'created_at'),
        base.TABLE_ARGS,
    )

    # The caller's key: a UUID, made once per logical call.
    idempotency_key: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), primary_key=True)
    # "Class.method", for an operator reading the table.
    method: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                                nullable=False)
    # The answer as sent to the caller (JSON of its primitives); NULL
    # only inside the transaction that runs the call.
    answer: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        base.DateTime, nullable=False, default=base.utcnow)
