"""The HTTP workload bench/api.py runs against each service.

Every request's status is compared with the expected one, and the few
answers whose content is cheap to know in advance (candidate counts,
usages) are compared too; each mismatch counts as a wrong answer and is
kept (the first few per operation) for the report. Nothing here stops on
a wrong answer: the run goes on and the counts are printed.
"""

import concurrent.futures
import http.client
import json
import multiprocessing
import time
import urllib.parse
import uuid

VERSION = '1.39'
RESOURCES = {'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}
INVENTORY = {'VCPU': {'total': 64, 'allocation_ratio': 16.0},
             'MEMORY_MB': {'total': 262144, 'reserved': 512},
             'DISK_GB': {'total': 10000}}
CANDIDATES = 'resources=VCPU:2,MEMORY_MB:4096,DISK_GB:20'
PROJECTS = ['bench-project-%d' % i for i in range(4)]
TRAITS = ['CUSTOM_BENCH_%d' % i for i in range(10)]
AGGREGATES = [str(uuid.UUID(int=i + 1)) for i in range(20)]
KEEP_EXAMPLES = 3


class Op(object):
    """Figures of one operation (one row of the table)."""

    def __init__(self, name):
        self.name = name
        self.latencies = []
        self.wrong = 0
        self.examples = []
        self.wall = 0.0
        # Concurrent phases: first request sent to last answer received.
        self.span = None
        self.cpu = None
        self.db_cpu = None

    def record_wrong(self, method, path, expected, response, why):
        self.wrong += 1
        if len(self.examples) < KEEP_EXAMPLES:
            self.examples.append({
                'request': '%s %s' % (method, path),
                'expected': expected, 'status': response.status_code,
                'why': why, 'body': response.text[:600]})

    def merge(self, other):
        self.latencies.extend(other.latencies)
        self.wrong += other.wrong
        self.examples.extend(
            other.examples[:KEEP_EXAMPLES - len(self.examples)])

    def as_dict(self):
        lat = sorted(self.latencies)
        n = len(lat)
        out = {'operation': self.name, 'requests': n, 'wrong': self.wrong,
               'wall_s': round(self.wall, 3), 'examples': self.examples}
        if n:
            # Sequential phases: the sum of request latencies, so the
            # client's own answer checks are not charged to the server.
            busy = self.span if self.span is not None else sum(lat)
            # A wrong answer is no work done: the rate counts only the
            # correct ones (a reference claim failing fast on "database
            # is locked" must not raise its throughput).
            out.update({
                'rate': (n - self.wrong) / busy,
                'p50_ms': 1000 * lat[n // 2],
                'p95_ms': 1000 * lat[min(n - 1, int(n * 0.95))],
                'mean_ms': 1000 * sum(lat) / n})
            if self.cpu is not None:
                out['cpu_ms_per_request'] = 1000 * self.cpu / n
                out['db_cpu_ms_per_request'] = 1000 * self.db_cpu / n
        return out


class Response(object):
    """What the checks need of an answer."""

    def __init__(self, status_code, body):
        self.status_code = status_code
        self.content = body

    @property
    def text(self):
        return self.content.decode('utf-8', 'replace')

    def json(self):
        return json.loads(self.content)


class Client(object):
    """One keep-alive connection; times and checks every request.

    The standard library's http.client rather than ``requests``: the
    client runs on the same cores as the services and its time is inside
    every latency, and ``requests`` spends about 1 ms of CPU per request
    (hooks, adapters, cookie handling) where http.client spends about
    0.1 ms. The same client serves both services, so this only narrows
    the share of every latency that is the client's.
    """

    def __init__(self, url):
        parsed = urllib.parse.urlsplit(url)
        self.url = url
        self.host, self.port = parsed.hostname, parsed.port
        self.conn = None
        self.headers = {
            'X-Auth-Token': 'admin',
            'OpenStack-API-Version': 'placement %s' % VERSION,
            'Accept': 'application/json'}

    def _send(self, method, path, body, headers):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port,
                                                   timeout=600)
        self.conn.request(method, path, body=body, headers=headers)
        resp = self.conn.getresponse()
        data = resp.read()
        if resp.will_close:
            self.conn.close()
            self.conn = None
        return Response(resp.status, data)

    def request(self, method, path, body=None, version=None):
        headers = dict(self.headers)
        if version:
            headers['OpenStack-API-Version'] = 'placement %s' % version
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['Content-Type'] = 'application/json'
        try:
            return self._send(method, path, data, headers)
        except (http.client.RemoteDisconnected, ConnectionResetError,
                BrokenPipeError):
            # The server closed an idle keep-alive connection before this
            # request reached it: send it again on a new one, as any HTTP
            # client library does.
            self.conn = None
            return self._send(method, path, data, headers)

    def call(self, op, method, path, expected, body=None, version=None,
             check=None):
        start = time.perf_counter()
        resp = self.request(method, path, body, version)
        op.latencies.append(time.perf_counter() - start)
        if resp.status_code != expected:
            op.record_wrong(method, path, expected, resp, 'status')
            return None
        if check is not None:
            try:
                problem = check(resp.json())
            except ValueError as exc:
                problem = 'body is not JSON: %s' % exc
            if problem:
                op.record_wrong(method, path, expected, resp, problem)
                return None
        return resp


def claim_body(provider, project):
    return {'allocations': {provider: {'resources': dict(RESOURCES)}},
            'project_id': project, 'user_id': 'bench-user',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'}


def _claim_slice(url, claims):
    """Run in a client process: claim each (consumer, provider, project).

    Returns the first-request and last-answer times, the figures and the
    claims that succeeded.
    """
    client = Client(url)
    op = Op('claim')
    done = []
    start = time.perf_counter()
    for claim in claims:
        consumer, provider, project = claim
        if client.call(op, 'PUT', '/allocations/' + consumer, 204,
                       claim_body(provider, project)) is not None:
            done.append(claim)
    return start, time.perf_counter(), op, done


class Workload(object):
    """The sequence of phases; each phase fills one Op."""

    def __init__(self, url, providers, claims, clients, candidates_repeat,
                 usages_repeat, cpu):
        self.client = Client(url)
        self.url = url
        self.n_providers = providers
        self.n_claims = claims
        self.n_clients = clients
        self.candidates_repeat = candidates_repeat
        self.usages_repeat = usages_repeat
        self.cpu = cpu
        self.ops = []
        self.providers = [str(uuid.uuid4()) for _ in range(providers)]
        self.generations = {}
        self.n_made = 0
        self.consumers = []
        # (provider, project) -> number of claims, for the usage checks.
        self.claims_on = {}

    def phase(self, name, body):
        op = Op(name)
        cpu = self.cpu.cpu_snapshot()
        start = time.perf_counter()
        body(op)
        op.wall = time.perf_counter() - start
        op.cpu, op.db_cpu = self.cpu.cpu_since(cpu)
        self.ops.append(op)
        return op

    def phases(self):
        """(name, body) in order; bench/api.py runs each in turn."""
        return [
            ('POST /resource_providers', self.create_providers),
            ('PUT /resource_providers/{u}/inventories', self.set_inventories),
            ('PUT /resource_providers/{u}/traits', self.set_traits),
            ('PUT /resource_providers/{u}/aggregates', self.set_aggregates),
            ('claim, sequential', self.claim_sequential),
            ('claim, %d clients' % self.n_clients, self.claim_concurrent),
            ('GET /allocation_candidates', self.candidates),
            ('GET /allocation_candidates limit=50', self.candidates_limited),
            ('GET /resource_providers/{u}/usages', self.provider_usages),
            ('GET /usages?project_id= (1.39)', self.project_usages),
            ('GET /usages?project_id= (1.37)',
             lambda op: self.project_usages(op, '1.37')),
            ('DELETE /allocations/{c}', self.delete_allocations),
            ('DELETE /resource_providers/{u}', self.delete_providers),
        ]

    def warm_up(self):
        # Every worker loads lazily (policies, schemas, caches) on its
        # first requests. A keep-alive session stays on one worker, so
        # warm up over several connections at once to reach them all.
        def some_reads(_):
            client = Client(self.url)
            op = Op('warm-up')
            for _ in range(10):
                client.call(op, 'GET', '/resource_providers', 200)
                client.call(op, 'GET', '/traits', 200)
                client.call(op, 'GET', '/usages?project_id=nobody', 200)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(some_reads, range(8)))
        for trait in TRAITS:
            self.client.request('PUT', '/traits/' + trait)

    def create_providers(self, op):
        for i, rp in enumerate(self.providers):
            resp = self.client.call(
                op, 'POST', '/resource_providers', 200,
                {'name': 'bench-rp-%05d' % i, 'uuid': rp})
            self.generations[rp] = resp.json()['generation'] if resp else 0

    def _generation(self, rp, resp):
        if resp is not None:
            self.generations[rp] = resp.json()['resource_provider_generation']
        else:
            self.generations[rp] += 1

    def set_inventories(self, op):
        for rp in self.providers:
            body = {'resource_provider_generation': self.generations[rp],
                    'inventories': INVENTORY}
            self._generation(rp, self.client.call(
                op, 'PUT', '/resource_providers/%s/inventories' % rp, 200,
                body))

    def set_traits(self, op):
        for i, rp in enumerate(self.providers):
            body = {'resource_provider_generation': self.generations[rp],
                    'traits': ['HW_CPU_X86_AVX2', TRAITS[i % len(TRAITS)]]}
            self._generation(rp, self.client.call(
                op, 'PUT', '/resource_providers/%s/traits' % rp, 200, body))

    def set_aggregates(self, op):
        n = len(AGGREGATES)
        for i, rp in enumerate(self.providers):
            aggs = sorted({AGGREGATES[i % n], AGGREGATES[(i // n) % n]})
            body = {'resource_provider_generation': self.generations[rp],
                    'aggregates': aggs}
            self._generation(rp, self.client.call(
                op, 'PUT', '/resource_providers/%s/aggregates' % rp, 200,
                body))

    def _new_claims(self):
        # Claim j goes to provider j mod N, so concurrent clients mostly
        # write different providers, as schedulers spread instances.
        claims = []
        for j in range(self.n_made, self.n_made + self.n_claims):
            claims.append((str(uuid.uuid4()),
                           self.providers[j % self.n_providers],
                           PROJECTS[j % len(PROJECTS)]))
        self.n_made += self.n_claims
        return claims

    def _claimed(self, claim):
        # Only claims answered 204 count in the usages the later phases
        # expect; a failed claim must not have left allocations behind.
        consumer, rp, project = claim
        self.consumers.append(consumer)
        self.claims_on[rp, project] = self.claims_on.get((rp, project), 0) + 1

    def claim_sequential(self, op):
        for claim in self._new_claims():
            consumer, rp, project = claim
            if self.client.call(op, 'PUT', '/allocations/' + consumer, 204,
                                claim_body(rp, project)) is not None:
                self._claimed(claim)

    def claim_concurrent(self, op):
        claims = self._new_claims()
        k = self.n_clients
        slices = [claims[i::k] for i in range(k)]
        ctx = multiprocessing.get_context('fork')
        with ctx.Pool(k) as pool:
            results = pool.starmap(_claim_slice,
                                   [(self.url, s) for s in slices])
        for _, _, part, done in results:
            op.merge(part)
            for claim in done:
                self._claimed(claim)
        # The clients' own first-request-to-last-answer span; the phase's
        # wall time would add the pool's start-up.
        op.span = (max(r[1] for r in results) - min(r[0] for r in results))

    def _candidates(self, op, query, expected):
        def check(body):
            got = len(body.get('allocation_requests', ()))
            if got != expected:
                return '%d allocation requests, expected %d' % (
                    got, expected)
            if len(body.get('provider_summaries', ())) != expected:
                return 'provider_summaries does not match'
        for _ in range(self.candidates_repeat):
            self.client.call(op, 'GET', '/allocation_candidates?' + query,
                             200, check=check)

    def candidates(self, op):
        self._candidates(op, CANDIDATES, self.n_providers)

    def candidates_limited(self, op):
        self._candidates(op, CANDIDATES + '&limit=50',
                         min(50, self.n_providers))

    def _used(self, rp):
        return sum(self.claims_on.get((rp, p), 0) for p in PROJECTS)

    def provider_usages(self, op):
        for rp in self.providers:
            want = {rc: n * self._used(rp) for rc, n in RESOURCES.items()}

            def check(body, want=want):
                got = body.get('usages')
                if got != want:
                    return 'usages %r, expected %r' % (got, want)
            self.client.call(op, 'GET', '/resource_providers/%s/usages' % rp,
                             200, check=check)

    def project_usages(self, op, version=VERSION):
        project = PROJECTS[0]
        consumers = sum(n for (rp, p), n in self.claims_on.items()
                        if p == project)
        want = {rc: n * consumers for rc, n in RESOURCES.items()}
        if version >= '1.38':
            want = {'INSTANCE': dict(want, consumer_count=consumers)}

        def check(body):
            if body.get('usages') != want:
                return 'usages %r, expected %r' % (body.get('usages'), want)
        for _ in range(self.usages_repeat):
            self.client.call(op, 'GET', '/usages?project_id=' + project, 200,
                             version=version, check=check)

    def delete_allocations(self, op):
        for consumer in self.consumers:
            self.client.call(op, 'DELETE', '/allocations/' + consumer, 204)

    def delete_providers(self, op):
        for rp in self.providers:
            self.client.call(op, 'DELETE', '/resource_providers/' + rp, 204)
