"""Let reno read a history in which branches that add notes are merged.

When a branch that added a release note is merged with main, the merge
commit differs from one parent by adding the note and from the other by
modifying it. reno 4.1's scanner (``_ChangeAggregator``) accepts a merge
that modifies a note on both sides but raises "Unrecognized changes" for
this pair, which stops every documentation build of this repository (the
merge 2605acf is one). The pair means the note exists with the merge's
content, which is what a modification says, so the addition is dropped
before reno aggregates the changes. Nothing else in reno's scan changes.
"""

from dulwich import diff_tree
from reno import scanner

_ADD_AND_MODIFY = {diff_tree.CHANGE_ADD, diff_tree.CHANGE_MODIFY}


def _merge_additions_as_modifications(aggregate):
    def aggregate_changes(self, walk_entry, changes):
        kept = []
        for change in changes:
            if isinstance(change, list) and \
                    {c.type for c in change} == _ADD_AND_MODIFY:
                change = [c for c in change
                          if c.type == diff_tree.CHANGE_MODIFY]
            kept.append(change)
        return aggregate(self, walk_entry, kept)
    aggregate_changes.resobj_patched = True
    return aggregate_changes


def setup(app):
    current = scanner._ChangeAggregator.aggregate_changes
    if not getattr(current, 'resobj_patched', False):
        scanner._ChangeAggregator.aggregate_changes = \
            _merge_additions_as_modifications(current)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
