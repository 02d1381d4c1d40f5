"""PostgreSQL: what resobj does differently on this backend."""

import functools

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from resobj.search import strategy as search_strategy

NAME = 'postgresql'


# Connections ---------------------------------------------------------
#
# How a new engine and its connections are set up; used by
# resobj.db.facade.configure.


# Statements ----------------------------------------------------------
#
# How id lists are bound and which statement variants the candidate
# search and the DB API use on this backend.

class _ArrayIds(search_strategy.IdList):
    """Ids as one array, bound as its text and read by ``unnest``.

    The text ('{1,2,3}'), which the statement casts: psycopg adapts a
    Python list item by item. A table, not ``= ANY(array)``: PostgreSQL
    hashes the array of an ANY only when it is a constant, and a
    prepared statement's parameter is not one. One array, not a
    parameter per id: past 50 parameters psycopg no longer caches a
    statement's conversion to its own placeholders.
    """

    def __repr__(self):
        return '<ArrayIds>'

    def value(self, ids):
        return '{%s}' % ','.join(map(str, sorted(ids)))

    def table(self, name):
        return sa.func.unnest(sa.cast(
            sa.bindparam(name, type_=sa.String),
            postgresql.ARRAY(sa.Integer))).table_valued(
                'value').render_derived()


ARRAY_IDS = _ArrayIds()


@functools.lru_cache(maxsize=1)
def candidate_strategy():
    """The candidate search on PostgreSQL (see resobj.search.strategy).

    Inventories are read in one pass per group, grouped by provider; a
    window's roots are found root by root behind OFFSET 0 fences, by
    the rows statement itself when no sharing provider may serve them.
    The rows describe childless roots and the summaries' providers
    carry their traits, so that a flat cloud's summaries take no
    statement. The whole cloud's rows statement runs without nested
    loops: PostgreSQL cannot estimate how many inventories pass the
    capacity test (an expression over several columns), guesses a
    handful, and would otherwise compare every provider with every
    inventory.
    """
    return search_strategy.Strategy(
        rows=search_strategy.RowPlan.INVENTORY_PIVOT,
        root_walk=search_strategy.RootWalk.FENCED,
        anchored_window=True,
        describes_lone_roots=True,
        window_ids=ARRAY_IDS,
        summary_ids=ARRAY_IDS,
        summary_traits_inline=True,
        whole_cloud_settings=('SET enable_nestloop = off',
                              'RESET enable_nestloop'))
