"""The provider summaries of an allocation candidate search.

Part of :func:`resobj.db.api.allocation_candidate.get_candidates`,
whose reader transaction they join: the providers of the trees the requests
use (also the parents a ``same_subtree`` search needs), and their
summaries, each inventory and trait read at most once: what the
candidate rows carry already is not read again. The statements are
:mod:`resobj.search.statements.summaries`, bound as the backend's
strategy says (``summary_ids``, ``summary_traits_inline``).
"""

import bisect
import collections

from resobj.db.api import trait as trait_db
from resobj.db.api import utils
from resobj.db import facade
from resobj.search import rows as search_rows
from resobj.search.statements import summaries as summary_statements


@facade.reader
def summaries(context, strategy, root_ids, figures, childless_roots,
              trees=None):
    """Summaries of every provider in the trees of ``root_ids``.

    The providers and their inventory counts, then only the inventories
    that ``figures`` (the candidate rows' {rp_id: {class name:
    {'capacity', 'used'}}}, whose dicts become the summaries' own) does
    not hold, then the traits. ``childless_roots``: {root id: (uuid,
    inventories, traits)} of roots without children, from the candidate
    rows, in ``resobj.search.rows.LoneRoot``'s order: such a tree whose
    inventories ``figures`` holds all of is not read again (a flat
    cloud's every tree, whose summaries then take no statement at all).
    ``trees``: {root id: [ProviderRow]} of the trees whose providers
    were read already (see :func:`tree_providers`). Returns ({uuid:
    summary dict}, {rp_id: uuid}): the second names every provider of
    those trees, hence every provider of the requests.
    """
    summaries, traits_of, uuids, rest = {}, {}, {}, []
    for root_id in root_ids:
        found = childless_roots.get(root_id)
        resources = figures.get(root_id)
        if found is None or resources is None:
            rest.append(root_id)
            continue
        uuid, inventories, traits = found
        if len(resources) != inventories:
            rest.append(root_id)
            continue
        uuids[root_id] = uuid
        summaries[uuid] = {
            'resources': resources,
            'traits': search_rows.trait_names(traits),
            'parent_provider_uuid': None, 'root_provider_uuid': uuid}
    if not rest:
        return _customs_last(context, summaries), uuids
    id_list, roots = strategy.summary_id_set(rest)
    values = {'roots': roots}
    with_traits = strategy.summary_traits_inline
    trees = trees or {}
    rows = [row for root_id in rest for row in trees.get(root_id, ())]
    unread = [root_id for root_id in rest if root_id not in trees]
    if unread:
        for found in tree_providers(context, strategy, unread).values():
            rows += found
    uuids.update((row.id, row.uuid) for row in rows)
    missing = []
    for row in rows:
        resources = figures.get(row.id)
        if resources is None:
            resources = {}
        if len(resources) != row.inventories:
            missing.append(row.id)
        traits_of[row.id] = traits = search_rows.trait_names(row.names)
        summaries[row.uuid] = {
            'resources': resources, 'traits': traits,
            'parent_provider_uuid': uuids.get(row.parent_provider_id),
            'root_provider_uuid': uuids[row.root_provider_id]}
    if missing:
        read = {rp_id: {} for rp_id in missing}
        missing_ids, ids = strategy.summary_id_set(missing)
        for rp_id, name, capacity, used in utils.execute(
                context, utils.prepared(summary_statements.inventories(
                    missing_ids)), {'ids': ids}).all():
            read[rp_id][name] = {'capacity': int(capacity),
                                 'used': int(used)}
        for rp_id, resources in read.items():
            summaries[uuids[rp_id]]['resources'] = resources
    if not with_traits:
        for rp_id, name in utils.execute(
                context, utils.prepared(summary_statements.traits(id_list)),
                values).all():
            traits_of[rp_id].append(name)
    return _customs_last(context, summaries), uuids


# Where custom trait names sort among names of [A-Z0-9_]: from the
# prefix up to the prefix whose last character is the one after '_'.
_CUSTOM_FROM, _CUSTOM_TO = 'CUSTOM_', 'CUSTOM`'


def _customs_last(context, summaries):
    """``summaries`` with each one's traits in trait-list order.

    As ``GET /resource_providers/{uuid}/traits`` lists a provider's
    traits, and as placement lists them on SQLite (its order there):
    the standard ones by name, the custom ones after them in creation
    order. The summaries' traits come sorted by name; a summary with
    custom traits has them moved, and the order of creation is read
    (one statement) only if some summary has more than one.
    """
    moved = []
    for summary in summaries.values():
        traits = summary['traits']
        first = bisect.bisect_left(traits, _CUSTOM_FROM)
        end = bisect.bisect_left(traits, _CUSTOM_TO, first)
        if first != end:
            moved.append((summary, traits[:first] + traits[end:],
                          traits[first:end]))
    several = sorted({name for _summary, _standard, custom in moved
                      if len(custom) > 1 for name in custom})
    created = {}
    if several:
        created = {row['name']: n for n, row in enumerate(
            trait_db.get_all(context, name_in=several))}
    for summary, standard, custom in moved:
        # A trait deleted since the summaries were read goes last.
        custom.sort(key=lambda name: created.get(name, len(created)))
        summary['traits'] = standard + custom
    return summaries


@facade.reader
def tree_providers(context, strategy, root_ids):
    """{root id: [ProviderRow]} of every provider of ``root_ids``' trees.

    The rows of the summaries (see
    :func:`resobj.search.statements.summaries.providers`), one per
    provider: where the statement gives one row per trait, a provider's
    rows are made one, whose ``names`` are its trait names joined by
    commas.
    """
    found = {}
    id_list, roots = strategy.summary_id_set(root_ids)
    for row in utils.named_rows(utils.execute(
            context, utils.prepared(summary_statements.providers(
                id_list, strategy.summary_traits_inline)),
            {'roots': roots}), summary_statements.ProviderRow):
        first = found.setdefault(row.id, row)
        if first is not row:
            found[row.id] = first._replace(
                names=first.names + ',' + row.names)
    trees = collections.defaultdict(list)
    for row in found.values():
        trees[row.root_provider_id].append(row)
    return trees
