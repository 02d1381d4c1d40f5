"""Reporting over HTTP to resobj-api or any placement-compatible service.

Every request states one pinned microversion (``MICROVERSION``): 1.28
is the first with consumer generations, which make the tracker's
allocation writes compare-and-swap, and it has everything else used
here (dict-form allocations 1.12, POST /allocations 1.13, required
traits 1.18, error codes 1.23). The reshape alone states 1.30, the
first with POST /reshaper.

* inventory is written with PUT .../inventories carrying the provider
  generation; a 409 means it moved: re-read and retry (report.py);
* a 404 on DELETE /allocations/{uuid} means there was nothing to delete
  and is not an error;
* timeouts and connection errors are retried with exponential backoff
  and logged once per outage, not once per attempt.
"""

import threading
import time

from keystoneauth1 import exceptions as ksa_exc
from oslo_log import log as logging
import requests

from resobj.compute import exception
from resobj.compute import report

LOG = logging.getLogger(__name__)

MICROVERSION = '1.28'
# POST /reshaper, the one request that needs a newer microversion.
RESHAPER_MICROVERSION = '1.30'
CONCURRENT_UPDATE = 'placement.concurrent_update'
# What "the service did not answer" looks like through requests and
# through a keystoneauth session.
_UNREACHABLE = (requests.ConnectionError, requests.Timeout,
                ksa_exc.ConnectFailure, ksa_exc.ConnectTimeout)


class HTTPReportClient(report.ReportClient):
    """Reports to ``url`` with a fixed token, or via ``auth_session``.

    ``auth_session``: a keystoneauth1 Session (or Adapter) for a service
    behind keystone: it authenticates every request and, when ``url`` is
    None, finds placement in the service catalog; its user needs the
    ``service`` role, which placement's default policy asks of a reshape.
    Without one, requests carry ``X-Auth-Token: token`` and the roles a
    compute service holds, admin and service (resobj-api's noauth2).
    """

    def __init__(self, url=None, token='admin', timeout=30.0, retries=5,
                 backoff=0.2, http=None, auth_session=None):
        if url is None and auth_session is None:
            raise ValueError(
                'HTTPReportClient needs a url or an auth_session')
        self.url = url.rstrip('/') if url else ''
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._auth_session = auth_session
        self._http = http or requests.Session()
        self._headers = {
            'OpenStack-API-Version': 'placement %s' % MICROVERSION,
            'Accept': 'application/json',
        }
        if auth_session is None:
            self._headers['X-Auth-Token'] = token
            self._headers['X-Roles'] = 'admin,service'
        self._outage_logged = False
        self._lock = threading.Lock()

    # Transport.

    def _request(self, method, path, body=None, expect=(200,), quiet=(),
                 microversion=None):
        """The response of ``method path``; errors raise PlacementError.

        Statuses in ``quiet`` are returned as they are for the caller to
        interpret (a 404 on DELETE, a 409 on a generation).
        ``microversion`` replaces MICROVERSION for this request.
        """
        url = self.url + path
        headers = dict(self._headers)
        if microversion is not None:
            headers['OpenStack-API-Version'] = 'placement %s' % microversion
        if body is not None:
            headers['Content-Type'] = 'application/json'
        delay = self.backoff
        last = None
        for attempt in range(1, self.retries + 1):
            try:
                response = self._send(method, url, body, headers)
            except _UNREACHABLE as exc:
                last = exc
                self._log_outage(method, url, exc)
                if attempt < self.retries:
                    time.sleep(delay)
                    delay *= 2
                continue
            self._log_recovery(url)
            if response.status_code in expect or \
                    response.status_code in quiet:
                return response
            raise exception.PlacementError(
                method=method, url=url, status=response.status_code,
                detail=_detail(response))
        raise exception.PlacementUnavailable(url=url, attempts=self.retries,
                                             reason=last)

    def _send(self, method, url, body, headers):
        if self._auth_session is None:
            return self._http.request(method, url, json=body,
                                      headers=headers, timeout=self.timeout)
        kwargs = {}
        if not self.url:
            kwargs['endpoint_filter'] = {'service_type': 'placement'}
        # keystoneauth retries nothing itself here (this client's loop
        # does, with its backoff and logging) and returns every status.
        return self._auth_session.request(
            url, method, json=body, headers=headers, timeout=self.timeout,
            raise_exc=False, connect_retries=0, **kwargs)

    def _log_outage(self, method, url, exc):
        with self._lock:
            if self._outage_logged:
                return
            self._outage_logged = True
        LOG.warning('Placement unreachable (%s %s: %s); retrying with '
                    'backoff', method, url, exc)

    def _log_recovery(self, url):
        if self._outage_logged:
            with self._lock:
                self._outage_logged = False
            LOG.info('Placement reachable again at %s', url)

    # Providers and inventory.

    def ensure_provider(self, uuid, name, parent=None):
        response = self._request('GET', '/resource_providers/%s' % uuid,
                                 quiet=(404,))
        if response.status_code == 200:
            return
        for candidate in (name, '%s-%s' % (name, uuid)):
            body = {'uuid': uuid, 'name': candidate[:200]}
            if parent is not None:
                body['parent_provider_uuid'] = parent
            response = self._request(
                'POST', '/resource_providers', body,
                expect=(200, 201), quiet=(409,))
            if response.status_code != 409:
                return
            # A duplicate: ours created concurrently, or the name taken.
            if self._request('GET', '/resource_providers/%s' % uuid,
                             quiet=(404,)).status_code == 200:
                return
        raise exception.PlacementError(
            method='POST', url=self.url + '/resource_providers', status=409,
            detail='name %s taken' % name)

    def get_inventory(self, provider):
        body = self._request(
            'GET', '/resource_providers/%s/inventories' % provider).json()
        return body['resource_provider_generation'], body['inventories']

    def _put_inventory(self, provider, generation, inventories):
        self._put_with_generation(provider, 'inventories', {
            'resource_provider_generation': generation,
            'inventories': inventories})

    def _put_with_generation(self, provider, what, body):
        """PUT .../``what`` with a generation; GenerationMoved on a race."""
        path = '/resource_providers/%s/%s' % (provider, what)
        response = self._request('PUT', path, body, quiet=(409,))
        if response.status_code == 409:
            if _code(response) == CONCURRENT_UPDATE:
                raise report.GenerationMoved()
            raise exception.PlacementError(
                method='PUT', url=self.url + path, status=409,
                detail=_detail(response))

    def _get_set(self, provider, what):
        """(generation, set) of a provider's ``aggregates`` or ``traits``."""
        body = self._request(
            'GET', '/resource_providers/%s/%s' % (provider, what)).json()
        return body['resource_provider_generation'], set(body[what])

    def _put_set(self, provider, what, generation, values):
        self._put_with_generation(provider, what, {
            'resource_provider_generation': generation,
            what: sorted(values)})

    def get_aggregates(self, provider):
        return self._get_set(provider, 'aggregates')

    def _put_aggregates(self, provider, generation, aggregates):
        self._put_set(provider, 'aggregates', generation, aggregates)

    def get_traits(self, provider):
        return self._get_set(provider, 'traits')

    def _put_traits(self, provider, generation, traits):
        self._put_set(provider, 'traits', generation, traits)

    def get_sharing_providers(self, provider, resource_class):
        _gen, aggregates = self.get_aggregates(provider)
        if not aggregates:
            return []
        found = self._request(
            'GET', '/resource_providers?member_of=in:%s&required=%s'
            % (','.join(sorted(aggregates)), report.SHARING_TRAIT)
        ).json()['resource_providers']
        out = []
        for rp in found:
            if rp['uuid'] == provider:
                continue
            _gen, inventories = self.get_inventory(rp['uuid'])
            if resource_class in inventories:
                out.append(rp['uuid'])
        return out

    # Allocations.

    def get_provider_allocations(self, provider):
        response = self._request(
            'GET', '/resource_providers/%s/allocations' % provider,
            quiet=(404,))
        if response.status_code == 404:
            return {}
        out = {}
        for consumer, entry in response.json()['allocations'].items():
            out[consumer] = report.ConsumerAllocations(
                {provider: dict(entry['resources'])},
                entry.get('consumer_generation'))
        return out

    def get_allocations(self, consumer):
        body = self._request('GET', '/allocations/%s' % consumer).json()
        return report.ConsumerAllocations(
            {rp: dict(entry['resources'])
             for rp, entry in body['allocations'].items()},
            body.get('consumer_generation'), body.get('project_id'),
            body.get('user_id'))

    def replace_allocations(self, consumers):
        # A consumer written with ANY has its generation read first; if
        # it moves between that read and the write, read and try again.
        # Stated generations are the caller's compare-and-swap: no retry.
        any_gen = any(spec.get('generation', report.ANY) is report.ANY
                      for spec in consumers.values())
        attempts = report.GENERATION_RETRIES if any_gen else 1
        for attempt in range(1, attempts + 1):
            try:
                return self._post_allocations(consumers)
            except exception.AllocationConflict as exc:
                if not exc.generation or attempt == attempts:
                    raise

    def _allocations_body(self, consumers):
        body = {}
        for consumer, spec in consumers.items():
            generation = spec.get('generation', report.ANY)
            if generation is report.ANY:
                generation = self.get_allocations(consumer).generation
            body[consumer] = {
                'allocations': {rp: {'resources': amounts}
                                for rp, amounts in
                                spec['allocations'].items()},
                'project_id': spec['project_id'],
                'user_id': spec['user_id'],
                'consumer_generation': generation}
        return body

    def _post_allocations(self, consumers):
        body = self._allocations_body(consumers)
        response = self._request('POST', '/allocations', body,
                                 expect=(204,), quiet=(400, 409))
        if response.status_code in (400, 409):
            raise exception.AllocationConflict(
                consumers=', '.join(sorted(consumers)),
                detail=_detail(response),
                generation=_code(response) == CONCURRENT_UPDATE)

    def reshape(self, inventories, consumers):
        body = {
            'inventories': {
                rp: {'resource_provider_generation': generation,
                     'inventories': wanted}
                for rp, (generation, wanted) in inventories.items()},
            'allocations': self._allocations_body(consumers)}
        response = self._request('POST', '/reshaper', body, expect=(204,),
                                 quiet=(400, 409),
                                 microversion=RESHAPER_MICROVERSION)
        if response.status_code in (400, 409):
            raise exception.ReshapeConflict(
                providers=', '.join(sorted(inventories)),
                detail=_detail(response))

    def delete_allocations(self, consumer):
        response = self._request('DELETE', '/allocations/%s' % consumer,
                                 expect=(204,), quiet=(404,))
        # 404: the consumer held nothing; nothing to report.
        return response.status_code == 204

    def get_usages(self, provider):
        return self._request(
            'GET', '/resource_providers/%s/usages' % provider
        ).json()['usages']


def _errors(response):
    try:
        return response.json().get('errors') or []
    except ValueError:
        return []


def _code(response):
    errors = _errors(response)
    return errors[0].get('code') if errors else None


def _detail(response):
    errors = _errors(response)
    if errors:
        return errors[0].get('detail') or errors[0].get('title')
    return response.text[:300]
