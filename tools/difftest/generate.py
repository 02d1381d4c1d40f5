"""Seeded request sequences: the same seed gives the same sequence.

A sequence is a Python generator: it yields a request (a dict) and is
sent the reference's answer, from which it reads what a client would
(a provider's generation, a consumer's generation), so the next request
is the one a client would make. The runner sends the same request to
resobj-api and compares.

Each sequence starts from a clean cloud (it deletes what it finds, which
exercises the delete paths too), builds providers, trees, inventories,
traits, aggregates and allocations at random microversions 1.0-1.39, and
mixes in malformed variants of each request.
"""

import json
import random
import uuid


MAX_MINOR = 39
STANDARD_CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'SRIOV_NET_VF',
                    'IPV4_ADDRESS']
STANDARD_TRAITS = ['HW_CPU_X86_AVX', 'HW_CPU_X86_SSE', 'STORAGE_DISK_SSD',
                   'COMPUTE_STATUS_DISABLED', 'MISC_SHARES_VIA_AGGREGATE']
# The traits of the providers of Sequence.forest, and of the same_subtree
# groups that ask for them.
FOREST_TRAITS = STANDARD_TRAITS[:3]
# Accept values a client may send besides JSON's: some rule JSON out,
# some take it among others, some are no media type at all.
ODD_ACCEPTS = ['text/html', 'text/plain', 'application/xml', '*/*;q=0',
               'application/json;q=0', 'text/*', 'image/png', 'garbage',
               'application/json, text/html', 'application/*',
               'text/html;q=0.9, application/json;q=0.1', '',
               'application/json;charset=utf-8']
# White space a client may leave around a same_subtree suffix, as it
# reads in a URL.
SPACES = ['%20', '%20%20', '%09', '%C2%A0']


def request(method, path, version=None, body=None, headers=None,
            raw=None, deviation=None):
    """A request: ``body`` is JSON-encoded, ``raw`` bytes sent as is.

    A body goes with ``Content-Type: application/json`` unless
    ``headers`` name another, or None for none (a header given as None
    is not sent; ``Accept: None`` sends no ``Accept``).
    ``deviation``: the name of the documented deviation (see
    ``deviations``) this request undoes, whose answers differ by it.
    """
    req = {'method': method, 'path': path, 'version': version,
           'headers': dict(headers or {})}
    if deviation is not None:
        req['deviation'] = deviation
    if body is not None:
        req['body'] = json.dumps(body).encode()
        req['headers'].setdefault('Content-Type', 'application/json')
    elif raw is not None:
        req['body'] = raw
        req['headers'].setdefault('Content-Type', 'application/json')
    return req


def _json(answer):
    data = answer.json()
    return data if isinstance(data, dict) else {}


class Sequence:
    def __init__(self, seed, length, chosen=None, previous=(),
                 forest=False):
        """``chosen``: a set to add every uuid the sequence picks to.

        ``previous``: the consumers of the sequence before, whose
        allocations the clean-up deletes on both servers even where
        only resobj has them (after a documented deviation).
        ``forest``: start from a few nested trees (see :meth:`forest`)
        and ask for candidates, mostly with ``same_subtree``, three
        times as often: random trees rarely give such a request any
        candidate to compare.
        """
        self.forest_first = forest
        # How often a 1.36+ candidate request has same_subtree groups,
        # and how much likelier than that the other filters of a
        # candidate request are.
        self.subtree_share = 0.8 if forest else 0.3
        self.filter_share = 0.3 if forest else 1.0
        self.rng = random.Random(seed)
        self.length = length
        self.chosen = set() if chosen is None else chosen
        self.previous = list(previous)
        self.providers = []      # uuids the reference has (as we believe)
        self.classes = list(STANDARD_CLASSES)
        self.custom_classes = []
        self.traits = list(STANDARD_TRAITS)
        self.custom_traits = []
        self.aggregates = [self.new_uuid() for _ in range(4)]
        self.consumers = [self.new_uuid() for _ in range(6)]
        self.projects = ['project-a', 'project-b']

    # -- random pieces -------------------------------------------------

    def new_uuid(self):
        value = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.chosen.add(value)
        return value

    def version(self, minimum=0, maximum=MAX_MINOR):
        roll = self.rng.random()
        if roll < 0.05:
            return None
        if roll < 0.15:
            return 'latest'
        if roll < 0.17 and minimum > 0:
            # Below the feature's version: usually a 404 or 405.
            return '1.%d' % self.rng.randint(0, minimum - 1)
        return '1.%d' % self.rng.randint(minimum, maximum)

    @staticmethod
    def minor(version):
        if version is None:
            return 0
        if version == 'latest':
            return MAX_MINOR
        return int(version.split('.')[1])

    def pick(self, items, default=None):
        return self.rng.choice(items) if items else default

    def sample(self, items, low=0, high=3):
        k = min(len(items), self.rng.randint(low, high))
        return self.rng.sample(items, k)

    def provider(self):
        if self.providers and self.rng.random() < 0.9:
            return self.rng.choice(self.providers)
        return self.new_uuid()

    def name(self):
        return self.rng.choice(['rp', 'compute', 'numa', 'pf', 'share',
                                'node']) + '-%d' % self.rng.randint(0, 20)

    def malformed(self):
        return self.rng.random() < 0.15

    # -- the sequence --------------------------------------------------

    def steps(self):
        yield from self.clean()
        if self.forest_first:
            yield from self.forest()
        ops = [
            (self.create_provider, 8), (self.get_provider, 3),
            (self.list_providers, 4), (self.update_provider, 2),
            (self.delete_provider, 1), (self.set_inventories, 6),
            (self.inventory_one, 3), (self.get_inventories, 2),
            (self.set_aggregates, 3), (self.set_provider_traits, 3),
            (self.trait_requests, 3), (self.resource_classes, 3),
            (self.put_allocations, 6), (self.post_allocations, 2),
            (self.get_allocations, 2), (self.delete_allocations, 1),
            (self.usages, 2),
            (self.candidates, 15 if self.forest_first else 5),
            (self.reshape, 2),
            (self.odd_request, 3),
            (self.careless_write, 2), (self.odd_accept, 2),
        ]
        funcs = [f for f, _ in ops]
        weights = [w for _, w in ops]
        for _ in range(self.length):
            op = self.rng.choices(funcs, weights)[0]
            yield from op()

    def clean(self):
        answer = yield request('GET', '/resource_providers', '1.14')
        rps = _json(answer).get('resource_providers', [])
        # Every consumer of every provider, earlier sequences' included,
        # so that each sequence starts from an empty cloud.
        consumers = set(self.previous)
        for rp in rps:
            answer = yield request(
                'GET', '/resource_providers/%s/allocations' % rp['uuid'],
                '1.14')
            consumers.update(_json(answer).get('allocations', {}))
        for consumer in sorted(consumers):
            yield request('DELETE', '/allocations/%s' % consumer, '1.28')
        # Children before parents: deepest first.
        by_uuid = {rp['uuid']: rp for rp in rps}

        def depth(rp):
            d = 0
            while rp.get('parent_provider_uuid') in by_uuid:
                rp = by_uuid[rp['parent_provider_uuid']]
                d += 1
            return d
        for rp in sorted(rps, key=depth, reverse=True):
            yield request('DELETE', '/resource_providers/%s' % rp['uuid'],
                          '1.14')
        answer = yield request('GET', '/traits?name=startswith:CUSTOM_',
                               '1.6')
        for trait in _json(answer).get('traits', []):
            yield request('DELETE', '/traits/%s' % trait, '1.6')
        answer = yield request('GET', '/resource_classes', '1.2')
        for rc in _json(answer).get('resource_classes', []):
            if rc['name'].startswith('CUSTOM_'):
                yield request('DELETE', '/resource_classes/%s' % rc['name'],
                              '1.2')

    def _generation(self, rp_uuid):
        answer = yield request('GET', '/resource_providers/%s' % rp_uuid,
                               self.version())
        gen = _json(answer).get('generation', 0)
        if self.rng.random() < 0.08:
            gen = gen + self.rng.choice([1, -1, 7])
        return gen

    def _consumer_generation(self, consumer):
        answer = yield request('GET', '/allocations/%s' % consumer, '1.28')
        gen = _json(answer).get('consumer_generation')
        if self.rng.random() < 0.08:
            gen = self.rng.choice([None, 0, 5])
        return gen

    # -- providers -----------------------------------------------------

    def create_provider(self):
        version = self.version()
        minor = self.minor(version)
        rp_uuid = self.new_uuid()
        body = {'name': self.name() + '-' + rp_uuid[:4]}
        if self.rng.random() < 0.9:
            body['uuid'] = rp_uuid
        if minor >= 14 and self.providers and self.rng.random() < 0.4:
            body['parent_provider_uuid'] = self.provider()
        if self.malformed():
            body = self.mutate(body)
        answer = yield request('POST', '/resource_providers', version,
                               body)
        if answer.status in (200, 201) and body.get('uuid') == rp_uuid:
            self.providers.append(rp_uuid)

    def forest(self):
        """Two or three trees as nova builds them for NUMA and devices.

        A root with disk, two cells with CPU and memory, and under each
        cell one or two functions with devices; traits and aggregates
        drawn from the ones the requests draw theirs from, so that
        ``same_subtree`` requests find candidates in some trees and
        not in others. Every request valid, at the newest version.
        """
        version = '1.%d' % MAX_MINOR
        for _tree in range(self.rng.randint(2, 3)):
            root = yield from self._forest_node(version, None, ['DISK_GB'])
            for _cell in range(2):
                cell = yield from self._forest_node(
                    version, root, ['VCPU', 'MEMORY_MB'])
                for _function in range(self.rng.randint(1, 2)):
                    yield from self._forest_node(
                        version, cell, ['SRIOV_NET_VF'])

    def _forest_node(self, version, parent, classes):
        """One provider of :meth:`forest`, with inventory and traits."""
        rp = self.new_uuid()
        body = {'name': self.name() + '-' + rp[:4], 'uuid': rp}
        if parent is not None:
            body['parent_provider_uuid'] = parent
        answer = yield request('POST', '/resource_providers', version, body)
        if answer.status not in (200, 201):
            return rp
        self.providers.append(rp)
        gen = _json(answer).get('generation', 0)
        answer = yield request(
            'PUT', '/resource_providers/%s/inventories' % rp, version,
            {'resource_provider_generation': gen,
             'inventories': {rc: {'total': self.rng.choice([4, 8, 16])}
                             for rc in classes}})
        gen = _json(answer).get('resource_provider_generation', gen)
        traits = self.sample(FOREST_TRAITS, 0, 2)
        if traits:
            answer = yield request(
                'PUT', '/resource_providers/%s/traits' % rp, version,
                {'traits': traits, 'resource_provider_generation': gen})
            gen = _json(answer).get('resource_provider_generation', gen)
        if self.rng.random() < 0.5:
            yield request(
                'PUT', '/resource_providers/%s/aggregates' % rp, version,
                {'aggregates': self.sample(self.aggregates, 1, 2),
                 'resource_provider_generation': gen})
        return rp

    def get_provider(self):
        yield request('GET', '/resource_providers/%s' % self.provider(),
                      self.version())

    def list_providers(self):
        version = self.version()
        minor = self.minor(version)
        params = []
        roll = self.rng.random
        if roll() < 0.2:
            params.append('name=%s' % self.name())
        if roll() < 0.2:
            params.append('uuid=%s' % self.provider())
        if minor >= 3 and roll() < 0.3:
            aggs = self.sample(self.aggregates, 1, 2)
            value = ','.join(aggs)
            params.append('member_of=%s' % (
                'in:' + value if len(aggs) > 1 else value))
        if minor >= 4 and roll() < 0.3:
            params.append('resources=%s' % ','.join(
                '%s:%d' % (rc, self.rng.randint(1, 4))
                for rc in self.sample(self.classes, 1, 2)))
        if minor >= 14 and roll() < 0.2:
            params.append('in_tree=%s' % self.provider())
        if minor >= 18 and roll() < 0.3:
            for _ in range(self.rng.choice([1, 1, 2])):
                traits = self.sample(self.traits, 1, 2)
                params.append('required=%s' % ','.join(
                    ('!' + t if minor >= 22 and roll() < 0.3 else t)
                    for t in traits))
        if minor >= 18 and roll() < 0.1:
            # Unknown names, reported in the order given.
            params.append(self.rng.choice([
                'required=CUSTOM_NOPE_Z,CUSTOM_NOPE_A',
                'resources=CUSTOM_NOPE_Z:1,CUSTOM_NOPE_A:1']))
        if self.malformed():
            params.append(self.rng.choice([
                'resources=VCPU', 'resources=VCPU:x', 'member_of=not-a-uuid',
                'required=', 'in_tree=nope', 'foo=bar', 'uuid=abc',
                'required=!!HW_CPU_X86_AVX', 'member_of=in:',
                'resources=NOPE:1', 'limit=3',
                'member_of=%s%s' % (self.pick(self.aggregates),
                                    self.pick(SPACES))]))
        path = '/resource_providers'
        if params:
            path += '?' + '&'.join(params)
        yield request('GET', path, version)

    def update_provider(self):
        rp = self.provider()
        version = self.version()
        body = {'name': self.name() + '-u' + rp[:4]}
        if self.minor(version) >= 14 and self.rng.random() < 0.4:
            body['parent_provider_uuid'] = self.rng.choice(
                [None, self.provider()])
        if self.malformed():
            body = self.mutate(body)
        yield request('PUT', '/resource_providers/%s' % rp, version, body)

    def delete_provider(self):
        rp = self.provider()
        answer = yield request('DELETE', '/resource_providers/%s' % rp,
                               self.version())
        if answer.status == 204 and rp in self.providers:
            self.providers.remove(rp)

    # -- inventories ---------------------------------------------------

    def inventory_record(self, version=None):
        record = {'total': self.rng.choice([1, 4, 8, 16, 1024])}
        if self.rng.random() < 0.5:
            record['reserved'] = self.rng.choice([0, 1, 2])
        if self.rng.random() < 0.3:
            record['allocation_ratio'] = self.rng.choice([1.0, 1.5, 16.0])
        if self.rng.random() < 0.3:
            record['max_unit'] = self.rng.choice([1, 4, 8])
        if self.rng.random() < 0.2:
            record['min_unit'] = self.rng.choice([1, 2])
        if self.rng.random() < 0.2:
            record['step_size'] = self.rng.choice([1, 2])
        return record

    @staticmethod
    def valid(record):
        """``record`` with reserved below total.

        Placement does not check that in a reshape (a documented
        deviation), and a sequence that diverged there would differ in
        every later generation.
        """
        if record.get('reserved', 0) >= record['total']:
            record['reserved'] = 0
        return record

    def set_inventories(self):
        rp = self.provider()
        version = self.version()
        gen = yield from self._generation(rp)
        inventories = {rc: self.inventory_record()
                       for rc in self.sample(self.classes, 0, 3)}
        body = {'resource_provider_generation': gen,
                'inventories': inventories}
        if self.malformed():
            body = self.mutate(body)
        yield request('PUT', '/resource_providers/%s/inventories' % rp,
                      version, body)

    def inventory_one(self):
        rp = self.provider()
        version = self.version()
        rc = self.pick(self.classes)
        gen = yield from self._generation(rp)
        body = dict(self.inventory_record(), resource_provider_generation=gen)
        roll = self.rng.random()
        if roll < 0.35:
            if self.rng.random() < 0.3:
                # One it has: a conflict, whose detail placement takes
                # from its database.
                answer = yield request(
                    'GET', '/resource_providers/%s/inventories' % rp, '1.0')
                rc = self.pick(sorted(_json(answer).get('inventories', {})),
                               rc)
            body['resource_class'] = rc
            if self.malformed():
                body = self.mutate(body)
            yield request('POST', '/resource_providers/%s/inventories' % rp,
                          version, body)
        elif roll < 0.7:
            if self.malformed():
                body = self.mutate(body)
            yield request('PUT', '/resource_providers/%s/inventories/%s'
                          % (rp, rc), version, body)
        elif roll < 0.85:
            yield request('DELETE', '/resource_providers/%s/inventories/%s'
                          % (rp, rc), version)
        else:
            yield request('DELETE', '/resource_providers/%s/inventories'
                          % rp, self.version(5))

    def get_inventories(self):
        rp = self.provider()
        if self.rng.random() < 0.5:
            yield request('GET', '/resource_providers/%s/inventories' % rp,
                          self.version())
        else:
            yield request('GET', '/resource_providers/%s/inventories/%s'
                          % (rp, self.pick(self.classes)), self.version())

    # -- aggregates and traits ------------------------------------------

    def set_aggregates(self):
        rp = self.provider()
        version = self.version(1)
        aggs = self.sample(self.aggregates, 0, 3)
        if self.minor(version) >= 19:
            gen = yield from self._generation(rp)
            body = {'aggregates': aggs, 'resource_provider_generation': gen}
        else:
            body = aggs
        if self.malformed():
            body = self.mutate(body)
        yield request('PUT', '/resource_providers/%s/aggregates' % rp,
                      version, body)
        yield request('GET', '/resource_providers/%s/aggregates' % rp,
                      version)

    def set_provider_traits(self):
        rp = self.provider()
        version = self.version(6)
        if self.rng.random() < 0.15:
            yield request('DELETE', '/resource_providers/%s/traits' % rp,
                          version)
            return
        gen = yield from self._generation(rp)
        body = {'traits': self.sample(self.traits, 0, 4),
                'resource_provider_generation': gen}
        if self.rng.random() < 0.05:
            body['traits'].append('CUSTOM_UNKNOWN_TRAIT')
        if self.malformed():
            body = self.mutate(body)
        yield request('PUT', '/resource_providers/%s/traits' % rp, version,
                      body)
        yield request('GET', '/resource_providers/%s/traits' % rp, version)

    def trait_requests(self):
        version = self.version(6)
        roll = self.rng.random()
        if roll < 0.35:
            name = 'CUSTOM_T%d' % self.rng.randint(0, 9)
            if self.malformed():
                name = self.rng.choice(['custom_lower', 'NOT_CUSTOM',
                                        'CUSTOM_' + 'X' * 300, 'CUSTOM_-'])
            answer = yield request('PUT', '/traits/%s' % name, version)
            if answer.status == 201:
                self.traits.append(name)
                self.custom_traits.append(name)
        elif roll < 0.55:
            params = self.rng.choice([
                '', '?name=startswith:CUSTOM', '?name=in:%s' % ','.join(
                    self.sample(self.traits, 1, 3)),
                '?associated=true', '?associated=false',
                '?associated=maybe', '?name=foo', '?name=in:'])
            yield request('GET', '/traits' + params, version)
        elif roll < 0.8:
            yield request('GET', '/traits/%s' % self.pick(
                self.traits + ['CUSTOM_NOPE']), version)
        else:
            name = self.pick(
                self.custom_traits + ['HW_CPU_X86_AVX', 'CUSTOM_NOPE'])
            answer = yield request('DELETE', '/traits/%s' % name, version)
            if answer.status == 204 and name in self.custom_traits:
                self.custom_traits.remove(name)
                self.traits.remove(name)

    def resource_classes(self):
        if self.custom_classes and self.rng.random() < 0.2:
            yield from self.rename_class()
            return
        version = self.version(2)
        minor = self.minor(version)
        roll = self.rng.random()
        name = 'CUSTOM_RC%d' % self.rng.randint(0, 9)
        if self.malformed():
            name = self.rng.choice(['custom_x', 'VCPU', 'CUSTOM_' + 'Y' * 300,
                                    'CUSTOM_!'])
        if roll < 0.3:
            answer = yield request('POST', '/resource_classes', version,
                                   {'name': name})
            ok = answer.status == 201
        elif roll < 0.5:
            body = {'name': name} if minor < 7 else None
            answer = yield request('PUT', '/resource_classes/%s' % name,
                                   version, body)
            ok = answer.status == 201
        elif roll < 0.65:
            yield request('GET', '/resource_classes', version)
            return
        elif roll < 0.8:
            yield request('GET', '/resource_classes/%s' % self.pick(
                self.classes), version)
            return
        else:
            name = self.pick(self.custom_classes + ['VCPU', 'CUSTOM_NONE'])
            answer = yield request('DELETE', '/resource_classes/%s' % name,
                                   version)
            if answer.status == 204 and name in self.custom_classes:
                self.custom_classes.remove(name)
                self.classes.remove(name)
            return
        if ok and name not in self.classes:
            self.classes.append(name)
            self.custom_classes.append(name)

    def rename_class(self):
        """Rename a custom class (1.2-1.6), often onto another's name."""
        version = '1.%d' % self.rng.randint(2, 6)
        old = self.pick(self.custom_classes)
        new = self.rng.choice([
            self.pick(self.custom_classes),         # itself, or a conflict
            'CUSTOM_RC%d' % self.rng.randint(0, 9)])
        if self.rng.random() < 0.1:
            old = 'CUSTOM_NONE'
        answer = yield request('PUT', '/resource_classes/%s' % old, version,
                               {'name': new})
        if answer.status == 200 and old != new:
            for names in (self.classes, self.custom_classes):
                names[names.index(old)] = new

    # -- allocations -----------------------------------------------------

    def _allocations(self, minor):
        rps = self.sample(self.providers, 1, 2) or [self.new_uuid()]
        allocs = {}
        for rp in rps:
            allocs[rp] = {'resources': {
                rc: self.rng.choice([1, 1, 2, 4, 512])
                for rc in self.sample(self.classes, 1, 2)}}
        if minor < 12:
            return [{'resource_provider': {'uuid': rp}, 'resources':
                     a['resources']} for rp, a in allocs.items()]
        return allocs

    def _consumer_body(self, consumer, minor, allocations=None):
        if allocations is None:
            allocations = self._allocations(minor)
        body = {'allocations': allocations}
        if minor >= 8:
            body['project_id'] = self.pick(self.projects)
            body['user_id'] = 'user-a'
        if minor >= 28:
            body['consumer_generation'] = (
                yield from self._consumer_generation(consumer))
        if minor >= 38:
            body['consumer_type'] = self.rng.choice(['INSTANCE', 'MIGRATION',
                                                     'INSTANCE'])
        return body

    def put_allocations(self):
        version = self.version()
        minor = self.minor(version)
        consumer = self.pick(self.consumers)
        allocations = None
        if minor >= 12 and self.rng.random() < 0.1:
            allocations = {}
        body = yield from self._consumer_body(consumer, minor, allocations)
        if self.malformed():
            body = self.mutate(body)
        yield request('PUT', '/allocations/%s' % consumer, version, body)

    def post_allocations(self):
        version = self.version(13)
        minor = max(self.minor(version), 13)
        body = {}
        for consumer in self.sample(self.consumers, 1, 3):
            body[consumer] = yield from self._consumer_body(
                consumer, minor, self._allocations(minor))
        if minor >= 34 and self.rng.random() < 0.4:
            key = self.pick(list(body))
            body[key]['mappings'] = self.rng.choice([
                {}, {'g1': [self.provider()]}, {'g1': []}])
        if self.malformed():
            body = self.mutate(body)
        yield request('POST', '/allocations', version, body)

    def get_allocations(self):
        if self.rng.random() < 0.6:
            yield request('GET', '/allocations/%s' % self.pick(
                self.consumers), self.version())
        else:
            yield request('GET', '/resource_providers/%s/allocations'
                          % self.provider(), self.version())

    def delete_allocations(self):
        yield request('DELETE', '/allocations/%s' % self.pick(
            self.consumers), self.version())

    def usages(self):
        if self.rng.random() < 0.5:
            yield request('GET', '/resource_providers/%s/usages'
                          % self.provider(), self.version())
        else:
            version = self.version(9)
            params = ['project_id=%s' % self.pick(self.projects)]
            if self.rng.random() < 0.4:
                params.append('user_id=user-a')
            if self.minor(version) >= 38 and self.rng.random() < 0.4:
                params.append('consumer_type=%s' % self.rng.choice(
                    ['INSTANCE', 'MIGRATION', 'all', 'unknown']))
            if self.malformed():
                params = self.rng.choice([[], ['user_id=x'], ['foo=1']])
            yield request('GET', '/usages?' + '&'.join(params), version)

    def candidates(self):
        version = self.version(10)
        minor = self.minor(version)

        def roll():
            return self.rng.random() / self.filter_share
        params = ['resources=%s' % ','.join(
            '%s:%d' % (rc, self.rng.choice([1, 1, 2, 4]))
            for rc in self.sample(STANDARD_CLASSES[:3], 1, 3))]
        if minor >= 16 and roll() < 0.3:
            params.append('limit=%d' % self.rng.randint(1, 3))
        if minor >= 17 and roll() < 0.3:
            params.append('required=%s' % self.required_value(minor))
        if minor >= 21 and roll() < 0.2:
            params.append('member_of=%s' % self.member_of_value(minor))
        if minor >= 25 and roll() < 0.3:
            params.append('resources1=%s:1' % self.pick(
                STANDARD_CLASSES[:3]))
            params.append('group_policy=%s' % self.rng.choice(
                ['none', 'isolate']))
        if minor >= 31 and roll() < 0.15:
            params.append('in_tree=%s' % self.provider())
        if minor >= 35 and roll() < 0.2:
            params.append('root_required=%s' % self.rng.choice(
                ['!COMPUTE_STATUS_DISABLED', 'HW_CPU_X86_AVX']))
        if minor >= 36 and self.rng.random() < self.subtree_share:
            params += self.subtree_groups(minor)
        if roll() < 0.15:
            params += self.unknown_names(minor)
        if self.rng.random() < 0.1:
            params = self.orphan_groups(minor)
        if self.malformed():
            params = self.rng.choice([
                [], ['resources=VCPU'], ['resources=VCPU:0'],
                params + ['group_policy=maybe'], params + ['limit=0'],
                params + ['resources1=VCPU:1'], ['resources=FOO:1']]
                + self.bad_subtrees(params, minor) + self.spaced_uuids(
                    params, minor))
        yield request('GET', '/allocation_candidates?' + '&'.join(params),
                      version)

    def orphan_groups(self, minor):
        """Candidate parameters of groups some of which have no resources.

        The unsuffixed group among them: ``required``, ``member_of`` or
        ``in_tree`` without ``resources``. Before 1.36 placement names
        the orphaned keys (required traits first, then member_of) in
        the query's order, or says a group lacks resources; from 1.36
        the groups same_subtree must name; and which comes first when
        no group has resources at all.
        """
        roll = self.rng.random
        suffixes = ['']
        if minor >= 25:
            suffixes += ['1', '2', '10'] if minor < 33 else ['_P', '1', '_Q']
        keys = ['required'] * (minor >= 17) + ['member_of'] * (minor >= 21)
        if minor >= 31:
            keys.append('in_tree')
        params, named = [], []
        for suffix in self.sample(suffixes, 1, 3):
            resourced = roll() < 0.4
            if resourced:
                params.append('resources%s=%s:1' % (
                    suffix, self.pick(STANDARD_CLASSES[:3])))
            elif suffix:
                named.append(suffix)
            for key in self.sample(keys, 0 if resourced else 1, 2):
                params.append('%s%s=%s' % (key, suffix, self._group_value(
                    key, minor)))
        if minor >= 36 and named and roll() < 0.5:
            params.append('same_subtree=%s' % ','.join(
                self.sample(named, 1, len(named))))
        if minor >= 25 and roll() < 0.6:
            params.append('group_policy=none')
        if minor >= 16 and roll() < 0.2:
            params.append('limit=1')
        self.rng.shuffle(params)
        return params

    def _group_value(self, key, minor):
        """A value of a group's ``required``, ``member_of`` or ``in_tree``."""
        if key == 'in_tree':
            return self.provider()
        if key == 'member_of':
            return self.member_of_value(minor)
        if minor >= 22 and self.rng.random() < 0.3:
            # Forbidden traits alone orphan no key.
            return '!' + self.pick(self.traits)
        return self.required_value(minor)

    def spaced_uuids(self, params, minor):
        """``params`` with an aggregate or provider uuid amid white space.

        Placement refuses it in member_of, and takes it in a candidate
        search's in_tree.
        """
        found = []
        if minor >= 21:
            found.append(params + ['member_of=%s%s' % (
                self.pick(SPACES), self.pick(self.aggregates))])
        if minor >= 31:
            found.append(params + ['in_tree=%s%s' % (
                self.provider(), self.pick(SPACES))])
        return found

    def bad_subtrees(self, params, minor):
        """Malformed variants of a 1.36+ request's same_subtree values.

        Suffixes of no group (several, over several same_subtree
        parameters, which placement names all, each once), white space
        alone (the unsuffixed group), and a group policy missing beside
        them (which placement reports after the suffixes).
        """
        if minor < 36:
            return []
        given = [p for p in params if p.startswith('same_subtree=')]
        rest = [p for p in params
                if not p.startswith(('same_subtree=', 'group_policy='))]
        return [
            params + ['same_subtree=_NOPE_%d,_NOPE_%d' % tuple(
                self.rng.sample(range(9), 2))],
            params + ['same_subtree=_NOPE_1', 'same_subtree=_NOPE_2,_NOPE_1'],
            params + ['same_subtree=' + self.pick(SPACES)],
            rest + given + ['same_subtree=_NOPE_3'],
        ]

    def required_value(self, minor):
        """A ``required`` value: traits, some forbidden, or (1.39) any of."""
        if minor >= 39 and self.rng.random() < 0.25:
            return 'in:' + ','.join(self.sample(self.traits, 1, 3))
        return ','.join(
            ('!' + t if minor >= 22 and self.rng.random() < 0.3 else t)
            for t in self.sample(self.traits, 1, 2))

    def member_of_value(self, minor):
        """A ``member_of`` value: one, any of several, or none of (1.32)."""
        roll = self.rng.random()
        if minor >= 32 and roll < 0.2:
            return '!in:' + ','.join(self.sample(self.aggregates, 1, 2))
        if roll < 0.5:
            return 'in:' + ','.join(self.sample(self.aggregates, 1, 3))
        return self.pick(self.aggregates)

    def subtree_groups(self, minor):
        """Suffixed groups tied by ``same_subtree`` (1.36+).

        One to three groups, each a class or, resourceless, traits
        and/or an aggregate only, some with ``in_tree``; every
        resourceless group is in a
        ``same_subtree`` set (placement refuses one that is not), with
        some of the others, and a second set may overlap the first.
        """
        roll = self.rng.random
        params, resourced, bare = [], [], []
        for n in range(self.rng.randint(1, 3)):
            suffix = '_T%d' % n
            if roll() < 0.5:
                params.append('resources%s=%s:1' % (
                    suffix, self.pick(STANDARD_CLASSES[:4])))
                resourced.append(suffix)
            else:
                bare.append(suffix)
            traits = roll() < 0.6
            if traits and self.forest_first:
                params.append('required%s=%s' % (
                    suffix, ','.join(self.sample(FOREST_TRAITS, 1, 1))))
            elif traits:
                params.append('required%s=%s' % (
                    suffix, self.required_value(minor)))
            if roll() < 0.3 or (suffix in bare and not traits):
                params.append('member_of%s=%s' % (
                    suffix, self.member_of_value(minor)))
            if roll() < 0.15:
                # Placement checks a resourceless group's in_tree names
                # a provider, and then takes providers of every tree.
                params.append('in_tree%s=%s' % (suffix, self.provider()))
        first = bare + self.sample(resourced, 0, len(resourced))
        sets = [first] if first else []
        if resourced and roll() < 0.3:
            sets.append(self.sample(bare + resourced, 1, 2) +
                        [self.pick(resourced)])
        spaced = roll() < 0.2
        for chosen in sets:
            params.append('same_subtree=%s' % ','.join(
                self.padded(suffix) if spaced else suffix
                for suffix in sorted(set(chosen), key=chosen.index)))
        params.append('group_policy=%s' % self.rng.choice(
            ['none', 'isolate']))
        return params

    def padded(self, suffix):
        """``suffix`` with white space before or after it, or both."""
        before, after = self.rng.choice([(1, 0), (0, 1), (1, 1)])
        return (self.pick(SPACES) * before + suffix
                + self.pick(SPACES) * after)

    def unknown_names(self, minor):
        """Candidate parameters naming what does not exist.

        Unknown classes and traits beside aggregates no provider is in:
        which one placement reports, or whether it answers no
        candidates, follows its order of looking names up. Several
        unknown names only where that order is the query's (plain
        required traits, a group's classes), one where placement takes
        a set in an order of its own.
        """
        choices = []
        if minor >= 17:
            choices.append('required=CUSTOM_NOPE_Z,CUSTOM_NOPE_A')
        if minor >= 22:
            choices.append('required=!CUSTOM_NOPE_F')
        if minor >= 21:
            choices.append('member_of=%s' % self.new_uuid())
        if minor >= 25:
            choices += ['resources2=CUSTOM_NOPE_Z:1,CUSTOM_NOPE_A:1'
                        '&required2=CUSTOM_NOPE_T&group_policy=none',
                        'resources3=VCPU:1&member_of3=%s'
                        '&group_policy=none' % self.new_uuid()]
        if minor >= 35:
            choices.append('root_required=CUSTOM_NOPE_R')
        return self.sample(choices, 1, 3)

    def reshape(self):
        version = self.version(30)
        minor = max(self.minor(version), 30)
        inventories = {}
        for rp in self.sample(self.providers, 1, 2):
            gen = yield from self._generation(rp)
            inventories[rp] = {
                'resource_provider_generation': gen,
                'inventories': {rc: self.valid(self.inventory_record())
                                for rc in self.sample(self.classes, 0, 2)}}
        allocations = {}
        for consumer in self.sample(self.consumers, 0, 2):
            gen = yield from self._consumer_generation(consumer)
            allocations[consumer] = {
                'allocations': {rp: {'resources': {
                    rc: 1 for rc in inv['inventories']} or {'VCPU': 1}}
                    for rp, inv in inventories.items()},
                'project_id': self.pick(self.projects),
                'user_id': 'user-a', 'consumer_generation': gen}
            if minor >= 38:
                allocations[consumer]['consumer_type'] = 'INSTANCE'
        body = {'inventories': inventories, 'allocations': allocations}
        if self.malformed():
            body = self.mutate(body)
        yield request('POST', '/reshaper', version, body)
        for rp in inventories:
            yield request('GET', '/resource_providers/%s' % rp, version)

    # -- malformed ------------------------------------------------------

    def odd_request(self):
        rp = self.provider()
        choice = self.rng.randrange(14)
        version = self.version()
        if choice == 0:
            yield request('GET', '/allocations', version)
        elif choice == 1:
            yield request('GET', '/nowhere', version,
                          headers={'Accept': 'text/html'})
        elif choice == 2:
            yield request('GET', '/resource_providers', version,
                          headers={'Accept': 'text/html'})
        elif choice == 3:
            yield request('GET', '/', self.rng.choice(
                ['1.40', '2.0', 'foo', '1', '1.a', 'latest']))
        elif choice == 4:
            yield request('POST', '/resource_providers', version,
                          raw=b'{"name": ')
        elif choice == 5:
            yield request('POST', '/resource_providers', version,
                          raw=b'{"name": "x"}',
                          headers={'Content-Type': 'text/plain'})
        elif choice == 6:
            yield request('PATCH', '/resource_providers/%s' % rp, version)
        elif choice == 7:
            yield request('GET', '/resource_providers/not-a-uuid', version)
        elif choice == 8:
            yield request('DELETE', '/resource_providers', version)
        elif choice == 9:
            yield request('GET', '/allocations/', version)
        elif choice == 10:
            yield request('PUT', '/resource_providers/%s/inventories' % rp,
                          version, [])
        elif choice == 11:
            yield request('GET', '/resource_providers?uuid=%s&uuid=%s'
                          % (rp, rp), version)
        elif choice == 12:
            yield request('POST', '/resource_providers', version,
                          {'name': 'x' * 300})
        else:
            yield request('PUT', '/traits/CUSTOM_X', version,
                          headers={'Accept': 'text/plain'})
            yield request('DELETE', '/traits/CUSTOM_X', '1.6')

    def _body_targets(self, rp):
        """(method, path, version) of every route that reads a body.

        ``rp``: a provider's uuid (one the cloud may not have).
        """
        rc = self.pick(self.classes)
        name = self.pick(self.custom_classes + ['CUSTOM_NOPE_RC'])
        return [
            ('PUT', '/resource_providers/%s' % rp, self.version()),
            ('POST', '/resource_providers/%s/inventories' % rp,
             self.version()),
            ('PUT', '/resource_providers/%s/inventories' % rp,
             self.version()),
            ('PUT', '/resource_providers/%s/inventories/%s' % (rp, rc),
             self.version()),
            ('PUT', '/resource_providers/%s/aggregates' % rp,
             self.version(1)),
            ('PUT', '/resource_providers/%s/traits' % rp, self.version(6)),
            ('PUT', '/resource_classes/%s' % name, self.version(2)),
            ('PUT', '/allocations/%s' % self.pick(self.consumers),
             self.version()),
            ('POST', '/allocations', self.version(13)),
            ('POST', '/reshaper', self.version(30)),
            ('POST', '/resource_providers', self.version()),
            ('POST', '/resource_classes', self.version(2)),
            ('PUT', '/traits/CUSTOM_CARELESS', self.version(6)),
        ]

    def careless_write(self):
        """A PUT or POST without a body, or without a type, or not JSON.

        Often to a provider or class that does not exist: which check
        comes first, the body's or the lookup's. Each body is one no
        route takes, so nothing is written but where the route reads
        no body (a trait, a class from 1.7).
        """
        rp = self.provider() if self.rng.random() < 0.5 else \
            self.new_uuid()
        method, path, version = self.pick(self._body_targets(rp))
        raw, content_type = self.rng.choice([
            (None, None),                          # nothing at all
            (b'{"name": "careless"}', None),       # JSON without a type
            (b'{"name": "careless"}', 'text/plain'),
            (None, 'text/plain'),
            (None, 'application/json'),            # a type, no body
            (b'', 'application/json'),
            (b'name=careless', 'application/x-www-form-urlencoded'),
        ])
        yield request(method, path, version, raw=raw,
                      headers={'Content-Type': content_type})

    def odd_accept(self):
        """A request with an unusual ``Accept``, its body often not JSON.

        Placement serves writes whatever their Accept says, refuses a
        GET of a JSON document whose Accept rules JSON out (not ``GET
        /`` nor ``GET /traits/{name}``), and answers its errors with a
        page of the type the Accept asks for.
        """
        accept = self.pick(ODD_ACCEPTS)
        rp = self.provider()
        roll = self.rng.random()
        if roll < 0.4:
            path = self.rng.choice([
                '/', '/resource_providers', '/resource_providers/%s' % rp,
                '/resource_providers/%s/inventories' % rp,
                '/resource_providers/%s/aggregates' % rp,
                '/resource_providers/%s/traits' % rp,
                '/traits/%s' % self.pick(self.traits + ['CUSTOM_NOPE']),
                '/traits', '/resource_classes',
                '/allocations/%s' % self.pick(self.consumers),
                '/allocation_candidates?resources=VCPU:1',
                '/usages?project_id=project-a', '/nowhere'])
            yield request('GET', path, self.version(),
                          headers={'Accept': accept})
            return
        if roll < 0.5:
            name = 'CUSTOM_ACCEPT_%d' % self.rng.randint(0, 3)
            yield request(self.rng.choice(['PUT', 'DELETE']),
                          '/traits/%s' % name, self.version(6),
                          headers={'Accept': accept})
            return
        method, path, version = self.pick(self._body_targets(rp))
        raw, content_type = self.rng.choice([
            (b'{"name": ', 'application/json'),
            (b'{"name": "accepted"}', 'text/plain'),
            (b'{"name": "accepted"}', None),
            (None, None),
            (b'[]', 'application/json')])
        yield request(method, path, version, raw=raw,
                      headers={'Content-Type': content_type,
                               'Accept': accept})

    def mutate(self, body):
        """A malformed variant of a JSON body."""
        choice = self.rng.randrange(7)
        if not isinstance(body, dict) or not body:
            return self.rng.choice([{}, 'text', 42, None, [1]])
        body = json.loads(json.dumps(body))
        key = self.rng.choice(list(body))
        if choice == 0:
            del body[key]
        elif choice == 1:
            body['unexpected'] = 1
        elif choice == 2:
            body[key] = self.rng.choice(['', 'x' * 300, -1, None, [], {},
                                         True, 1.5])
        elif choice == 3:
            value = body[key]
            if isinstance(value, dict) and value:
                inner = self.rng.choice(list(value))
                value[inner] = self.rng.choice([None, 'str', -5, {}, []])
        elif choice == 4:
            return [body]
        elif choice == 5:
            body[key] = str(body[key])
        else:
            body = {}
        return body
