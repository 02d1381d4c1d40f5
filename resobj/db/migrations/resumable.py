"""MySQL/MariaDB: a schema sync cut short can be completed by running it again.

MySQL commits every DDL statement on its own, so a ``db sync`` killed in
the middle of a migration leaves that migration half done while the
schema's revision still names the one before: the next sync runs the
migration again from its start, and its first ``CREATE TABLE`` of a
table that exists fails. On MySQL the migrations' DDL is therefore made
to check first (:func:`make_resumable`): a table, index or column that
exists is not created again, one that is gone is not dropped again, and
a trigger is created only if it does not exist. The data statements of
the migrations compute their result from scratch, so running them again
is harmless. PostgreSQL and SQLite roll a failed migration back
whole, and their DDL is left as it is.
"""

import re
import weakref

from alembic import operations as alembic_operations
from alembic.operations import ops
from alembic.operations import toimpl
import sqlalchemy as sa

# MariaDB 10.1.4 and MySQL 8.0.29 know CREATE TRIGGER IF NOT EXISTS.
_CREATE_TRIGGER = re.compile(r'^\s*CREATE\s+TRIGGER\s+(?!IF\s)', re.I)

# The migration contexts whose DDL skips what is done.
_resumable = weakref.WeakSet()


def make_resumable(migration_context):
    """Make ``migration_context``'s DDL skip what is done, on MySQL only.

    Its table, index and column operations check the schema first (see
    the implementations below), and its CREATE TRIGGER statements get
    IF NOT EXISTS. Returns a function that undoes both.
    """
    connection = migration_context.connection
    if connection.dialect.name != 'mysql':
        return lambda: None
    _resumable.add(migration_context)

    def _rewrite(conn, cursor, statement, parameters, context, many):
        return _CREATE_TRIGGER.sub('CREATE TRIGGER IF NOT EXISTS ',
                                   statement), parameters

    sa.event.listen(connection, 'before_cursor_execute', _rewrite,
                    retval=True)

    def undo():
        _resumable.discard(migration_context)
        sa.event.remove(connection, 'before_cursor_execute', _rewrite)
    return undo


# alembic's documented way to change what a built-in operation does
# (``Operations.implementation_for(..., replace=True)``, its own
# implementation called from alembic.operations.toimpl). The replacement
# holds for every migration context of the process; the contexts resobj
# did not make resumable get alembic's own.

def _inspector(operations):
    # A fresh one each time: an inspector caches what it read.
    return sa.inspect(operations.migration_context.connection)


def _index_names(operations, table):
    found = _inspector(operations)
    if not found.has_table(table):
        return set()
    return {index['name'] for index in found.get_indexes(table)}


def _column_names(operations, table):
    return {column['name']
            for column in _inspector(operations).get_columns(table)}


def _table_exists(operations, operation):
    return _inspector(operations).has_table(operation.table_name)


def _index_exists(operations, operation):
    index = operation.to_index(operations.migration_context)
    return index.name in _index_names(operations, index.table.name)


def _column_exists(operations, operation):
    column = operation.column
    if column.foreign_keys or column.index or column.unique:
        # alembic adds these after the column, in the same operation: a
        # rerun that skipped the column would skip them too.
        raise NotImplementedError(
            'On MySQL, add the foreign keys and indexes of column %s.%s '
            'with operations of their own (op.create_index...), which an '
            'interrupted sync can resume'
            % (operation.table_name, column.name))
    return column.name in _column_names(operations, operation.table_name)


def _column_gone(operations, operation):
    return operation.column_name not in _column_names(
        operations, operation.table_name)


def _the_table(operations, operation):
    # What alembic's create_table returns (a migration may bulk_insert
    # into it).
    return operation.to_table(operations.migration_context)


def _resumable_as(op_class, original, done, skipped=lambda *args: None):
    """``op_class`` runs ``original`` unless ``done`` says it took effect.

    Then it returns what ``skipped`` does, as ``original`` would have.
    """
    @alembic_operations.Operations.implementation_for(op_class,
                                                      replace=True)
    def implementation(operations, operation):
        if (operations.migration_context in _resumable
                and done(operations, operation)):
            return skipped(operations, operation)
        return original(operations, operation)
    return implementation


_resumable_as(ops.CreateTableOp, toimpl.create_table, _table_exists,
              skipped=_the_table)
_resumable_as(ops.DropTableOp, toimpl.drop_table,
              lambda *args: not _table_exists(*args))
_resumable_as(ops.CreateIndexOp, toimpl.create_index, _index_exists)
_resumable_as(ops.DropIndexOp, toimpl.drop_index,
              lambda *args: not _index_exists(*args))
_resumable_as(ops.AddColumnOp, toimpl.add_column, _column_exists)
_resumable_as(ops.DropColumnOp, toimpl.drop_column, _column_gone)
