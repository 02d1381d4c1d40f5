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

import sqlalchemy as sa

# MariaDB 10.1.4 and MySQL 8.0.29 know CREATE TRIGGER IF NOT EXISTS.
_CREATE_TRIGGER = re.compile(r'^\s*CREATE\s+TRIGGER\s+(?!IF\s)', re.I)


def make_resumable(migration_context):
    """Make ``migration_context``'s DDL skip what is done, on MySQL only.

    Wraps the methods of the context's DDL implementation
    (``migration_context.impl``, alembic's ``DefaultImpl``) that the
    migrations use; returns a function that undoes the trigger rewrite.
    """
    connection = migration_context.connection
    if connection.dialect.name != 'mysql':
        return lambda: None
    impl = migration_context.impl

    def inspector():
        # A fresh one each time: an inspector caches what it read.
        return sa.inspect(connection)

    def index_names(table):
        found = inspector()
        if not found.has_table(table):
            return set()
        return {i['name'] for i in found.get_indexes(table)}

    def column_names(table):
        return {c['name'] for c in inspector().get_columns(table)}

    def skip_if(done, method):
        def checked(*args, **kwargs):
            if not done(*args, **kwargs):
                method(*args, **kwargs)
        return checked

    impl.create_table = skip_if(
        lambda table, **kw: inspector().has_table(table.name),
        impl.create_table)
    impl.drop_table = skip_if(
        lambda table, **kw: not inspector().has_table(table.name),
        impl.drop_table)
    impl.create_index = skip_if(
        lambda index, **kw: index.name in index_names(index.table.name),
        impl.create_index)
    impl.drop_index = skip_if(
        lambda index, **kw: index.name not in index_names(index.table.name),
        impl.drop_index)
    impl.add_column = skip_if(
        lambda table, column, **kw: column.name in column_names(table),
        impl.add_column)
    impl.drop_column = skip_if(
        lambda table, column, **kw: column.name not in column_names(table),
        impl.drop_column)

    def _rewrite(conn, cursor, statement, parameters, context, many):
        return _CREATE_TRIGGER.sub('CREATE TRIGGER IF NOT EXISTS ',
                                   statement), parameters

    sa.event.listen(connection, 'before_cursor_execute', _rewrite,
                    retval=True)
    return lambda: sa.event.remove(connection, 'before_cursor_execute',
                                   _rewrite)
