"""resobj.api: the JSON of response bodies, the collector's settings."""

import gc
import json
import weakref

from resobj.api import service
from resobj.api import util
from resobj.tests import base


class TestDumps(base.TestCase):

    def test_same_json_as_the_standard_library(self):
        request = {'allocations': {'a-uuid': {'resources': {'VCPU': 2}}},
                   'mappings': {'': ['a-uuid']}}
        summary = {'resources': {'VCPU': {'capacity': 1024, 'used': 0}},
                   'traits': ['HW_CPU_X86_AVX2'],
                   'parent_provider_uuid': None}
        data = {'allocation_requests': [request],
                'provider_summaries': {'a-uuid': summary},
                'ratio': 16.0, 'half': 0.5, 'text': 'caf\u00e9 "q" \\',
                'tuple': (1, 2), 'empty': {}, 'flag': True}
        body = util.dumps(data)
        self.assertIsInstance(body, bytes)
        self.assertEqual(json.loads(json.dumps(data)), json.loads(body))
        self.assertIn(b'16.0', body)

    def test_what_orjson_refuses_is_written_by_the_standard_library(self):
        # Integers beyond 64 bits and non-string keys: orjson raises,
        # the body must still be the same JSON.
        for data in ({'total': 2 ** 70}, {1: 'one', 'two': 2}):
            body = util.dumps(data)
            self.assertEqual(json.loads(json.dumps(data)), json.loads(body))


class TestSettleGc(base.TestCase):

    def test_loaded_objects_frozen_and_collections_rarer(self):
        threshold = gc.get_threshold()
        self.addCleanup(gc.set_threshold, *threshold)
        self.addCleanup(gc.unfreeze)
        loaded = [{'kept': i} for i in range(100)]
        service.settle_gc()
        self.assertGreaterEqual(gc.get_freeze_count(), len(loaded))
        self.assertEqual(
            (service.GC_FIRST_GENERATION_THRESHOLD,) + threshold[1:],
            gc.get_threshold())
        # Cycles made after loading are still collected.
        cycle = []
        cycle.append(cycle)
        ref = weakref.ref(_Node(cycle))
        gc.collect()
        self.assertIsNone(ref())


class _Node:

    def __init__(self, payload):
        self.payload = payload
        self.me = self
