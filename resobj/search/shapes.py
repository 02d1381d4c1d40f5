"""The search's answer: allocation requests and provider summaries.

:func:`resobj.search.combine.requests` finds requests as provider and
class ids (:class:`WholeRequest`, :class:`Combination`); once the
summaries have read the uuids, :func:`as_returned` writes them with
uuids and class names, the plain values the DB API returns:
``({rp_uuid: {class: amount}}, {suffix: [rp_uuid]})``. A summary is
``{'resources': {class: {'capacity', 'used'}}, 'traits': [...],
'parent_provider_uuid', 'root_provider_uuid'}``.
"""

import typing


class WholeRequest(typing.NamedTuple):
    """One provider takes the only group whole."""

    suffix: str
    provider: int


class Combination(typing.NamedTuple):
    """A request from one part per group.

    ``items``: ((rp_id, rc_id, amount), ...); ``mappings``: ((suffix,
    (rp_id, ...)), ...).
    """

    items: tuple
    mappings: tuple


def as_returned(found, uuid, names, whole):
    """The requests ``found`` with uuids and class names.

    ``found``: :meth:`Search.requests` results; ``uuid``: {rp_id:
    uuid}; ``names``: {class id: name}; ``whole``: {class name: amount}
    of the only group, in name order. Returns [({rp_uuid: {class:
    amount}}, {suffix: [rp_uuid]})], providers in uuid order, each
    one's classes by name.

    The candidate rows carry provider ids only; the summaries read
    every uuid once. The requests one provider takes whole share the
    one dict ``whole``: read-only, as every part of the answer.
    """
    returned = []
    for request in found:
        if type(request) is WholeRequest:
            rp_uuid = uuid[request.provider]
            returned.append(({rp_uuid: whole},
                             {request.suffix: [rp_uuid]}))
            continue
        # Every provider of the items is in one group's providers.
        by_suffix = {suffix: [uuid[rp] for rp in providers]
                     for suffix, providers in request.mappings}
        allocations = {}
        for rp_uuid, name, amount in sorted(
                (uuid[rp], names[rc_id], amount)
                for rp, rc_id, amount in request.items):
            resources = allocations.get(rp_uuid)
            if resources is None:
                allocations[rp_uuid] = {name: amount}
            else:
                resources[name] = amount
        returned.append((allocations, by_suffix))
    return returned


def used_only(found, summaries):
    """The summaries of the providers the requests use (before 1.29)."""
    used = {uuid for _allocations, mappings in found
            for chosen in mappings.values() for uuid in chosen}
    return {uuid: found_summary for uuid, found_summary in summaries.items()
            if uuid in used}
