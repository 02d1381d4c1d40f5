"""[upgrade_levels]: fixed caps, and auto caps that follow the cloud."""

import fixtures

from resobj import exception
from resobj.tests import base
from resobj import upgrade_levels

TABLE = ((1, '1.0'), (4, '1.1'), (6, '1.2'))


class TestTables(base.TestCase):

    def test_served_by_is_the_row_of_the_version(self):
        self.assertEqual(
            ['1.0', '1.0', '1.0', '1.0', '1.1', '1.1', '1.2'],
            [upgrade_levels.served_by(TABLE, v) for v in range(7)])

    def test_auto_caps_only_for_an_older_service(self):
        # No service, or none older than this code: no cap.
        self.assertIsNone(upgrade_levels.auto_cap(TABLE, 0, 6))
        self.assertIsNone(upgrade_levels.auto_cap(TABLE, 6, 6))
        self.assertIsNone(upgrade_levels.auto_cap(TABLE, 7, 6))
        # The oldest serves its row, even if that is the newest version.
        self.assertEqual('1.1', upgrade_levels.auto_cap(TABLE, 5, 6))
        self.assertEqual('1.0', upgrade_levels.auto_cap(TABLE, 3, 6))


class TestVersionCap(base.TestCase):

    def setUp(self):
        super().setUp()
        self.now = 100.0
        self.useFixture(fixtures.MockPatch(
            'resobj.upgrade_levels.time.monotonic', lambda: self.now))
        self.answers = []
        self.asked = 0
        self.log = self.useFixture(fixtures.FakeLogger(
            name='resobj.upgrade_levels'))

    def resolve(self):
        self.asked += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def cap(self, setting='auto'):
        return upgrade_levels.VersionCap('compute', setting, self.resolve,
                                         10, '1.0')

    def test_a_fixed_cap_is_never_resolved(self):
        for setting in ('1.1', None):
            self.assertEqual(setting, self.cap(setting).get())
        self.assertEqual(0, self.asked)

    def test_auto_is_read_again_after_the_interval_and_changes_logged(self):
        cap = self.cap()
        self.answers = ['1.0', '1.0', None, '1.1']
        self.assertEqual('1.0', cap.get())
        self.now += 9
        self.assertEqual('1.0', cap.get())
        self.assertEqual(1, self.asked)
        self.now += 1
        self.assertEqual('1.0', cap.get())
        self.assertEqual(2, self.asked)
        self.now += 10
        self.assertIsNone(cap.get())
        self.now += 10
        self.assertEqual('1.1', cap.get())
        lines = self.log.output.splitlines()
        # The first answer and each change; not the unchanged one.
        self.assertEqual(3, len(lines), lines)
        self.assertIn('capped at 1.0 (at start)', lines[0])
        self.assertIn('not capped (no longer capped at 1.0)', lines[1])
        self.assertIn('capped at 1.1 (was not capped)', lines[2])

    def test_a_failed_read_keeps_the_cap_until_the_next_interval(self):
        cap = self.cap()
        self.answers = ['1.0', exception.ConductorTimeout(
            topic='t', method='m', timeout=1, attempts=1), None]
        self.assertEqual('1.0', cap.get())
        self.now += 10
        self.assertEqual('1.0', cap.get())
        self.assertIn('could not read', self.log.output)
        self.now += 5
        self.assertEqual('1.0', cap.get())
        self.now += 5
        self.assertIsNone(cap.get())
        self.assertEqual(3, self.asked)

    def test_the_first_read_failing_fails_the_call(self):
        cap = self.cap()
        self.answers = [exception.ConductorTimeout(
            topic='t', method='m', timeout=1, attempts=1), '1.0']
        self.assertRaises(exception.ConductorTimeout, cap.get)
        self.assertEqual('1.0', cap.get())

    def test_a_call_made_while_resolving_is_capped_at_the_floor(self):
        # The conductor API's own resolution calls a conductor.
        seen = []

        def resolve():
            seen.append(cap.get())
            return None
        cap = upgrade_levels.VersionCap('conductor', 'auto', resolve, 10,
                                        '1.0')
        self.assertIsNone(cap.get())
        self.assertEqual(['1.0'], seen)
        self.now += 10
        self.assertIsNone(cap.get())
        # Later, while resolving again, the last answer.
        self.assertEqual(['1.0', None], seen)
