"""SQLite (the embedded default): what resobj does differently on it."""

import functools
import json
import sqlite3

import sqlalchemy as sa

from resobj.search import strategy as search_strategy

NAME = 'sqlite'


# Connections ---------------------------------------------------------
#
# How a new engine and its connections are set up; used by
# resobj.db.facade.configure.


# Statements ----------------------------------------------------------
#
# How id lists are bound and which statement variants the candidate
# search and the DB API use on this backend.

class _JsonIds(search_strategy.IdList):
    """Ids as one JSON text, read as a table by ``json_each``.

    Bound one parameter per id, SQLAlchemy renders a placeholder per id
    on every call and SQLite parses them all; a summary may name every
    root of the cloud.
    """

    def __repr__(self):
        return '<JsonIds>'

    def value(self, ids):
        return json.dumps(sorted(ids))

    def table(self, name):
        return sa.func.json_each(
            sa.bindparam(name, type_=sa.String)).table_valued('value')


JSON_IDS = _JsonIds()


@functools.lru_cache(maxsize=1)
def has_json():
    """Whether the SQLite library of this process has JSON functions.

    The sqlite3 module links one SQLite library per process, the one
    the engine uses; JSON functions are built in from SQLite 3.38 and
    in most builds before.
    """
    try:
        sqlite3.connect(':memory:').execute(
            "SELECT value FROM json_each('[1]')").fetchall()
    except sqlite3.Error:
        return False
    return True


@functools.lru_cache(maxsize=1)
def candidate_strategy():
    """The candidate search on SQLite (see resobj.search.strategy).

    SQLite plans by rules, without statistics: providers are read one
    row each with their inventories joined through the unique index,
    and a window's roots are walked by id up to the limit. A window's
    few roots are bound one parameter each; the summaries' id sets,
    which may name every root, as one JSON text.
    """
    return search_strategy.Strategy(
        rows=search_strategy.RowPlan.PER_PROVIDER,
        root_walk=search_strategy.RootWalk.PLAIN,
        anchored_window=False,
        describes_lone_roots=True,
        window_ids=search_strategy.BOUND_IDS,
        summary_ids=JSON_IDS if has_json() else search_strategy.BOUND_IDS,
        summary_traits_inline=False)
