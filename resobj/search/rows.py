"""The candidate rows' columns, by name.

The rows of :mod:`resobj.search.statements.rows` are read by position,
the fastest way through thousands of rows, but the positions come from
the statement's column names, once per statement: no code counts
columns.
"""

import typing


class Slot(typing.NamedTuple):
    """Where one class's figures are in a candidate row."""

    capacity: int
    used: int
    max_unit: int


class RowLayout(typing.NamedTuple):
    """Where each column is in a candidate row.

    ``lone``: where the (uuid, inventories, traits) of a childless root
    start, or None when the rows do not describe childless roots.
    """

    group: int
    provider: int
    root: int
    slots: typing.Tuple[Slot, ...]
    lone: typing.Optional[int]

    @classmethod
    def of(cls, names):
        """The layout of rows with the column ``names``, in order."""
        index = {name: n for n, name in enumerate(names)}
        slots = []
        while 'capacity_%d' % len(slots) in index:
            n = len(slots)
            slots.append(Slot(index['capacity_%d' % n], index['used_%d' % n],
                              index['max_unit_%d' % n]))
        lone = None
        if 'uuid' in index:
            lone = index['uuid']
            # LoneRoot's fields, in its order, follow one another.
            if [index.get(name) for name in LoneRoot._fields] != \
                    list(range(lone, lone + len(LoneRoot._fields))):
                raise ValueError('the rows %s do not describe lone roots '
                                 'in order' % list(names))
        return cls(index['grp'], index['id'], index['root_provider_id'],
                   tuple(slots), lone)

    @classmethod
    def of_statement(cls, statement):
        return cls.of(list(statement.selected_columns.keys()))


class LoneRoot(typing.NamedTuple):
    """A root without children, as the candidate rows describe it."""

    uuid: str
    # Its number of inventories.
    lone: int
    # Its trait names joined by commas, or None.
    traits: typing.Optional[str]

    def trait_list(self):
        return trait_names(self.traits)


def trait_names(joined):
    """The sorted trait names of a row's comma-joined ``joined``.

    The candidate rows and the summaries' provider rows carry a
    provider's trait names aggregated into one text, or None for none.
    """
    return sorted(joined.split(',')) if joined else []
