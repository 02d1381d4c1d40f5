"""The route table: the API's table of contents.

Each entry maps a URL template to {method: handler}. A URL no entry
matches is a 404; a method the entry lacks (or that the request's
microversion lacks) is a 405 with ``Allow``.
"""

import re

from resobj.api import errors
from resobj.api.handlers import aggregate
from resobj.api.handlers import allocation
from resobj.api.handlers import allocation_candidate
from resobj.api.handlers import inventory
from resobj.api.handlers import reshaper
from resobj.api.handlers import resource_class
from resobj.api.handlers import resource_provider
from resobj.api.handlers import root
from resobj.api.handlers import trait
from resobj.api.handlers import usage
from resobj.api import microversion

ROUTES = [
    # HEAD: the health check of a load balancer that sends HEAD (webob
    # answers it as GET, without the body).
    ('', {'GET': root.home, 'HEAD': root.home}),
    ('/', {'GET': root.home, 'HEAD': root.home}),
    ('/resource_classes', {
        'GET': resource_class.list_resource_classes,
        'POST': resource_class.create_resource_class}),
    ('/resource_classes/{name}', {
        'GET': resource_class.get_resource_class,
        'PUT': resource_class.update_resource_class,
        'DELETE': resource_class.delete_resource_class}),
    ('/resource_providers', {
        'GET': resource_provider.list_resource_providers,
        'POST': resource_provider.create_resource_provider}),
    ('/resource_providers/{uuid}', {
        'GET': resource_provider.get_resource_provider,
        'PUT': resource_provider.update_resource_provider,
        'DELETE': resource_provider.delete_resource_provider}),
    ('/resource_providers/{uuid}/inventories', {
        'GET': inventory.get_inventories,
        'POST': inventory.create_inventory,
        'PUT': inventory.set_inventories,
        'DELETE': inventory.delete_inventories}),
    ('/resource_providers/{uuid}/inventories/{resource_class}', {
        'GET': inventory.get_inventory,
        'PUT': inventory.update_inventory,
        'DELETE': inventory.delete_inventory}),
    ('/resource_providers/{uuid}/usages', {
        'GET': usage.list_usages}),
    ('/resource_providers/{uuid}/aggregates', {
        'GET': aggregate.get_aggregates,
        'PUT': aggregate.set_aggregates}),
    ('/resource_providers/{uuid}/allocations', {
        'GET': allocation.list_for_resource_provider}),
    ('/resource_providers/{uuid}/traits', {
        'GET': trait.list_traits_for_resource_provider,
        'PUT': trait.update_traits_for_resource_provider,
        'DELETE': trait.delete_traits_for_resource_provider}),
    ('/allocations', {
        'POST': allocation.set_allocations}),
    ('/allocations/{consumer_uuid}', {
        'GET': allocation.list_for_consumer,
        'PUT': allocation.set_allocations_for_consumer,
        'DELETE': allocation.delete_allocations}),
    ('/allocation_candidates', {
        'GET': allocation_candidate.list_allocation_candidates}),
    # resobj's own: why a request finds no candidates (placement has no
    # /resobj routes, so no client of placement can reach it by chance).
    ('/resobj/allocation_candidates/explain', {
        'GET': allocation_candidate.explain_allocation_candidates}),
    ('/traits', {
        'GET': trait.list_traits}),
    ('/traits/{name}', {
        'GET': trait.get_trait,
        'PUT': trait.put_trait,
        'DELETE': trait.delete_trait}),
    ('/usages', {
        'GET': usage.get_total_usages}),
    ('/reshaper', {
        'POST': reshaper.reshape}),
]


def _compile(template):
    pattern = re.sub(r'\{(\w+)\}', r'(?P<\1>[^/]+)', template)
    # \Z, not $: $ also matches before a final newline.
    return re.compile(r'^%s\Z' % pattern)


class Router:
    def __init__(self, routes=ROUTES):
        self._routes = [(_compile(t), methods) for t, methods in routes]

    def find(self, path, method, version):
        """(handler, url variables) or raise the HTTPError to answer."""
        for pattern, methods in self._routes:
            match = pattern.match(path)
            if not match:
                continue
            handler = methods.get(method)
            if handler is None:
                # As in placement, a method the URL never has is a 405
                # whatever the version, naming every method it has.
                raise _not_allowed(method, list(methods))
            if microversion.serves(handler, version):
                return handler, match.groupdict()
            if getattr(handler, 'unavailable_status', 404) == 404:
                # The method is newer than the request: as if unrouted.
                break
            # Placement's answer for a method newer than the request on
            # a route that has others: a 405 without Allow.
            raise errors.HTTPError(
                405, 'The method %s is not allowed for this resource.'
                % method, explained=True)
        raise errors.not_found('')


def _not_allowed(method, allowed):
    return errors.HTTPError(
        405, 'The method %s is not allowed for this resource. \n\n The '
        'method specified is not allowed for this resource.' % method,
        headers={'Allow': ', '.join(allowed)}, explained=True)
