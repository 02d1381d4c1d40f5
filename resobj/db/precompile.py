"""Compiling a statement into its engine's cache without running it.

SQLAlchemy compiles a statement into the engine's compiled cache when it
executes it, and in no other public way. So the statement is executed,
through every step SQLAlchemy takes, up to the driver's ``execute``,
which a ``do_execute`` hook (:func:`skip_compile_only`) takes over and
skips: SQLAlchemy's documented way for a hook to say that it ran the
cursor itself. The cursor ran nothing and describes no rows, so the
result holds none and SQLAlchemy caches no description of its rows; the
next real execution finds the compiled SQL in the cache and describes
its rows from its own cursor.
"""

import sqlalchemy as sa

# The execution option of an execution that only compiles its statement.
COMPILE_ONLY = 'resobj_compile_only'


def skip_compile_only(engine):
    """Have ``engine`` run nothing for executions marked COMPILE_ONLY.

    Call before any other ``do_execute`` hook is set on ``engine``
    (PostgreSQL's prepares marked statements in one): hooks run in the
    order they were set, and the first that says it ran the cursor ends
    the chain.
    """
    sa.event.listen(engine, 'do_execute', _skip_if_compile_only)


def _skip_if_compile_only(cursor, statement, parameters, context):
    # True: the cursor's execution "has taken place"; None: go on.
    return context.execution_options.get(COMPILE_ONLY) or None


def compile_into_cache(connection, statement, params):
    """Compile ``statement`` into ``connection``'s cache, running nothing.

    Under the key that an execution with ``params`` (complete values, as
    for a real run) looks up: the next execution finds its SQL ready.
    ``connection``'s engine must skip COMPILE_ONLY executions
    (:func:`skip_compile_only`; RuntimeError otherwise). Returns False
    when the connection has no compiled cache (its ``compiled_cache``
    execution option is None).
    """
    if not sa.event.contains(connection.engine, 'do_execute',
                             _skip_if_compile_only):
        # It would run the statement.
        raise RuntimeError('the engine does not skip compile-only '
                           'executions (see skip_compile_only)')
    options = dict(statement.get_execution_options())
    options.update(connection.get_execution_options())
    if 'compiled_cache' in options and options['compiled_cache'] is None:
        return False
    connection.execute(statement, params,
                       execution_options={COMPILE_ONLY: True}).close()
    return True
