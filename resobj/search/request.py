"""A candidate request as the search takes it: groups, shape and values.

:class:`Group` is one request group, checked (:func:`group`); the
request-wide arguments are checked with the groups by :func:`checked`.
Once the names are ids, :func:`groups_with_ids` fills each group's
``rc_amounts`` ({class id: amount}).

A request's statements depend on its *shape* (:class:`GroupShape` per
group, :class:`RootFilter`) and never on its values, which are bound
parameters named as :func:`params` and :func:`root_params` name them:
``rc_<group>_<n>`` and ``amount_<group>_<n>`` for the group's n-th class
by class id; ``agg_<group>_<n>`` its n-th ``member_of`` set,
``fagg_<group>`` its forbidden aggregates, ``ftrait_<group>`` its
forbidden trait ids, ``rtrait_<group>_<n>`` its n-th required set,
``tree_<group>`` the root id of its ``in_tree``; ``root_traits``,
``root_trait_count`` and ``root_forbidden`` for ``root_required``.
"""

import typing

from resobj import exception

# The largest limit bound into a LIMIT clause (a signed 32-bit int, which
# every backend takes); a larger limit is no limit.
MAX_LIMIT = 2147483647


GROUP_POLICIES = (None, 'none', 'isolate')


class Group(typing.NamedTuple):
    """One request group, checked (see :func:`group`).

    ``resources``: {class name: amount}; ``required_traits``: a list of
    frozensets of trait names, the group's providers need one of each;
    ``forbidden_traits``: names none of them may have; ``member_of``: a
    list of frozensets of aggregate uuids, each provider (or its root,
    unless ``use_same_provider``) in one of each; ``forbidden_aggs``:
    aggregate uuids it may not be in; ``in_tree``: a provider uuid or
    None; ``use_same_provider``: one provider takes the whole group,
    else it may spread over one tree and the sharing providers serving
    it. ``rc_amounts``: {class id: amount}, once the names are ids.
    """

    suffix: str
    resources: dict
    required_traits: list
    forbidden_traits: frozenset
    member_of: list
    forbidden_aggs: frozenset
    in_tree: typing.Optional[str]
    use_same_provider: bool
    rc_amounts: typing.Optional[dict] = None

    def name(self):
        return repr(self.suffix) if self.suffix else 'the unsuffixed group'


class Query(typing.NamedTuple):
    """A whole candidate request, as the API's parser reads it.

    ``groups``: Groups (see :func:`group`), in the order placement looks
    their names up in; the other fields are the arguments of
    ``AllocationCandidates.get_by_requests`` of the same names.
    """

    groups: tuple
    limit: typing.Optional[int] = None
    group_policy: typing.Optional[str] = None
    root_required: frozenset = frozenset()
    root_forbidden: frozenset = frozenset()
    same_subtree: tuple = ()


def asks_for_nothing(found):
    """Whether a group asks for no resources, traits, aggregates or tree.

    ``found``: a Group, or anything with its fields.
    """
    return not (found.resources or found.required_traits or
                found.forbidden_traits or found.member_of or
                found.forbidden_aggs or found.in_tree)


def group(suffix='', resources=None, required_traits=(),
          forbidden_traits=(), member_of=(), forbidden_aggs=(),
          in_tree=None, use_same_provider=None):
    """A checked Group; Invalid for one the search cannot take.

    The one type of a request group, from the API's parser (or any
    caller of ``AllocationCandidates``) to the statements.
    ``use_same_provider``: by default True for a suffixed group and False
    for the unsuffixed one, as in placement.
    """
    if use_same_provider is None:
        use_same_provider = bool(suffix)
    found = Group(suffix, dict(resources or {}),
                  [frozenset(s) for s in required_traits or ()],
                  frozenset(forbidden_traits or ()),
                  [frozenset(s) for s in member_of or ()],
                  frozenset(forbidden_aggs or ()), in_tree,
                  bool(use_same_provider))
    if asks_for_nothing(found):
        # Placement's resourceless groups (1.36) ask for traits,
        # aggregates or a tree: a group asking for nothing at all
        # would map any provider, which is no request.
        raise exception.Invalid(
            message='%s asks for nothing: no resources, traits, '
                    'aggregates or tree' % found.name())
    for rc, amount in found.resources.items():
        if isinstance(amount, bool) or not isinstance(amount, int) or \
                amount < 1:
            raise exception.Invalid(
                message='Amount of %s in %s must be a positive '
                        'integer, not %r' % (rc, found.name(), amount))
    if any(not s for s in found.required_traits + found.member_of):
        raise exception.Invalid(
            message='Empty any-of set of traits or aggregates in %s'
                    % found.name())
    return found


def _check_subtrees(groups, same_subtree):
    """Invalid unless ``same_subtree`` names suffixed groups of ``groups``.

    And every resourceless group is in one of its sets.
    """
    known = {g.suffix for g in groups}
    named = set()
    for suffixes in same_subtree:
        if not suffixes or '' in suffixes:
            raise exception.Invalid(
                message='same_subtree names suffixed groups only: %r'
                        % suffixes)
        unknown = sorted(set(suffixes) - known)
        if unknown:
            raise exception.Invalid(
                message='same_subtree names groups the request does not '
                        'have: %s' % ', '.join(unknown))
        named.update(suffixes)
    unnamed = sorted(g.suffix for g in groups
                     if not g.resources and g.suffix not in named)
    if unnamed:
        raise exception.Invalid(
            message='Resourceless groups must be named in a same_subtree: '
                    '%s' % ', '.join(unnamed))


def checked_arguments(suffixes, group_policy, root_required,
                      root_forbidden):
    """(root_required, root_forbidden) of a request, checked.

    ``suffixes``: those of every group asked for. Invalid for a
    ``group_policy``, ``root_required`` or suffixes the search cannot
    take.
    """
    if group_policy not in GROUP_POLICIES:
        raise exception.Invalid(
            message='group_policy must be none or isolate, not %r'
                    % group_policy)
    root_required = frozenset(root_required or ())
    root_forbidden = frozenset(root_forbidden or ())
    both = root_required & root_forbidden
    if both:
        raise exception.Invalid(
            message='Traits both required and forbidden on the root: %s'
                    % ', '.join(sorted(both)))
    if len(set(suffixes)) != len(suffixes):
        raise exception.Invalid(
            message='Request group suffixes repeat: %s' % list(suffixes))
    return root_required, root_forbidden


def checked_subtrees(groups, same_subtree):
    """``same_subtree`` as lists, checked against the Groups ``groups``.

    Invalid unless some group asks for resources, ``same_subtree`` names
    suffixed groups of the request, and every resourceless group is in
    one of its sets.
    """
    if not any(g.resources for g in groups):
        raise exception.Invalid(
            message='An allocation candidate request needs resources')
    same_subtree = [list(names) for names in same_subtree or ()]
    _check_subtrees(groups, same_subtree)
    return same_subtree


def check_limit(limit):
    """Invalid unless ``limit`` is None or a positive integer."""
    if limit is not None and (isinstance(limit, bool) or
                              not isinstance(limit, int) or limit < 1):
        raise exception.Invalid(
            message='limit must be a positive integer, not %r' % limit)


class GroupShape(typing.NamedTuple):
    """What one group's statements depend on."""

    classes: int
    member_of: int
    forbidden_aggs: bool
    forbidden_traits: bool
    # Required trait sets tested per provider (single-provider groups).
    required: int
    in_tree: bool
    single: bool
    # A spread group's required trait sets, which a root taking the
    # whole group alone must have (see clauses.may_join_spread_part).
    spread_required: int = 0


class RootFilter(typing.NamedTuple):
    """The shape of ``root_required``: any required, any forbidden."""

    required: bool = False
    forbidden: bool = False


def shape(groups):
    """The statements' shape of ``groups``: a tuple of GroupShape."""
    return tuple(
        GroupShape(
            classes=len(group.rc_amounts),
            member_of=len(group.member_of),
            forbidden_aggs=bool(group.forbidden_aggs),
            forbidden_traits=bool(group.forbidden_traits),
            required=(len(group.required_traits)
                      if group.use_same_provider else 0),
            in_tree=group.in_tree is not None,
            single=bool(group.use_same_provider),
            spread_required=(0 if group.use_same_provider
                             else len(group.required_traits)))
        for group in groups)


def params(groups, trait_ids, tree_roots):
    """The bound values of ``groups`` for the statements of their shape."""
    values = {}
    for i, group in enumerate(groups):
        for n, (rc_id, amount) in enumerate(
                sorted(group.rc_amounts.items())):
            values['rc_%d_%d' % (i, n)] = rc_id
            values['amount_%d_%d' % (i, n)] = amount
        for n, any_of in enumerate(group.member_of):
            values['agg_%d_%d' % (i, n)] = sorted(any_of)
        if group.forbidden_aggs:
            values['fagg_%d' % i] = sorted(group.forbidden_aggs)
        if group.forbidden_traits:
            values['ftrait_%d' % i] = sorted(
                trait_ids[name] for name in group.forbidden_traits)
        for n, any_of in enumerate(group.required_traits):
            values['rtrait_%d_%d' % (i, n)] = sorted(
                trait_ids[name] for name in any_of)
        if group.in_tree is not None:
            values['tree_%d' % i] = tree_roots[group.in_tree]
    return values


def root_params(required, forbidden):
    """The bound values of ``root_required``, from trait ids."""
    values = {}
    if required:
        values['root_traits'] = sorted(required)
        values['root_trait_count'] = len(required)
    if forbidden:
        values['root_forbidden'] = sorted(forbidden)
    return values


def root_filter_and_params(trait_ids, root_required, root_forbidden):
    """(RootFilter, bound values) of ``root_required``, names as ids."""
    required = {trait_ids[name] for name in root_required}
    forbidden = {trait_ids[name] for name in root_forbidden}
    return (RootFilter(bool(required), bool(forbidden)),
            root_params(required, forbidden))


def class_names(groups):
    """Every class name the groups ask for."""
    return set().union(*(group.resources for group in groups))


def trait_names(groups, root_required=(), root_forbidden=()):
    """Every trait name the groups and ``root_required`` name."""
    return set(root_required).union(root_forbidden, *(
        set(group.forbidden_traits).union(*group.required_traits)
        for group in groups))


class Lookup(typing.NamedTuple):
    """One step of the order in which a request's names are looked up.

    ``kind``: CLASS or TRAIT (``value`` a name, which must exist),
    ROOTS (``value`` None: some root provider must pass
    ``root_required``, whose names are known, for the request to have
    any candidate), MEMBER_OF (``value`` a ``member_of`` set of
    aggregate uuids, which must hold a provider for the request to have
    any candidate), or ALONE (``value`` a group whose names are known,
    which must have candidates of its own for the request to have any).
    """

    kind: str
    value: typing.Any


CLASS, TRAIT, ROOTS, MEMBER_OF, ALONE = ('class', 'trait', 'roots',
                                         'member_of', 'alone')


def lookup_order(groups, root_required=(), root_forbidden=()):
    """[Lookup] of a request, in the order placement looks its names up.

    Placement stops at the first that fails, which decides between its
    answers to a request naming an unknown class or trait: a 400 naming
    that name, or no candidates when something before it leaves none.
    Its order: ``root_required``'s traits (the required ones, then the
    forbidden ones) and whether a root passes them, then group by group
    in the order given (the
    query's): the group's classes in the order given, its ``member_of``
    sets, its required traits in order, its forbidden ones, and then
    the group searched alone (with ``root_required``), whose lack of
    candidates ends the search before the next group's names. Placement
    takes ``root_required``'s names, those of an ``in:`` set and the
    forbidden names in an order that changes from one process to the
    next; here they come in name order.
    """
    order = [Lookup(TRAIT, name) for name in sorted(root_required)]
    order += [Lookup(TRAIT, name) for name in sorted(root_forbidden)]
    if root_required or root_forbidden:
        order.append(Lookup(ROOTS, None))
    for found in groups:
        order += [Lookup(CLASS, name) for name in found.resources]
        order += [Lookup(MEMBER_OF, frozenset(any_of))
                  for any_of in found.member_of]
        order += [Lookup(TRAIT, name) for any_of in found.required_traits
                  for name in sorted(any_of)]
        order += [Lookup(TRAIT, name)
                  for name in sorted(found.forbidden_traits)]
        order.append(Lookup(ALONE, found))
    return order


def matches_nothing(group):
    """Whether no provider can serve ``group``, whatever the cloud.

    A resourceless group with neither a required trait (or an ``in:``
    set of them) nor a ``member_of`` set: placement looks a resourceless
    group's providers up by those, and finds none without any, whatever
    the group's forbidden traits, forbidden aggregates or ``in_tree``
    (observed black-box, openstack-placement 16.0.0).
    """
    return not (group.resources or group.required_traits or
                group.member_of)


def as_searched(group):
    """``group`` with only the filters placement applies to it.

    A resourceless group's ``in_tree`` must name a provider (else the
    request has no candidates), but limits nothing: placement takes the
    group's providers from every tree (observed black-box,
    openstack-placement 16.0.0). Call once that name is looked up.
    """
    if group.resources or group.in_tree is None:
        return group
    return group._replace(in_tree=None)


def groups_with_ids(groups, rc_ids):
    """The groups with ``rc_amounts``, those with resources first.

    The candidate rows' groups (with resources) come first, then the
    resourceless ones, the order of the groups of
    :class:`resobj.search.index.Plan`.
    """
    groups = [g._replace(rc_amounts={rc_ids[name]: amount for name, amount
                                     in g.resources.items()})
              for g in groups]
    return ([g for g in groups if g.resources] +
            [g for g in groups if not g.resources])


def bounded_limit(limit):
    """``limit``, or None for no limit (none, or more than any binds)."""
    if limit is not None and limit > MAX_LIMIT:
        return None
    return limit


class ResourcelessGroup(typing.NamedTuple):
    """A resourceless group and the providers that may serve it.

    ``providers_by_root``: {root id: [rp_id, ...]}, the providers that
    pass its traits and aggregates, under their own roots, as the DB API
    read them.
    """

    group: Group
    providers_by_root: dict


class SearchRequest(typing.NamedTuple):
    """One request's groups, values and shared facts, for the statements.

    Built by :func:`search_request`. ``groups``: those with resources
    (with ``rc_amounts``); ``resourceless``: the
    :class:`ResourcelessGroup` tuples; ``subtrees``: each
    ``same_subtree`` set as indexes into groups then resourceless;
    ``trait_ids``: {name: id}; ``names``: {class id: name}; ``served``:
    {sharing provider id: {root ids it serves}}; ``shape``: the groups'
    GroupShapes; ``root_filter``: the RootFilter of ``root_required``;
    ``params``: the statements' bound values.
    """

    groups: tuple
    resourceless: tuple
    subtrees: tuple
    trait_ids: dict
    names: dict
    served: dict
    shape: tuple
    root_filter: RootFilter
    params: dict

    def spread_traits(self):
        """Trait ids the spread groups require (checked per combination)."""
        return {self.trait_ids[name] for g in self.groups
                if not g.use_same_provider
                for any_of in g.required_traits for name in any_of}


def search_request(groups, *, trait_ids, tree_roots, names, served,
                   root_required=(), root_forbidden=(), resourceless=(),
                   subtrees=()):
    """The :class:`SearchRequest` of ``groups``, names looked up.

    ``groups``: those with resources (with ``rc_amounts``);
    ``tree_roots``: {in_tree provider uuid: its root id};
    ``root_required`` / ``root_forbidden``: trait names; the other
    arguments are the fields of the same names.
    """
    groups = tuple(groups)
    root_filter, root_values = root_filter_and_params(
        trait_ids, root_required, root_forbidden)
    return SearchRequest(
        groups=groups, resourceless=tuple(resourceless),
        subtrees=tuple(subtrees), trait_ids=trait_ids, names=names,
        served=served, shape=shape(groups), root_filter=root_filter,
        params=dict(params(groups, trait_ids, tree_roots), **root_values))
