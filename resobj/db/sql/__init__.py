"""Table-level SQL: expressions and statements over the schema.

The layer between the schema (``resobj.db.models``) and everything that
builds on it: the provider filters and the capacity rule
(``resource_provider``), the allocation write path's statements
(``allocation``) and the variants of the candidate search a backend
chooses (``search_strategy``). Nothing here runs a statement, and
nothing here imports more of resobj than the schema and this package;
the candidate search (``resobj.search``) and the DB API
(``resobj.db.api``) sit above it (contributor/architecture.rst).
"""
