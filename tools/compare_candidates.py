#!/usr/bin/env python3
"""Compare GET /allocation_candidates of two placement-compatible services.

Builds the same generated cloud in both (through the API), then asks both
a generated set of requests and compares the answers with provider uuids
replaced by provider names, requests sorted (the order of requests is no
part of the answer). Usage::

    tools/compare_candidates.py --ref http://127.0.0.1:8829 \
        --new http://127.0.0.1:8839 [--seed 29] [--trees 30] [--build]

``--build`` creates the cloud (each service's database must hold no
providers of these names yet); ``--build new`` in the new service
only. Exits 1 if any answer differs, printing
each difference. The cloud: ``--trees`` compute trees (root ``cnN``
with DISK_GB, two NUMA cells ``cnN_numaK`` with VCPU and MEMORY_MB, a
PCI function ``cnN_numaK_pfM`` under each cell with SRIOV_NET_VF and
bandwidth and a physnet trait, an inventory-less NIC agent
``cnN_agent`` with a bandwidth device ``cnN_agent_bw`` under it) with
traits and aggregates drawn from the seed, some usage, and three
sharing DISK_GB pools.
"""

import argparse
import json
import random
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid as uuid_lib

VERSION = '1.39'
AGGS = {name: str(uuid_lib.uuid5(uuid_lib.NAMESPACE_URL, 'agg-' + name))
        for name in ('a', 'b', 'c', 'd')}
TRAITS = ('CUSTOM_PHYSNET_A', 'CUSTOM_PHYSNET_B', 'CUSTOM_AGENT_SRIOV',
          'CUSTOM_AGENT_OVS', 'CUSTOM_GOLD', 'CUSTOM_FAST')


def call(base, method, path, body=None, version=VERSION):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header('X-Auth-Token', 'admin')
    req.add_header('OpenStack-API-Version', 'placement ' + version)
    if data is not None:
        req.add_header('Content-Type', 'application/json')
    try:
        with urllib.request.urlopen(req) as resp:
            text = resp.read()
            return resp.status, json.loads(text) if text else None
    except urllib.error.HTTPError as exc:
        text = exc.read()
        return exc.code, json.loads(text) if text else None


def rp_uuid(name):
    return str(uuid_lib.uuid5(uuid_lib.NAMESPACE_URL, 'rp-' + name))


class Cloud:
    """The providers to create, as plain data (same for both services)."""

    def __init__(self, seed, trees):
        rnd = random.Random(seed)
        self.providers = []   # (name, parent name or None)
        self.inventories = {}  # name: {rc: {total, reserved, ...}}
        self.traits = {}
        self.aggregates = {}
        self.usage = {}        # name: {rc: used}
        for n in range(trees):
            root = 'cn%d' % n
            self._add(root, None, rnd.sample(
                ['CUSTOM_GOLD', 'CUSTOM_FAST', 'HW_CPU_X86_AVX'],
                rnd.randint(0, 2)), rnd.sample(['a', 'b', 'c'],
                                               rnd.randint(0, 2)))
            if rnd.random() < 0.6:
                self.inventories[root] = {'DISK_GB': {
                    'total': rnd.choice([100, 200, 500])}}
            for k in range(2):
                numa = '%s_numa%d' % (root, k)
                self._add(numa, root, ['HW_NUMA_ROOT'] if rnd.random() < .8
                          else [], ['d'] if rnd.random() < 0.2 else [])
                vcpus = rnd.choice([2, 4, 8])
                self.inventories[numa] = {
                    'VCPU': {'total': vcpus,
                             'allocation_ratio': rnd.choice([1.0, 2.0])},
                    'MEMORY_MB': {'total': rnd.choice([2048, 4096]),
                                  'reserved': rnd.choice([0, 512])}}
                if rnd.random() < 0.3:
                    self.usage[numa] = {'VCPU': rnd.randint(1, vcpus)}
                for m in range(rnd.randint(0, 2)):
                    pf = '%s_pf%d' % (numa, m)
                    self._add(pf, numa, [rnd.choice(
                        ['CUSTOM_PHYSNET_A', 'CUSTOM_PHYSNET_B'])] + (
                        ['CUSTOM_FAST'] if rnd.random() < 0.3 else []),
                        [rnd.choice(['a', 'b'])] if rnd.random() < .3
                        else [])
                    self.inventories[pf] = {
                        'SRIOV_NET_VF': {'total': rnd.choice([2, 4])},
                        'NET_BW_EGR_KILOBIT_PER_SEC': {
                            'total': rnd.choice([1000, 10000])}}
            if rnd.random() < 0.7:
                agent = root + '_agent'
                self._add(agent, root, [rnd.choice(
                    ['CUSTOM_AGENT_SRIOV', 'CUSTOM_AGENT_OVS'])], [])
                bw = agent + '_bw'
                self._add(bw, agent, [rnd.choice(
                    ['CUSTOM_PHYSNET_A', 'CUSTOM_PHYSNET_B'])], [])
                self.inventories[bw] = {
                    'NET_BW_IGR_KILOBIT_PER_SEC': {
                        'total': rnd.choice([1000, 5000])}}
        for n, aggs in enumerate((['a'], ['b'], ['c', 'd'])):
            name = 'share%d' % n
            self._add(name, None, ['MISC_SHARES_VIA_AGGREGATE'] + (
                ['CUSTOM_FAST'] if n == 1 else []), aggs)
            self.inventories[name] = {'DISK_GB': {'total': 1000,
                                                  'reserved': 100 * n}}

    def _add(self, name, parent, traits, aggs):
        self.providers.append((name, parent))
        self.traits[name] = sorted(set(traits))
        self.aggregates[name] = sorted(AGGS[a] for a in aggs)

    def build(self, base):
        for trait in TRAITS:
            call(base, 'PUT', '/traits/' + trait)
        for name, parent in self.providers:
            body = {'name': name, 'uuid': rp_uuid(name)}
            if parent:
                body['parent_provider_uuid'] = rp_uuid(parent)
            status, _ = call(base, 'POST', '/resource_providers', body)
            assert status == 200, (base, name, status)
            path = '/resource_providers/' + rp_uuid(name)
            if name in self.inventories:
                status, found = call(base, 'PUT', path + '/inventories', {
                    'resource_provider_generation': 0,
                    'inventories': self.inventories[name]})
                assert status == 200, (base, name, status, found)
            for what, values in (('traits', self.traits[name]),
                                 ('aggregates', self.aggregates[name])):
                if not values:
                    continue
                _, found = call(base, 'GET', path)
                status, found = call(base, 'PUT', path + '/' + what, {
                    what: values,
                    'resource_provider_generation': found['generation']})
                assert status == 200, (base, name, status, found)
        for n, (name, used) in enumerate(sorted(self.usage.items())):
            consumer = str(uuid_lib.uuid5(uuid_lib.NAMESPACE_URL,
                                          'consumer-%d' % n))
            status, found = call(base, 'PUT', '/allocations/' + consumer, {
                'allocations': {rp_uuid(name): {'resources': used}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'})
            assert status == 204, (base, name, status, found)


def requests():
    """The generated query strings (deterministic)."""
    a, b, c, d = (AGGS[x] for x in 'abcd')
    queries = [
        'resources=VCPU:1',
        'resources=VCPU:2,MEMORY_MB:1024,DISK_GB:10',
        'resources=VCPU:1&resources=VCPU:100',
        'resources=DISK_GB:50&member_of=%s&member_of=!in:%s,%s' % (a, a, b),
        'resources=DISK_GB:50&member_of=in:%s,%s&member_of=!%s' % (a, c, b),
        'resources=VCPU:1&member_of=!in:%s,%s' % (a, d),
        'resources=VCPU:1&required=in:CUSTOM_GOLD,CUSTOM_FAST',
        'resources=VCPU:1&root_required=CUSTOM_GOLD,!CUSTOM_FAST',
        'resources=VCPU:1&limit=3&limit=100',
        'resources_1=VCPU:1&resources_2=VCPU:1&group_policy=isolate'
        '&group_policy=none',
    ]
    for physnet in ('A', 'B'):
        net = 'CUSTOM_PHYSNET_' + physnet
        queries += [
            # NUMA affinity of a VF and its CPUs.
            'resources_CPU=VCPU:1,MEMORY_MB:512'
            '&resources_VF=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:500'
            '&required_VF=%s&required_NUMA=HW_NUMA_ROOT'
            '&same_subtree=_NUMA,_CPU,_VF&group_policy=none' % net,
            'resources_CPU=VCPU:1'
            '&resources_VF=SRIOV_NET_VF:1&required_VF=%s'
            '&required_NUMA=HW_NUMA_ROOT'
            '&same_subtree=_NUMA,_CPU,_VF&group_policy=isolate' % net,
            # A bandwidth device below its agent (QoS ports).
            'resources=VCPU:1&required_AG=CUSTOM_AGENT_SRIOV'
            '&resources_BW=NET_BW_IGR_KILOBIT_PER_SEC:800'
            '&required_BW=%s&same_subtree=_AG,_BW&group_policy=none' % net,
            'resources=VCPU:1&required_AG=CUSTOM_AGENT_SRIOV'
            '&resources_BW=NET_BW_IGR_KILOBIT_PER_SEC:800'
            '&required_BW=%s&same_subtree=_AG,_BW&group_policy=isolate'
            % net,
            'resources=VCPU:1,DISK_GB:20&required_AG=in:CUSTOM_AGENT_SRIOV,'
            'CUSTOM_AGENT_OVS&resources_BW=NET_BW_IGR_KILOBIT_PER_SEC:100'
            '&required_BW=%s&same_subtree=_AG,_BW&group_policy=none' % net,
            # Two VFs under one cell, and the cell apart.
            'resources_V1=SRIOV_NET_VF:1&required_V1=%s'
            '&resources_V2=SRIOV_NET_VF:1&required_V2=!%s'
            '&required_N=HW_NUMA_ROOT&same_subtree=_N,_V1'
            '&same_subtree=_N,_V2&group_policy=none' % (net, net),
            # Overlapping same_subtree sets.
            'resources_V=SRIOV_NET_VF:1&required_V=%s'
            '&resources_C=VCPU:1&required_N=HW_NUMA_ROOT'
            '&same_subtree=_N,_V&same_subtree=_V,_C&group_policy=none'
            % net,
            # Resourceless groups only in same_subtree with each other.
            'resources=VCPU:1&required_X=%s&required_Y=HW_NUMA_ROOT'
            '&same_subtree=_Y,_X&group_policy=none' % net,
            'resources=VCPU:1&required_X=%s&required_Y=HW_NUMA_ROOT'
            '&same_subtree=_Y,_X&group_policy=isolate' % net,
            'resources=VCPU:1&member_of_M=%s&required_P=%s'
            '&same_subtree=_M,_P&group_policy=none' % (a, net),
            'resources=VCPU:1&member_of_M=%s&required_P=%s'
            '&same_subtree=_M,_P&group_policy=none&limit=2' % (b, net),
            'resources_S=DISK_GB:10&resources_V=SRIOV_NET_VF:1'
            '&required_V=%s&required_R=CUSTOM_GOLD&same_subtree=_R,_V'
            '&group_policy=none' % net,
            'resources=DISK_GB:100,VCPU:1&required_N=HW_NUMA_ROOT'
            '&resources_V=SRIOV_NET_VF:2&required_V=%s'
            '&same_subtree=_N,_V&root_required=!CUSTOM_FAST'
            '&group_policy=none' % net,
            'resources=DISK_GB:100,MEMORY_MB:128&required_N=HW_NUMA_ROOT'
            '&resources_V=SRIOV_NET_VF:1&required_V=%s'
            '&member_of_N=!%s&required_C=CUSTOM_FAST'
            '&same_subtree=_N,_V,_C&group_policy=none' % (net, d),
            # Isolation between a resourceless group and a resourced one
            # that may land on one provider.
            'resources=VCPU:1&resources_V=SRIOV_NET_VF:1&required_P=%s'
            '&same_subtree=_V,_P&group_policy=isolate' % net,
            'resources=VCPU:1&resources_V=SRIOV_NET_VF:1&required_P=%s'
            '&same_subtree=_V,_P&group_policy=none' % net,
            'resources_V=SRIOV_NET_VF:1&required_N=HW_NUMA_ROOT'
            '&required_P=%s&same_subtree=_N,_V,_P&group_policy=isolate'
            '&resources=DISK_GB:10,VCPU:1' % net,
        ]
    return queries


# Requests where the reference's answer is known to differ, and why:
# the unsuffixed group served by sharing providers alone, next to other
# groups, is combined by the reference with one of the trees the sharing
# providers serve (which one follows no documented rule), and by resobj
# with each of them. Run, printed, not counted.
KNOWN = [
    'resources=DISK_GB:100&resources_C=VCPU:1&group_policy=none',
    'resources=DISK_GB:100&required_N=HW_NUMA_ROOT'
    '&resources_V=SRIOV_NET_VF:2&required_V=CUSTOM_PHYSNET_A'
    '&same_subtree=_N,_V&group_policy=none',
]


def normalise(answer, names):
    def name(uuid):
        return names.get(uuid, uuid)
    reqs = []
    for r in answer['allocation_requests']:
        request = {
            'allocations': {name(rp): v['resources'] for rp, v in
                            r['allocations'].items()},
            'mappings': {s: sorted(map(name, rps))
                         for s, rps in r.get('mappings', {}).items()}}
        reqs.append(json.dumps(request, sort_keys=True))
    reqs.sort()
    summaries = {}
    for rp, s in answer['provider_summaries'].items():
        s = dict(s)
        for key in ('parent_provider_uuid', 'root_provider_uuid'):
            if s.get(key):
                s[key] = name(s[key])
        s['traits'] = sorted(s.get('traits', []))
        summaries[name(rp)] = s
    return {'allocation_requests': reqs, 'provider_summaries': summaries}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--ref', default='http://127.0.0.1:8829')
    parser.add_argument('--new', default='http://127.0.0.1:8839')
    parser.add_argument('--seed', type=int, default=29)
    parser.add_argument('--trees', type=int, default=30)
    parser.add_argument('--build', nargs='?', const='both',
                        choices=('both', 'new'),
                        help='create the cloud first, in both services or '
                             'in the new one only (to compare another '
                             'resobj database with a reference built '
                             'already)')
    parser.add_argument('--show', action='store_true',
                        help='print each answer (normalised)')
    args = parser.parse_args(argv)
    cloud = Cloud(args.seed, args.trees)
    if args.build:
        for base in ((args.ref, args.new) if args.build == 'both'
                     else (args.new,)):
            cloud.build(base)
    names = {rp_uuid(name): name for name, _parent in cloud.providers}
    failed = 0
    for query in requests() + KNOWN:
        path = '/allocation_candidates?' + query
        answers = []
        for base in (args.ref, args.new):
            status, body = call(base, 'GET', path)
            if status == 200:
                body = normalise(body, names)
                if 'limit=' in query:
                    # Which requests a limit keeps is not specified.
                    body = len(body['allocation_requests'])
            else:
                body = (body or {}).get('errors', [{}])[0].get('code')
            answers.append((status, body))
        same = answers[0] == answers[1]
        if query in KNOWN:
            print('known %s: %s' % ('same' if same else 'difference', query))
            continue
        failed += not same
        count = (len(answers[0][1]['allocation_requests'])
                 if isinstance(answers[0][1], dict) else answers[0][1])
        print('%s %s -> %s %s' % ('same' if same else 'DIFF', query,
                                  answers[0][0], count))
        if not same or args.show:
            for label, answer in zip(('ref', 'new'), answers):
                text = json.dumps(answer, indent=1, sort_keys=True)
                print('  %s: %s' % (label, text))
    print('%d of %d requests differ' % (failed, len(requests())))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
