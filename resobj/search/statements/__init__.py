"""The candidate search's SQL: SQLAlchemy Core statements, built, not run.

Each function builds the statement of one step for a request *shape*
(:mod:`resobj.search.request`) and a backend's
:class:`resobj.db.sql.search_strategy.Strategy`, and is cached per process:
building a statement and its cache key costs more than running it on a
small cloud, and SQLAlchemy's compiled cache then serves its SQL text
too. Only the DB API (``resobj/db/api/allocation_candidate.py``) runs
them.

* :mod:`.clauses`: the per-provider conditions every step shares;
* :mod:`.lookups`: names to ids, sharing providers, trait links,
  resourceless groups' providers, tree parents;
* :mod:`.anchors`: the first roots of a window;
* :mod:`.rows`: the providers with room for each (group, class);
* :mod:`.summaries`: the summaries of the trees used.
"""
