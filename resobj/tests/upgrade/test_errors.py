"""resobj's errors between the N-1 code and today's.

An error raised in one service reaches its RPC caller rebuilt by class
name. A class the caller's release lacks would arrive as a bare
RemoteError that no handler of that release catches, so today's classes
the N-1 release lacks are marked (exception.new_since_n_minus_1) and
travel as their nearest base the N-1 code has (rpc.endpoint_method).

* The marks are checked against the N-1 code's own exception modules:
  exactly the classes it lacks are marked, and none of its classes is
  gone today (an N-1 service's errors must rebuild here too).
* An N-1 compute's report client writes, through today's conductor, an
  allocation today's code refuses with a class the N-1 code lacks
  (ConsumerGenerationConflict); the N-1 code must see its own base
  (ConcurrentUpdateDetected) and handle it as it always did.
"""

import importlib

import testscenarios

from resobj.tests import base
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import old_side
from resobj.tests.upgrade import services

load_tests = testscenarios.load_tests_apply_scenarios


def _keys(listing):
    """{(module, class name)} of an ``errors`` answer of old_side."""
    return {(module, name) for module, names in listing.items()
            for name in names}


class TestErrorClassesAcrossReleases(base.TestCase):

    def setUp(self):
        super().setUp()
        self.old = _keys(n_minus_1.run('errors'))
        # The same listing by today's code, in this process.
        self.today = {key: getattr(importlib.import_module(key[0]), key[1])
                      for key in _keys(old_side.errors())}

    def test_the_n_minus_1_code_reports_its_classes(self):
        # Guards the comparison below against an empty answer.
        self.assertIn(('resobj.exception', 'ConcurrentUpdateDetected'),
                      self.old)
        self.assertIn(('resobj.compute.exception', 'AllocationConflict'),
                      self.old)

    def test_no_class_of_the_n_minus_1_code_is_gone(self):
        self.assertEqual(set(), self.old - set(self.today))

    def test_exactly_the_classes_n_minus_1_lacks_are_marked(self):
        marked = {key for key, cls in self.today.items()
                  if not cls.known_to_n_minus_1}
        self.assertEqual(set(self.today) - self.old, marked)


class TestErrorsReachAnN1Peer(services.ConductorTestCase):

    def test_a_consumer_generation_conflict(self):
        client = self.cloud.compute_conf('n-1-client', old=True)
        answer = n_minus_1.run('conflict', client)
        # The N-1 report client turns ConcurrentUpdateDetected into its
        # AllocationConflict(generation=True); a RemoteError would have
        # failed the command instead.
        self.assertEqual({'refused': 'again', 'caught': 'AllocationConflict',
                          'generation': True},
                         {key: answer[key] for key in
                          ('refused', 'caught', 'generation')})
        # Today's message, not a generic one.
        self.assertIn('consumer generation conflict', answer['detail'])
