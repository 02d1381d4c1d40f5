"""The allocation candidate search, apart from running its statements.

* :mod:`.request`: the request groups and their checks, the request's
  shape and bound values;
* :mod:`.strategy`: the named variants a database backend chooses
  (``resobj/db/backends/<backend>.py``, "Statements");
* :mod:`.statements`: the SQL, built per shape and strategy;
* :mod:`.rows`: the candidate rows' columns by name;
* :mod:`.combine`: the rows combined into requests per tree root;
* :mod:`.shapes`: the answer's requests and summaries.

Only the DB API (``resobj/db/api/allocation_candidate.py``) runs the
statements, in one reader transaction; see
doc/source/contributor/candidates.rst.
"""
