"""Why a candidate request finds no (or few) candidates: the transaction.

The steps and their statements are the search's
(:mod:`resobj.search.explain`); this module looks the request's names up
as the search does, runs those statements in one read transaction and
counts the search's own candidates.
"""

import functools

from resobj.db.api import allocation_candidate as ac_db
from resobj.db.api import utils
from resobj.db import facade
from resobj.db.sql import resource_provider as sql
from resobj.search import explain as search_explain
from resobj.search import request as search_request
from resobj.search.statements import lookups


def _names(context, groups, root_required, root_forbidden):
    """The search_explain.Names of the request: ids, trees, sharers.

    The names and the sharing providers as the search reads them (see
    ``lookups.names_and_sharing``).
    """
    found = {'rc': {}, 'trait': {}}
    sharing = set()
    for kind, name, row_id, _root_id in utils.execute(
            context, lookups.names_and_sharing(False),
            {'classes': sorted(search_request.class_names(groups)),
             'traits': sorted(search_request.trait_names(
                 groups, root_required, root_forbidden)),
             'sharing_trait': sql.SHARING_TRAIT}).all():
        if kind == 'served':
            sharing.add(row_id)
        else:
            found[kind][name] = row_id
    uuids = sorted({g.in_tree for g in groups if g.in_tree is not None})
    roots = dict(utils.execute(context, lookups.provider_roots(),
                               {'uuids': uuids}).all()) if uuids else {}
    return search_explain.Names(
        found['rc'], found['trait'],
        {uuid: roots.get(uuid) for uuid in uuids}, frozenset(sharing))


@facade.reader
def explain(context, groups, root_required=frozenset(),
            root_forbidden=frozenset(), same_subtree=(), group_policy=None,
            closest=3):
    """Where the providers of a candidate request drop out.

    ``groups`` and the other arguments as for
    ``allocation_candidate.get_candidates``; ``closest``: how many
    providers to name for a group that no provider passes. Returns
    {'groups': [{'suffix', 'steps': [{'step', 'passing'}], 'trees',
    'sharing', 'first_empty', 'closest'}], 'steps': [{'step',
    'passing'}] (the request's, from the trees to the candidates),
    'first_empty': the first step of all (as "group: step", or the
    request's step) that no provider, tree or candidate passes, or None,
    'candidates': how many the search finds}. Unknown class, trait or
    in_tree names are steps no provider passes, not errors.
    """
    names = _names(context, groups, root_required, root_forbidden)
    unknown = search_explain.unknown_steps(groups, root_required,
                                           root_forbidden, names)
    if unknown:
        return {'groups': [], 'steps': unknown,
                'first_empty': unknown[0]['step'], 'candidates': 0}
    request = search_explain.bound(groups, root_required, root_forbidden,
                                   names)
    run = functools.partial(utils.execute, context)
    explained, every_tree = search_explain.explain_groups(
        run, request, root_required, root_forbidden,
        {rc_id: name for name, rc_id in names.rc_ids.items()}, closest)
    count = functools.partial(_search_count, context, request.groups,
                              root_required, root_forbidden)
    steps, found = search_explain.request_steps(
        run, request, every_tree, count, same_subtree, group_policy)
    return {'groups': explained, 'steps': steps,
            'first_empty': search_explain.first_empty(explained, steps),
            'candidates': found}


def _search_count(context, groups, root_required, root_forbidden,
                  same_subtree, group_policy):
    """How many candidates the search finds (sharing providers too)."""
    if not any(g.resources for g in groups):
        return 0
    found = ac_db.get_candidates(
        context, groups, group_policy=group_policy,
        root_required=root_required, root_forbidden=root_forbidden,
        same_subtree=search_explain.searched_subtrees(groups,
                                                      same_subtree))
    return len(found['allocation_requests'])
