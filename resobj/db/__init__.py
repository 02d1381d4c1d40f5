"""The database layer: schema, migrations, engine facade and queries.

Nothing in this package imports ``resobj.objects`` (a unit test checks
it): the DB API takes a context and plain values and returns rows or plain
values, never objects.
"""
