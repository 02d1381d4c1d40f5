"""The service version history, and how a caller's version is known."""

import fixtures
from oslo_utils import versionutils

from resobj import objects
from resobj.objects import service as service_obj
from resobj.tests import base

HISTORY = service_obj.SERVICE_VERSION_HISTORY


def _tuple(version):
    return versionutils.convert_version_to_tuple(version)


class TestServiceVersionHistory(base.TestCase):

    def test_this_codes_service_object_is_recorded(self):
        # A Service version bump needs its line in the current entry, or
        # a conductor could not tell what code sending it runs.
        self.assertIn(objects.Service.VERSION,
                      HISTORY[service_obj.SERVICE_VERSION]['service_objects'])

    def test_service_objects_only_grow_with_the_service_version(self):
        shipped = [(_tuple(v), n) for n, entry in enumerate(HISTORY)
                   for v in entry['service_objects']]
        self.assertEqual(sorted(shipped), shipped)
        self.assertEqual((), HISTORY[0]['service_objects'])
        for entry in HISTORY[1:]:
            self.assertTrue(entry['service_objects'], entry)


class TestVersionOfCaller(base.TestCase):

    def test_each_shipped_service_object_names_its_service_version(self):
        # The oldest that shipped it, when several did (see below).
        for version, entry in enumerate(HISTORY):
            for sent in entry['service_objects']:
                first = min(n for n, e in enumerate(HISTORY)
                            if sent in e['service_objects'])
                self.assertLessEqual(first, version)
                self.assertEqual(
                    first, service_obj.version_of_caller({'Service': sent}))

    def test_shared_by_several_the_oldest_is_taken(self):
        history = HISTORY + ({'note': 'later, no Service change',
                              'service_objects': ('1.5',)},)
        self.useFixture(fixtures.MockPatch(
            'resobj.objects.service.SERVICE_VERSION_HISTORY', history))
        self.assertEqual(3, service_obj.version_of_caller(
            {'Service': '1.5'}))

    def test_an_unshipped_version_counts_as_the_release_it_follows(self):
        # A development build between releases.
        self.assertEqual(2, service_obj.version_of_caller(
            {'Service': '1.4.1'}))
        self.assertEqual(len(HISTORY) - 1, service_obj.version_of_caller(
            {'Service': '1.99'}))
        self.assertEqual(0, service_obj.version_of_caller(
            {'Service': '0.9'}))

    def test_without_a_service_nothing_is_known(self):
        self.assertIsNone(service_obj.version_of_caller(
            {'ComputeNode': '1.6'}))


class TestActingFor(base.TestCase):

    def test_the_callers_version_inside_this_codes_outside(self):
        self.assertEqual(service_obj.SERVICE_VERSION,
                         service_obj.running_version())
        with service_obj.acting_for(1):
            self.assertEqual(1, service_obj.running_version())
            with service_obj.acting_for(None):
                self.assertEqual(service_obj.SERVICE_VERSION,
                                 service_obj.running_version())
            self.assertEqual(1, service_obj.running_version())
        self.assertEqual(service_obj.SERVICE_VERSION,
                         service_obj.running_version())
