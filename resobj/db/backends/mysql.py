"""MySQL and MariaDB: what resobj does differently on this backend."""

import functools

from resobj.search import strategy as search_strategy

NAME = 'mysql'


# Connections ---------------------------------------------------------
#
# How a new engine and its connections are set up; used by
# resobj.db.facade.configure.


# Statements ----------------------------------------------------------
#
# How id lists are bound and which statement variants the candidate
# search and the DB API use on this backend.

@functools.lru_cache(maxsize=1)
def candidate_strategy():
    """The candidate search on MySQL and MariaDB (resobj.search.strategy).

    Inventories are read in one pass per group, grouped by provider; a
    window's roots are found root by root behind OFFSET fences, then
    its rows by one statement per (group, class). Ids are bound one
    parameter each (written into the SQL past MAX_BOUND_IDS); trees
    are summarised by their own statements.
    """
    return search_strategy.Strategy(
        rows=search_strategy.RowPlan.INVENTORY_PIVOT,
        root_walk=search_strategy.RootWalk.FENCED,
        anchored_window=False,
        describes_lone_roots=False,
        window_ids=search_strategy.BOUND_IDS,
        summary_ids=search_strategy.BOUND_IDS,
        summary_traits_inline=False)
