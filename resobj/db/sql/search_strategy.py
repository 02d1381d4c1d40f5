"""The named variants of the candidate search that a backend chooses.

The search's statements are the same on every backend but for a few
choices, each named here and chosen once per backend in the
"Statements" section of ``resobj/db/backends/<backend>.py``
(``candidate_strategy()``), which ``resobj.db.backends.for_dialect``
selects:

* how a set of ids is bound (:class:`IdList`: one parameter per id,
  written into the SQL past :data:`MAX_BOUND_IDS`, or one value the
  database reads as a table);
* how the providers with room are read (:class:`RowPlan`);
* how a window of roots is found (:class:`RootWalk`, and whether the
  rows statement finds it itself: ``Strategy.anchored_window``);
* what the candidate rows tell of childless roots, and whether the
  summaries' provider rows carry the trait names;
* the planner settings of the whole cloud's search.

Nothing here runs a statement.
"""

import enum
import typing

import sqlalchemy as sa

# Above this many ids a list is written into the SQL rather than bound
# one parameter per id (MySQL, and SQLite without JSON functions, whose
# limit is 32,766 parameters).
MAX_BOUND_IDS = 30000


class IdList:
    """How a statement takes a set of ids bound as one parameter name.

    :meth:`value` is what to bind for the ids; :meth:`contains` the test
    of a column against them; :meth:`table` the ids as a one-column
    table of ``value``, or None when they are bound as a list.
    """

    def fitting(self, ids):
        """The IdList to use for ``ids`` (itself, or one for many ids)."""
        return self

    def value(self, ids):
        """The bound value of the ids, sorted."""
        return sorted(ids)

    def table(self, name):
        """The ids bound as ``name`` as a table of ``value``; or None."""
        return None

    def contains(self, column, name):
        """``column`` is one of the ids bound as ``name``."""
        table = self.table(name)
        if table is None:
            return column.in_(sa.bindparam(name, expanding=True))
        return column.in_(sa.select(table.c.value))


class BoundIds(IdList):
    """One parameter per id, written into the SQL past MAX_BOUND_IDS."""

    def __repr__(self):
        return '<BoundIds>'

    def fitting(self, ids):
        return INLINE_IDS if len(ids) > MAX_BOUND_IDS else self


class InlineIds(IdList):
    """The ids written into the SQL text (too many to bind)."""

    def __repr__(self):
        return '<InlineIds>'

    def contains(self, column, name):
        return column.in_(sa.bindparam(name, expanding=True,
                                       literal_execute=True))


BOUND_IDS = BoundIds()
INLINE_IDS = InlineIds()


class RowPlan(enum.Enum):
    """How the providers with room for each (group, class) are read.

    ``PER_PROVIDER``: one row per provider, its inventory of each class
    joined through the unique index, for planners without statistics
    (SQLite), which otherwise find each provider once per class.
    ``INVENTORY_PIVOT``: one pass over the inventories per group,
    grouped by provider, each class in its slot through a CASE; in a
    window of listed roots, one statement per (group, class), merged.
    """

    PER_PROVIDER = 'per provider'
    INVENTORY_PIVOT = 'inventory pivot'


class RootWalk(enum.Enum):
    """How the statement of a window's roots walks the roots.

    ``PLAIN``: the roots in id order, each tested by EXISTS; a planner
    by rules (SQLite) walks the table by id and stops at the limit.
    ``FENCED``: the roots come from a subquery in id order behind an
    ``OFFSET 0`` fence and each EXISTS is fenced too, so that a planner
    with statistics (PostgreSQL, MySQL) tests root by root up to the
    limit instead of turning the tests into joins over every provider.
    """

    PLAIN = 'plain'
    FENCED = 'fenced'


class Strategy(typing.NamedTuple):
    """One backend's choices for the candidate search."""

    # How the providers with room are read.
    rows: RowPlan
    # How the roots of a window are found.
    root_walk: RootWalk
    # Without sharing providers, the rows statement finds the window's
    # roots itself (every root found has a row): one statement, not two.
    # Needs RowPlan.INVENTORY_PIVOT.
    anchored_window: bool
    # The rows tell a childless root's uuid, inventory count and traits,
    # so that its summary needs no statement. PER_PROVIDER rows always do.
    describes_lone_roots: bool
    # How the roots of a window (at most ``limit`` ids) are bound.
    window_ids: IdList
    # How the id sets of the summaries (up to every root) are bound,
    # before IdList.fitting.
    summary_ids: IdList
    # The summaries' provider rows carry the trait names (a row per
    # trait, joined by the DB API), so that no statement of traits runs.
    summary_traits_inline: bool
    # SQL run before (first) and after (second) the whole cloud's rows
    # statement, or None.
    whole_cloud_settings: typing.Optional[typing.Tuple[str, str]] = None

    def summary_id_set(self, ids):
        """(IdList, bound value) of the id set ``ids`` for the summaries."""
        id_list = self.summary_ids.fitting(ids)
        return id_list, id_list.value(ids)
