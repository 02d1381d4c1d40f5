"""Query helpers shared by the per-noun DB API modules.

These run inside the caller's transaction (``context.session``), so they
are called only from decorated DB API functions.
"""

import functools
import operator

from oslo_db import exception as db_exc
from oslo_serialization import jsonutils
import sqlalchemy as sa

from resobj.db import facade
from resobj.db.models import base
from resobj.db import precompile


def execute(context, statement, params=None):
    """Run a Core ``statement`` in the caller's transaction.

    On the session's connection rather than through ``Session.execute``,
    whose ORM execution context (autoflush, ORM options, per-statement
    events) costs time on every statement and serves nothing here: the
    DB API builds Core statements only and never adds ORM objects to a
    session.
    """
    return context.session.connection().execute(statement, params)


@functools.lru_cache(maxsize=512)
def prepared(statement):
    """``statement``, prepared on its first run on a connection.

    For the statements every search of a shape runs again (see
    resobj.db.backends.postgresql, which honours the mark).
    """
    return statement.execution_options(**{facade.PREPARE_AT_ONCE: True})


def named_rows(result, row_type):
    """Every row of ``result`` as a ``row_type`` (a named tuple), by name.

    Each field of ``row_type`` takes the result's column of that name.
    For the thousands of rows of a search: SQLAlchemy's Row finds a
    column by attribute only after Python's ordinary attribute lookup
    has failed, which costs many times a tuple field's read; a named
    tuple is built from a row at C speed and read like any other.
    """
    keys = list(result.keys())
    fields = list(row_type._fields)
    missing = [field for field in fields if field not in keys]
    if missing:
        # Its cursor would otherwise stay open, unread, until collected:
        # on SQLite that holds a lock on the tables it reads.
        result.close()
        raise ValueError('the rows %s have no column %s' % (keys, missing))
    new = tuple.__new__
    # At once: iterating a result fetches its rows one by one.
    rows = result.all()
    if keys == fields:
        return [new(row_type, row) for row in rows]
    pick = operator.itemgetter(*[keys.index(field) for field in fields])
    if len(fields) == 1:
        return [new(row_type, (pick(row),)) for row in rows]
    return [new(row_type, pick(row)) for row in rows]


def compile_into_cache(context, statement, params):
    """Compile ``statement`` as executing it with ``params`` would.

    Into the compiled cache of the caller's connection, without running
    it: the first execution then finds its SQL ready (see
    :mod:`resobj.db.precompile`). ``params`` are complete values, as for
    a real run. Returns False when the connection caches nothing.
    """
    return precompile.compile_into_cache(context.session.connection(),
                                         statement, params)


def filter_deleted(context, table, stmt):
    """Apply ``context.read_deleted`` to a select on a soft-delete table.

    Tables without a ``deleted`` column (the hard-deleted resource-provider
    tables) are returned unfiltered.
    """
    if 'deleted' not in table.c:
        return stmt
    if context.read_deleted == 'no':
        return stmt.where(table.c.deleted == 0)
    if context.read_deleted == 'only':
        return stmt.where(table.c.deleted != 0)
    return stmt


def fetch_one(context, stmt, params=None):
    """The first row of ``stmt`` as a plain dict, or None."""
    row = execute(context, stmt, params).mappings().first()
    return dict(row) if row is not None else None


def count(context, from_clause, *criteria):
    """How many rows of ``from_clause`` (a table, or a query) match."""
    return execute(context, sa.select(sa.func.count()).select_from(
        from_clause).where(*criteria)).scalar_one()


def fetch_all(context, stmt):
    return [dict(row) for row in execute(context, stmt).mappings()]


def json_or_none(text):
    """A JSON text column's plain value; None for NULL or empty."""
    return jsonutils.loads(text) if text else None


def json_text_or_none(value):
    """A plain value as JSON text for its column; None stays NULL."""
    return None if value is None else jsonutils.dumps(value)


def soft_delete(context, table, *criteria):
    """Soft-delete the live rows matching ``criteria``; return the count.

    ``deleted`` takes the row's own id, which keeps unique constraints that
    include ``deleted`` satisfiable however many times a key is deleted.
    ``updated_at`` is kept: deleting is not an update of the row's data.
    """
    stmt = (
        sa.update(table)
        .where(table.c.deleted == 0, *criteria)
        .values(deleted=table.c.id, deleted_at=base.utcnow(),
                updated_at=table.c.updated_at)
    )
    return execute(context, stmt).rowcount


def select(context, table, *criteria):
    """Select ``table``'s rows matching ``criteria``, per read_deleted."""
    return filter_deleted(context, table, sa.select(table).where(*criteria))


def get_one(context, table, not_found, key, *criteria):
    """The row matching ``criteria``, or raise ``not_found(key=key)``."""
    row = fetch_one(context, select(context, table, *criteria))
    if row is None:
        raise not_found(key=key)
    return row


def insert(context, table, values):
    """Insert one row, stamping ``created_at``; return its id.

    The caller translates DBDuplicateEntry: what is duplicated means
    something different for each noun.
    """
    values = dict(values)
    values.setdefault('created_at', base.utcnow())
    unknown = values.keys() - table.c.keys()
    if unknown:
        # Bound parameters that name no column would be dropped without
        # a word; ``.values()`` refused them, and so does this.
        raise sa.exc.CompileError('Unconsumed column names: %s'
                                  % ', '.join(sorted(unknown)))
    return execute(context, _insert_into(table),
                   values).inserted_primary_key[0]


@functools.cache
def _insert_into(table):
    # One statement per table, the values bound as parameters:
    # ``insert(table).values(...)`` is a new construct on every call,
    # whose cache key costs more CPU than a consumer's whole insert on
    # PostgreSQL, and every claim of a new consumer makes one.
    return sa.insert(table)


def update_live(context, table, values, *criteria):
    """Update the live rows matching ``criteria``, stamping ``updated_at``.

    Returns how many rows changed; 0 means none was live (deleted, or
    never there). On a table without soft delete every row is live.
    """
    values = dict(values)
    values.setdefault('updated_at', base.utcnow())
    if 'deleted' in table.c:
        criteria = (table.c.deleted == 0,) + criteria
    return execute(
        context,
        sa.update(table).where(*criteria).values(values)).rowcount


def soft_delete_row(context, table, row_id):
    """Soft-delete live row ``row_id``; return it as deleted, or None."""
    if not soft_delete(context, table, table.c.id == row_id):
        return None
    return fetch_one(context, sa.select(table).where(table.c.id == row_id))


def insert_missing(context, table, rows):
    """Insert ``rows``, skipping any a concurrent writer inserted first.

    One multi-row insert normally; if that hits a duplicate, the rows go
    one by one, each in a savepoint so the transaction stays usable.
    Returns how many rows this call inserted.
    """
    if not rows:
        return 0
    try:
        with context.session.begin_nested():
            execute(context, sa.insert(table), rows)
        return len(rows)
    except db_exc.DBDuplicateEntry:
        pass
    added = 0
    for row in rows:
        try:
            with context.session.begin_nested():
                execute(context, sa.insert(table).values(row))
            added += 1
        except db_exc.DBDuplicateEntry:
            pass
    return added


def ids_by_names(context, table, names, not_found, every=False,
                 in_order=False):
    """{name: id} for ``names``, in one query however many there are.

    Raises ``not_found(name=...)`` for the first unknown name, in name
    order, or with ``in_order`` in the order of ``names``; with
    ``every``, ``name`` is every unknown name, in that order, joined by
    ", ".
    """
    ordered = list(dict.fromkeys(names)) if in_order else sorted(set(names))
    found = dict(execute(
        context,
        sa.select(table.c.name, table.c.id).where(
            table.c.name.in_(sorted(ordered)))).all()) if ordered else {}
    unknown = [name for name in ordered if name not in found]
    if unknown:
        raise not_found(name=', '.join(unknown) if every else unknown[0])
    return found
