"""GET /allocation_candidates (from 1.10), and resobj's explain route."""

from resobj.api import errors
from resobj.api import microversion
from resobj.api.policies import allocation_candidate as policies
from resobj.api import query
from resobj.api.schemas import allocation_candidate as schema
from resobj.api.schemas import common
from resobj.api import util
from resobj import exception
from resobj.objects import allocation_candidate as ac_obj
from resobj.search import request as search_request


# Parameters whose repetition placement answers with the first value
# (limit, group_policy) or the last one (the group parameters below).
_FIRST_VALUE_ONLY = ('limit', 'group_policy')
_LAST_VALUE_ONLY = ('resources', 'in_tree')


def _split(key, version):
    """(group key, suffix) of a query parameter name, or None."""
    for name in schema.GROUP_KEYS:
        if key == name:
            return name, ''
        if key.startswith(name) and version >= (1, 25):
            suffix = key[len(name):]
            pattern = (schema.SUFFIX_1_33 if version >= (1, 33)
                       else schema.SUFFIX_1_25)
            if pattern.match(suffix):
                return name, suffix
    return None


def _groups(req, version):
    """The search's Groups from the query string; 400 for anything unknown.

    In the order the groups first appear in the query string, the order
    placement looks their names up in.
    """
    allowed = set(schema.group_keys(version))
    other = schema.query(version)['properties']
    groups = {}
    for key in req.GET.keys():
        if key in other:
            continue
        split = _split(key, version)
        if split is None or (split[1] == '' and split[0] not in allowed) \
                or (split[1] and split[0] == 'in_tree' and
                    version < (1, 31)):
            raise errors.bad_request(
                'Invalid query string parameters: %r is not a parameter of '
                'GET /allocation_candidates at microversion %s.'
                % (key, version))
        name, suffix = split
        values = req.GET.getall(key)
        if name in _LAST_VALUE_ONLY or (name == 'required' and
                                        version < (1, 39)):
            # As placement: a repeated resources or in_tree parameter
            # (and required, before 1.39 made them all count) is
            # its last value.
            values = values[-1:]
        groups.setdefault(suffix, {})[name] = values
    if len(groups) > schema.MAX_GROUPS:
        raise errors.bad_request(
            'The query names %d request groups; at most %d are accepted.'
            % (len(groups), schema.MAX_GROUPS), errors.QUERY_BAD_VALUE)
    result = []
    for suffix, params in sorted(groups.items()):
        fields = {}
        if 'resources' in params:
            fields['resources'] = query.resources(params['resources'][0])
        if 'required' in params:
            fields['required_traits'], fields['forbidden_traits'] = \
                query.required(params['required'], version,
                               'required' + suffix)
        if 'member_of' in params:
            fields['member_of'], fields['forbidden_aggs'] = \
                query.member_of(params['member_of'], version)
        if 'in_tree' in params:
            # Placement takes white space around it here (not on the
            # provider list).
            fields['in_tree'] = query.uuid(params['in_tree'][0], 'in_tree',
                                           strip=True)
        try:
            result.append(search_request.group(suffix, **fields))
        except exception.Invalid as exc:
            # The values are checked above in placement's words; what
            # the search refuses besides is a 400 too.
            raise errors.bad_request(str(exc), errors.QUERY_BAD_VALUE)
    if version < (1, 36):
        # From 1.36 a resourceless group is checked against same_subtree
        # (see _check_resourceless).
        _refuse_resourceless(req, version, result)
    if '' not in groups and (version < (1, 25) or not groups):
        if version >= (1, 36):
            raise errors.bad_request(
                'There must be at least one resources or resources[$S] '
                'parameter.', errors.QUERY_MISSING_VALUE)
        raise errors.bad_request(
            'At least one request group (`resources` or `resources{$S}`) '
            'is required.')
    if not any(group.resources for group in result):
        raise errors.bad_request(
            'There must be at least one resources or resources[$S] '
            'parameter.', errors.QUERY_MISSING_VALUE)
    # ``groups`` holds the suffixes in the order they first appear.
    order = list(groups)
    return sorted(result, key=lambda group: order.index(group.suffix))


# Placement's words for groups without resources before 1.36, checked
# in this order: the groups' required traits (forbidden ones do not
# count), their member_of (forbidden aggregates do), then any group at
# all.
_ORPHANS = (
    ('required', lambda group: group.required_traits,
     'All traits parameters must be associated with resources.  Found the '
     'following orphaned traits keys: %s'),
    ('member_of', lambda group: group.member_of or group.forbidden_aggs,
     'All member_of parameters must be associated with resources. Found '
     'the following orphaned member_of keys: %s'))


def _refuse_resourceless(req, version, groups):
    """400 for a group without resources (before 1.36).

    As placement: once every value is parsed, the keys of such groups'
    required traits, else those of their member_of, else a sentence
    naming none; the groups in the order their first parameters (of any
    kind) appear in the query string. The unsuffixed group counts too:
    ``required`` with ``resources1`` but no ``resources`` names
    ``required``.
    """
    orphans = {group.suffix: group for group in groups
               if not group.resources}
    if not orphans:
        return
    order = [suffix for suffix in _suffixes_in_query_order(req, version)
             if suffix in orphans]
    for name, given, words in _ORPHANS:
        found = [name + suffix for suffix in order
                 if given(orphans[suffix])]
        if found:
            raise errors.bad_request(words % ', '.join(found))
    raise errors.bad_request('All request groups must specify resources.')


def _same_subtree(values):
    """same_subtree=_A,_B (repeatable) -> [['_A', '_B'], ...].

    As placement reads them: each suffix without the white space around
    it (``_A, _B`` names ``_B``; white space alone names the unsuffixed
    group).
    """
    subtrees = [[suffix.strip() for suffix in value.split(',')]
                for value in values]
    if any('' in suffixes for suffixes in subtrees):
        raise errors.bad_request(
            'Empty string (unsuffixed group) can not be specified in '
            '`same_subtree` ', errors.QUERY_BAD_VALUE)
    return subtrees


def _check_resourceless(groups, subtrees):
    """400 for a resourceless group no same_subtree names (1.36+).

    The unsuffixed group too (``required`` without ``resources``), which
    no same_subtree may name, as placement names it: ``''``. Sorted
    (placement's order changes from one of its processes to the next).
    """
    named = set().union(*subtrees)
    orphans = sorted(g.suffix for g in groups
                     if not g.resources and g.suffix not in named)
    if orphans:
        raise errors.bad_request(
            'Resourceless suffixed group request should be specified in '
            '`same_subtree` query param: bad group(s) - %s.' % orphans,
            errors.QUERY_BAD_VALUE)


def _suffixes_in_query_order(req, version):
    """The request's group suffixes, as placement lists them in errors.

    In the order they first appear in the query string, with '' where
    the unsuffixed group's parameters first appear, if it has any.
    """
    other = schema.query(version)['properties']
    found = []
    for key in req.GET.keys():
        split = None if key in other else _split(key, version)
        if split is not None and split[1] not in found:
            found.append(split[1])
    return found


def _check_subtree_suffixes(req, version, groups, subtrees):
    """400 for same_subtree suffixes that name no group.

    As placement: every such suffix of every same_subtree parameter,
    each once (in query order here; placement's order changes from one
    of its processes to the next).
    """
    known = {group.suffix for group in groups}
    unknown = list(dict.fromkeys(
        suffix for suffixes in subtrees for suffix in suffixes
        if suffix not in known))
    if unknown:
        raise errors.bad_request(
            'Real suffixes should be specified in `same_subtree`: '
            '%s not found in %s.'
            % (unknown, _suffixes_in_query_order(req, version)),
            errors.QUERY_BAD_VALUE)


def _format(version, candidates, requested):
    """The response body: a thousand requests and summaries are usual.

    The version tests are made once, not per request and class; plain
    loops, because a comprehension per request or summary is a function
    call each.
    """
    by_provider = version >= (1, 12)
    with_mappings = version >= (1, 34)
    requests = []
    append = requests.append
    # The requests where one provider takes everything share one dict of
    # resources (see the DB API's get_candidates), and so one wrapper.
    wrapped = {}
    for allocations, mappings in candidates.request_pairs:
        if not by_provider:
            allocations = [
                {'resource_provider': {'uuid': rp}, 'resources': resources}
                for rp, resources in allocations.items()]
        elif len(allocations) == 1:
            # One provider takes the request, the usual case.
            (rp, resources), = allocations.items()
            wrapper = wrapped.get(id(resources))
            if wrapper is None or wrapper['resources'] is not resources:
                wrapper = wrapped[id(resources)] = {'resources': resources}
            allocations = {rp: wrapper}
        else:
            allocations = {rp: {'resources': resources}
                           for rp, resources in allocations.items()}
        if with_mappings:
            append({'allocations': allocations, 'mappings': mappings})
        else:
            append({'allocations': allocations})
    if version >= (1, 29):
        # The search's summaries are in this answer's shape already (see
        # AllocationCandidates.summary_dicts): written out as they are.
        return {'allocation_requests': requests,
                'provider_summaries': candidates.summary_dicts}
    # Before 1.27 a summary shows the requested classes only.
    every_class = version >= (1, 27)
    with_traits = version >= (1, 17)
    summaries = {}
    for uuid, summary in candidates.summary_dicts.items():
        resources = summary['resources']
        if not every_class:
            resources = {rc: figures for rc, figures in resources.items()
                         if rc in requested}
        if with_traits:
            summaries[uuid] = {'resources': resources,
                               'traits': summary['traits']}
        else:
            summaries[uuid] = {'resources': resources}
    return {'allocation_requests': requests, 'provider_summaries': summaries}


def parse(req, version):
    """The query string of ``req`` at ``version``, checked: a search Query.

    Raises the 400s placement answers for malformed requests.
    """
    # Placement's words for an unknown name, or no resources before
    # 1.25: its one schema puts them before any value's error.
    util.check_query_names(req, schema.names(version))
    # As placement, a repeated limit or group_policy is its first value
    # (placement checks its last one only, and fails on a bad first
    # one; here every one must be valid).
    params = util.query(req, common.for_version(schema.query, version),
                        repeatable=('same_subtree',), only_known=True,
                        first_of=_FIRST_VALUE_ONLY)
    subtrees = _same_subtree(params.get('same_subtree', ()))
    root_required, root_forbidden = query.root_required(
        params['root_required']) if 'root_required' in params else ((), ())
    groups = _groups(req, version)
    # In placement's order: the groups same_subtree must name, the
    # suffixes it names, then the group policy.
    _check_resourceless(groups, subtrees)
    _check_subtree_suffixes(req, version, groups, subtrees)
    suffixed = [g for g in groups if g.suffix]
    policy = params.get('group_policy')
    if len(suffixed) > 1 and policy is None:
        raise errors.bad_request(
            'The "group_policy" parameter is required when specifying '
            'more than one "resources{N}" parameter.')
    limit = int(params['limit']) if 'limit' in params else None
    return search_request.Query(tuple(groups), limit, policy,
                                frozenset(root_required),
                                frozenset(root_forbidden), subtrees)


@microversion.available((1, 10))
def list_allocation_candidates(req):
    util.authorize(req, policies.LIST)
    version = util.version(req)
    asked = parse(req, version)
    try:
        candidates = ac_obj.AllocationCandidates.get_by_requests(
            util.context(req), asked.groups, limit=asked.limit,
            group_policy=asked.group_policy,
            allow_nested=version >= (1, 29),
            root_required=asked.root_required,
            root_forbidden=asked.root_forbidden,
            same_subtree=asked.same_subtree)
    except exception.ResourceProviderNotFound:
        # An unknown in_tree provider has no tree to search: placement
        # answers with no candidates, not an error.
        candidates = ac_obj.AllocationCandidates([], {})
    except exception.ResourceClassNotFound as exc:
        # Placement's words.
        raise errors.bad_request('Invalid resource class in resources '
                                 'parameter: %s' % exc)
    except exception.TraitNotFound as exc:
        raise errors.bad_request(errors.placement_detail(exc))
    except exception.UnsupportedCandidateRequest as exc:
        raise errors.bad_request(str(exc))
    requested = set().union(*(g.resources for g in asked.groups))
    return util.respond(req, _format(version, candidates, requested))


@microversion.available((1, 10))
def explain_allocation_candidates(req):
    """GET /resobj/allocation_candidates/explain: resobj's own route.

    The query string of GET /allocation_candidates at the request's
    microversion; the answer is AllocationCandidates.explain's, as
    JSON (see doc/source/user/api.rst). A limit is parsed and ignored.
    """
    util.authorize(req, policies.LIST)
    asked = parse(req, util.version(req))
    found = ac_obj.AllocationCandidates.explain(
        util.context(req), asked.groups, group_policy=asked.group_policy,
        root_required=asked.root_required,
        root_forbidden=asked.root_forbidden,
        same_subtree=asked.same_subtree)
    return util.respond(req, found.as_dict())
