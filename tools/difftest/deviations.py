"""The documented deviations from placement the harness can meet.

Each one has a name and a narrow test that recognises it in one
answer's differences; the runner counts what each recognised
("documented: <name>") and reports the rest as unexplained. The list
in doc/source/user/api.rst, "Deviations from placement", says why each
exists. Pure functions, no I/O.

Some deviations change state rather than one answer, and the runner
follows them (see doc/source/contributor/testing.rst): placement keeps
the consumer a failed allocation write created (at generation 0, with
no allocations), resobj keeps nothing (``leftover_consumer_replay``
says which server to send the write again); resobj bumps a provider a
write takes allocations off, placement does not; placement takes a
provider name ''.
"""

import json
import re

# Names, as the report prints them.
REFERENCE_500 = 'reference-500'
VARY_ON_ERRORS = 'vary-on-errors'
ERROR_PAGE = 'json-errors-only'
ALLOCATION_CHECK_ORDER = 'allocation-check-order'
DUPLICATE_INVENTORY = 'duplicate-inventory-detail'
NEW_AGGREGATES_ORDER = 'new-aggregates-uuid-order'
LEFTOVER_CONSUMER = 'leftover-consumer'
LAST_MODIFIED = 'last-modified-always'
FORBIDDEN_TWICE = 'trait-name-with-two-bangs'
VERSION_BEFORE_CONTENT_TYPE = 'version-before-content-type'
UUID_KEY_PATTERN = 'uuid-key-pattern'
EMPTY_PROVIDER_NAME = 'empty-provider-name'
LIMITED_CANDIDATES = 'limit-picks-other-candidates'
REFERENCE_AMOUNTS = 'reference-amounts-above-the-request'
SHARED_SPREAD_ONE_TREE = 'shared-spread-group-one-tree'
NEGATIVE_RATIO = 'negative-allocation-ratio-detail'
LISTED_ALLOCATIONS_ORDER = 'allocations-list-order'
# Counted by the runner (it follows the reference up, see run.py).
OLD_PROVIDERS_BUMPED = 'old-providers-bumped'

ALL = (REFERENCE_500, VARY_ON_ERRORS, ERROR_PAGE, ALLOCATION_CHECK_ORDER,
       DUPLICATE_INVENTORY, NEW_AGGREGATES_ORDER,
       LEFTOVER_CONSUMER, LAST_MODIFIED, FORBIDDEN_TWICE,
       OLD_PROVIDERS_BUMPED,
       VERSION_BEFORE_CONTENT_TYPE, UUID_KEY_PATTERN, EMPTY_PROVIDER_NAME,
       LIMITED_CANDIDATES, REFERENCE_AMOUNTS, SHARED_SPREAD_ONE_TREE,
       NEGATIVE_RATIO, LISTED_ALLOCATIONS_ORDER)


def _is_page(normalised):
    content_type = normalised['headers'].get('content-type', '')
    return content_type.startswith(('text/html', 'text/plain'))


def _status_of(normalised):
    """The status of an error answer, JSON or a page; or None."""
    error = _error(normalised)
    if error:
        return error[0]
    if _is_page(normalised) and normalised['status'] >= 400:
        return normalised['status']
    return None


def _error(normalised):
    """(status, code, detail) of an error answer, or None."""
    body = normalised['body']
    if not isinstance(body, dict) or not body.get('errors'):
        return None
    first = body['errors'][0]
    return first.get('status'), first.get('code'), first.get('detail')


_INVALID_RE = re.compile(
    r"Unable to allocate inventory: Inventory for '([^']*)' on resource "
    r"provider '([^']*)' invalid\.$")
# Any of the three reasons an allocation does not fit, naming one class
# on one provider.
_ONE_PAIR_RE = re.compile(
    r"Unable to allocate inventory: (Inventory for|Unable to create "
    r"allocation for) '[^',]*' on resource provider '[^',]*'[. ]")


def _invalid_inventory(detail):
    match = _INVALID_RE.search(detail or '')
    if not match:
        return None
    return [[n.strip() for n in group.split(',')] for group in
            match.groups()]


def _check_order(ref_detail, res_detail):
    """Both name what does not fit, but not the same first.

    resobj lists the classes by name and the providers in creation
    order, where placement's order changes from run to run; and each
    may meet another (provider, class) pair first.
    """
    ref_names = _invalid_inventory(ref_detail)
    res_names = _invalid_inventory(res_detail)
    if ref_names and res_names and all(
            sorted(a) == sorted(b) for a, b in zip(ref_names, res_names)):
        return True
    return any(bool(pattern.search(ref_detail or '')
                    and pattern.search(res_detail or ''))
               for pattern in (_ONE_PAIR_RE, _IN_USE_RE))


# An inventory a write would remove or shrink holds allocations (a
# reshape that changes several providers meets them in its own order).
_IN_USE_RE = re.compile(
    r"update conflict: Inventory for '[^']*' on resource provider "
    r"'[^']*' in use\.$")

_GENERATION_RE = re.compile(
    r'consumer generation conflict - expected (\S+) but got (\S+)$')


def _leftover_conflict(ref_detail, res_detail):
    """The same wrong generation, for a consumer only placement has.

    Placement's left-over consumer is at generation 0, where resobj
    has no consumer (null).
    """
    ref_match = _GENERATION_RE.search(ref_detail or '')
    res_match = _GENERATION_RE.search(res_detail or '')
    return bool(ref_match and res_match
                and ref_match.group(1) == '0'
                and res_match.group(1) == 'null'
                and ref_match.group(2) == res_match.group(2))


# How each service's schema error quotes the pattern of a uuid used as
# a member name (a consumer's, a provider's).
_PLACEMENT_UUID_KEY = "'^[0-9a-fA-F-]{36}$'"
_OUR_UUID_KEY = ("'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                 "[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'")


def is_empty_name_refused(req, res):
    """resobj's 400 for a provider named ''.

    Placement takes it in a PUT (and refuses it in a POST in other
    words); the runner then renames the reference's provider back.
    """
    error = _error(res)
    if (not error or error[0] != 400 or req['method'] not in ('PUT', 'POST')
            or not req['path'].startswith('/resource_providers')
            or "'' should be non-empty" not in (error[2] or '')):
        return False
    try:
        body = json.loads(req.get('body') or b'null')
    except ValueError:
        return False
    return isinstance(body, dict) and body.get('name') == ''


def _candidate_answers(req, ref, res):
    """Both 200 answers' allocation requests, of any lengths; or None."""
    if (not req['path'].startswith('/allocation_candidates?')
            or not ref['status'] == res['status'] == 200):
        return None
    found = [answer['body'].get('allocation_requests')
             if isinstance(answer['body'], dict) else None
             for answer in (ref, res)]
    if all(isinstance(requests, list) for requests in found):
        return found
    return None


def _candidate_lists(req, ref, res):
    """Both answers' allocation requests, if both list as many; or None."""
    lists = _candidate_answers(req, ref, res)
    if lists is not None and len(lists[0]) == len(lists[1]):
        return lists
    return None


def _other_limited_candidates(req, ref, res, diffs):
    """As many candidates, others: ``limit`` took them in another order.

    Placement takes the first candidates in its database's order, which
    PostgreSQL does not define.
    """
    return ('limit=' in req['path']
            and _candidate_lists(req, ref, res) is not None
            and all(path.startswith(('/body/allocation_requests/',
                                     '/body/provider_summaries/'))
                    for path, _, _ in diffs))


def _listed_allocations_reordered(req, ref, res, diffs):
    """Before 1.12: the same candidates, their allocations in another order.

    A candidate's allocations are then a list; resobj lists its
    providers by uuid, placement by the smallest class id each is
    allocated (VCPU before MEMORY_MB before DISK_GB).
    """
    lists = _candidate_lists(req, ref, res)
    if lists is None or not all(
            path.startswith('/body/allocation_requests/')
            for path, _, _ in diffs):
        return False

    def in_one_order(candidates):
        found = []
        for candidate in candidates:
            allocations = candidate.get('allocations')
            if not isinstance(allocations, list):
                return None
            parts = sorted(json.dumps(part, sort_keys=True)
                           for part in allocations)
            found.append(json.dumps(parts))
        return sorted(found)
    a, b = in_one_order(lists[0]), in_one_order(lists[1])
    return a is not None and a == b


def _requested_groups(path):
    """{suffix: {class: amount}} of a candidate request's groups.

    A repeated ``resources`` parameter is its last value, as both
    services read it.
    """
    groups = {}
    query = path.split('?', 1)[1] if '?' in path else ''
    for param in query.split('&'):
        name, _, value = param.partition('=')
        match = re.match(r'^resources([a-zA-Z0-9_-]*)$', name)
        if match:
            amounts = {}
            for item in value.split(','):
                rc, _, amount = item.partition(':')
                amounts[rc] = amounts.get(rc, 0) + int(amount)
            groups[match.group(1)] = amounts
    return groups


def _requested_totals(path):
    """{class: amount} a candidate request asks for, all groups summed."""
    totals = {}
    for amounts in _requested_groups(path).values():
        for rc, amount in amounts.items():
            totals[rc] = totals.get(rc, 0) + amount
    return totals


def _over_capacity_by_wrong_sums(groups, candidate, summaries):
    """Whether placement's sums would push ``candidate`` over a capacity.

    Placement 16.0.0 allocates on the unsuffixed group's provider every
    group's amount of a class the groups share (``resources=MEMORY_MB:4
    &resources1=MEMORY_MB:1`` with the groups on R and C: R 5, C 1),
    and drops the candidate when that is more than R's free capacity.
    ``groups``: :func:`_requested_groups`; ``summaries``: resobj's.
    Only for a candidate whose unsuffixed group uses one provider (the
    mappings, from 1.34, say which).
    """
    spread = (candidate.get('mappings') or {}).get('')
    if not spread or len(spread) != 1:
        return False
    figures = (summaries.get(spread[0]) or {}).get('resources', {})
    for rc, amount in groups.get('', {}).items():
        total = sum(amounts.get(rc, 0) for amounts in groups.values())
        free = figures.get(rc)
        if total > amount and free is not None and \
                total > free['capacity'] - free['used']:
            return True
    return False


def _allocation_parts(candidate):
    """{provider uuid: {class: amount}} of a candidate, in either form.

    From 1.12 ``allocations`` is a dict by provider uuid; before, a
    list of {'resource_provider': {'uuid'}, 'resources'}.
    """
    allocations = candidate.get('allocations', {})
    if isinstance(allocations, list):
        return {part['resource_provider']['uuid']: part.get('resources', {})
                for part in allocations}
    return {uuid: part.get('resources', {})
            for uuid, part in allocations.items()}


def _candidate_totals(candidate):
    totals = {}
    for resources in _allocation_parts(candidate).values():
        for rc, amount in resources.items():
            totals[rc] = totals.get(rc, 0) + amount
    return totals


def _reference_amounts_above_the_request(req, ref, res, diffs):
    """Placement's candidates allocate more than the request asks for.

    With several groups asking for one class, placement 16.0.0 can add a
    group's amount to a provider's more than once (its candidates total
    more of the class than all the groups ask for together); resobj's
    total exactly what is asked. Recognised when every one of resobj's
    candidates totals the request's amounts and some of placement's
    more, and either both list as many, with the same mappings, or
    placement lists fewer (it merges the candidates its sums made equal,
    and drops those its sums make exceed a capacity): then each of its
    candidates uses the providers of one of resobj's, and every other
    difference is a summary placement's answer lacks.
    """
    lists = _candidate_answers(req, ref, res)
    if lists is None:
        return False
    a, b = lists
    try:
        asked = _requested_totals(req['path'])
    except ValueError:
        return False
    if any(_candidate_totals(c) != asked for c in b):
        return False
    if not any(amount > asked.get(rc, 0)
               for c in a for rc, amount in _candidate_totals(c).items()):
        # None of placement's candidates shows the wrong sums (it may
        # list none): each one it lacks must be one they would drop.
        theirs = {_candidate_key(c) for c in a}
        groups = _requested_groups(req['path'])
        summaries = res['body'].get('provider_summaries') or {}
        missing = [c for c in b if _candidate_key(c) not in theirs]
        return (len(a) < len(b) and len(theirs) + len(missing) == len(b)
                and all(_over_capacity_by_wrong_sums(groups, c, summaries)
                        for c in missing)
                and _only_lists_and_absent_summaries(diffs))
    if len(a) == len(b):
        return sorted(json.dumps(c.get('mappings'), sort_keys=True)
                      for c in a) == sorted(
            json.dumps(c.get('mappings'), sort_keys=True) for c in b)
    if len(a) > len(b):
        return False
    theirs = {frozenset(_allocation_parts(c)) for c in a}
    ours = {frozenset(_allocation_parts(c)) for c in b}
    return theirs <= ours and _only_lists_and_absent_summaries(diffs)


_SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'


def _candidate_key(candidate):
    return json.dumps(candidate, sort_keys=True)


_SUFFIXED_GROUP_RE = re.compile(
    r'^(resources|required|member_of|in_tree)[a-zA-Z0-9_-]+$')


def _shared_spread_group_in_one_tree(req, ref, res, diffs):
    """Placement combines an unsuffixed group on a sharing provider once.

    When the unsuffixed group (whose resources may spread over a tree)
    is served by sharing providers alone, placement 16.0.0 builds that
    group's request once per tree the sharing provider serves, then
    keeps one of them (its requests compare equal whatever their tree),
    so it combines that request with the other groups' in one tree
    only. resobj combines it in every tree served. Recognised when
    resobj's candidates are placement's and more, and in each one more
    the unsuffixed group takes only providers whose summaries name the
    sharing trait (from 1.34 the mappings say which; before, such a
    candidate must use one), and every other difference is a summary
    placement's answer lacks.
    """
    lists = _candidate_answers(req, ref, res)
    if lists is None:
        return False
    query = req['path'].split('?', 1)[1]
    names = {param.partition('=')[0] for param in query.split('&')}
    # The unsuffixed group with resources, and a suffixed group (with
    # resources, or a resourceless one) to combine it with.
    if 'resources' not in names or not any(
            _SUFFIXED_GROUP_RE.match(name) for name in names):
        return False
    a, b = lists
    ours = {_candidate_key(c): c for c in b}
    theirs = {_candidate_key(c) for c in a}
    if not theirs < set(ours) or len(a) != len(theirs):
        return False
    summaries = res['body'].get('provider_summaries') or {}
    if not all(_spread_on_sharing(ours[key], summaries)
               for key in set(ours) - theirs):
        return False
    return _only_lists_and_absent_summaries(diffs)


def _spread_on_sharing(candidate, summaries):
    """Whether ``candidate``'s unsuffixed group uses sharing providers only.

    From 1.34 its mappings say which providers the group uses; before,
    only that the candidate uses a sharing provider can be told.
    """
    def sharing(rp):
        return _SHARING_TRAIT in (summaries.get(rp) or {}).get('traits', ())

    mappings = candidate.get('mappings')
    if mappings is not None:
        spread = mappings.get('', ())
        return bool(spread) and all(sharing(rp) for rp in spread)
    return any(sharing(rp) for rp in candidate.get('allocations', {}))


def _only_lists_and_absent_summaries(diffs):
    """Whether ``diffs`` are the candidate list and summaries one lacks."""
    return all(path == '/body/allocation_requests'
               or (path.startswith('/body/provider_summaries/')
                   and path.count('/') == 3 and x == '<absent>')
               for path, x, _y in diffs)


def _ratios(value):
    """Every ``allocation_ratio`` value in a JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == 'allocation_ratio':
                yield item
            else:
                yield from _ratios(item)
    elif isinstance(value, list):
        for item in value:
            yield from _ratios(item)


def _negative_ratio_refused(req, ref, res):
    """Both refuse a negative allocation ratio, in other words.

    resobj's schema names the ratio; placement says that the reserved
    amount is above the total.
    """
    ref_error, res_error = _error(ref), _error(res)
    if not (ref_error and res_error and ref_error[0] == res_error[0] == 400
            and 'allocation_ratio' in (res_error[2] or '')
            and 'reserved value is greater than' in (ref_error[2] or '')):
        return False
    try:
        body = json.loads(req.get('body') or b'null')
    except ValueError:
        return False
    return any(not isinstance(r, bool) and isinstance(r, (int, float))
               and r < 0 for r in _ratios(body))


def _answer_deviation(req, ref, res, diffs):
    """A deviation that explains every difference of one answer."""
    if req.get('deviation') in ALL:
        # A request the sequence makes to undo a deviation it just met.
        return req['deviation']
    res_error = _error(res)
    if is_empty_name_refused(req, res):
        return EMPTY_PROVIDER_NAME
    if (res_error and res_error[0] == 400 and '!!' in req['path']
            and "Invalid trait name '!" in (res_error[2] or '')):
        # required=!!NAME: placement reads a trait named "!NAME".
        return FORBIDDEN_TWICE
    if _other_limited_candidates(req, ref, res, diffs):
        return LIMITED_CANDIDATES
    if _listed_allocations_reordered(req, ref, res, diffs):
        return LISTED_ALLOCATIONS_ORDER
    if _reference_amounts_above_the_request(req, ref, res, diffs):
        return REFERENCE_AMOUNTS
    if _shared_spread_group_in_one_tree(req, ref, res, diffs):
        return SHARED_SPREAD_ONE_TREE
    if _negative_ratio_refused(req, ref, res):
        return NEGATIVE_RATIO
    ref_error, res_error = _error(ref), _error(res)
    if (_status_of(ref) in (406, 415) and res_error
            and res_error[0] == 404
            and (res_error[2] or '').startswith('The resource could not')):
        # A route newer than the request's version: resobj's 404 comes
        # before the content type or the Accept is looked at (placement's
        # 406 is a page when the Accept rules JSON out).
        return VERSION_BEFORE_CONTENT_TYPE
    if not ref_error or not res_error or ref_error[:2] != res_error[:2]:
        return None
    if (ref_error[2] and res_error[2] and _PLACEMENT_UUID_KEY in ref_error[2]
            and ref_error[2] == res_error[2].replace(_OUR_UUID_KEY,
                                                     _PLACEMENT_UUID_KEY)):
        return UUID_KEY_PATTERN
    if any(path != '/body/errors/0/detail' for path, _, _ in diffs):
        return None
    if _leftover_conflict(ref_error[2], res_error[2]):
        return LEFTOVER_CONSUMER
    if ref_error[0] == 409 and _check_order(ref_error[2], res_error[2]):
        return ALLOCATION_CHECK_ORDER
    if (ref_error[0] == 409 and ('IntegrityError' in ref_error[2]
                                 or 'UniqueViolation' in ref_error[2])
            and 'already has inventory of' in res_error[2]):
        return DUPLICATE_INVENTORY
    return None


def _diff_deviation(req, ref, res, diff):
    """A deviation that explains one difference."""
    path, a, b = diff
    if ref['status'] >= 500:
        # Placement's own failure: nothing to compare with.
        return REFERENCE_500
    if path == '/headers/vary' and a == '<absent>' and ref['status'] >= 400:
        return VARY_ON_ERRORS
    if (path == '/headers/last-modified?' and a is False and b is True
            and ref['status'] == res['status'] == 200):
        # Placement leaves Last-Modified off some answers that carry
        # Cache-Control (a PUT of a provider that changes nothing).
        return LAST_MODIFIED
    if (_is_page(ref) and ref['status'] >= 400
            and (path.startswith('/body') or
                 path == '/headers/content-type')):
        return ERROR_PAGE
    return None


def _same_aggregates_reordered(req, ref, res):
    """Both list the same aggregates, in another order.

    resobj creates (and so lists) the aggregates one request names for
    the first time in uuid order.
    """
    if not req['path'].split('?')[0].endswith('/aggregates'):
        return False
    a, b = [answer['body'].get('aggregates')
            if isinstance(answer['body'], dict) else None
            for answer in (ref, res)]
    return (isinstance(a, list) and isinstance(b, list) and a != b
            and sorted(a) == sorted(b))


def classify(req, ref, res, diffs):
    """({deviation name: [differences]}, [unexplained differences]).

    ``ref`` and ``res`` are normalised answers to ``req``.
    """
    if not diffs:
        return {}, []
    whole = _answer_deviation(req, ref, res, diffs)
    if whole:
        return {whole: list(diffs)}, []
    known, rest = {}, []
    reordered = _same_aggregates_reordered(req, ref, res)
    for diff in diffs:
        name = _diff_deviation(req, ref, res, diff)
        if name is None and reordered and diff[0].startswith(
                '/body/aggregates/'):
            name = NEW_AGGREGATES_ORDER
        if name is None:
            rest.append(diff)
        else:
            known.setdefault(name, []).append(diff)
    return known, rest


# -- placement's left-over consumers -------------------------------------

ALLOCATION_WRITES = ('PUT /allocations/', 'POST /allocations',
                     'POST /reshaper')
_EXPECTED_0 = 'consumer generation conflict - expected 0 but got None'
_EXPECTED_NULL = 'consumer generation conflict - expected null but got 0'


def is_allocation_write(req):
    where = '%s %s' % (req['method'], req['path'].split('?')[0])
    return where.startswith(ALLOCATION_WRITES) and where != 'PUT /allocations/'


def _consumer_bodies(req):
    """{consumer uuid: its JSON object in the body} (may be empty)."""
    try:
        body = json.loads(req.get('body') or b'null')
    except ValueError:
        return None, {}
    if not isinstance(body, dict):
        return body, {}
    if req['method'] == 'PUT':
        return body, {req['path'].split('/')[2].split('?')[0]: body}
    if req['path'].startswith('/reshaper'):
        consumers = body.get('allocations')
    else:
        consumers = body
    if not isinstance(consumers, dict):
        return body, {}
    return body, {k: v for k, v in consumers.items() if isinstance(v, dict)}


def with_generations(req, generations):
    """``req`` with the consumer generations ``{uuid: generation}``."""
    body, consumers = _consumer_bodies(req)
    for uuid, generation in generations.items():
        consumers[uuid]['consumer_generation'] = generation
    replay = dict(req)
    replay['body'] = json.dumps(body).encode()
    return replay


def generations(req, value):
    """The consumers, in body order, whose generation is ``value``."""
    return [uuid for uuid, entry in _consumer_bodies(req)[1].items()
            if 'consumer_generation' in entry
            and entry['consumer_generation'] == value
            and not isinstance(entry['consumer_generation'], bool)]


def _conflict(normalised, ending):
    """A consumer generation conflict whose detail ends with ``ending``."""
    error = _error(normalised)
    return bool(error and error[0] == 409 and error[2]
                and 'consumer generation conflict' in error[2]
                and error[2].endswith(ending))


def is_expected_0(normalised):
    """Placement's answer for a null generation of a left-over consumer."""
    return _conflict(normalised, _EXPECTED_0)


def is_expected_null(normalised):
    """Placement's answer for a generation given for no consumer."""
    return _conflict(normalised, _EXPECTED_NULL)


def leftover_consumer_replay(req, ref, res):
    """Which server to send a write again after a left-over consumer.

    Placement answers a write that gives a consumer it left behind
    (generation 0, no allocations) ``consumer_generation: null`` with a
    409 "expected 0 but got None", where resobj, which has no such
    consumer, goes on; and it takes a ``consumer_generation: 0`` that
    resobj refuses (no consumer of any other origin has generation 0
    in placement: a write that succeeds makes it 1).

    Returns 'reference' (send it again giving 0 for the left-over
    consumers among those with a null generation: the runner finds
    which, in body order, by placement's answers), 'resobj' (send it
    again with null for those at 0), or None when the difference is no
    such case.
    """
    if not is_allocation_write(req):
        return None
    if is_expected_0(ref) and not is_expected_0(res):
        return 'reference' if generations(req, None) else None
    # Placement took the 0 (and went on, to succeed or to fail later),
    # resobj has no such consumer.
    if (is_expected_null(res) and not is_expected_null(ref)
            and not _conflict(ref, '') and generations(req, 0)):
        return 'resobj'
    return None
