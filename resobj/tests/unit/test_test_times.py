"""tools/test_times.py seeds a new stestr repository with durations.

stestr schedules a run's tests on its workers by the durations in its
repository; on a new checkout ``tox -e py3`` loads the recorded ones
first (tox.ini), so that the first run is balanced too.
"""

import io
import json
import os
import subprocess
import sys

import fixtures

from resobj.tests import base

_STESTR = (sys.executable, '-m', 'stestr')


class TestTestTimes(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tool = base.load_tool('test_times')
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.times = {'pkg.tests.TestA.test_long': 61.5,
                      'pkg.tests.TestB.test_short(postgresql)': 0.7}
        self.times_file = os.path.join(self.dir, 'times.json')
        with open(self.times_file, 'w') as f:
            json.dump(self.times, f)

    def test_a_new_repository_holds_the_recorded_durations(self):
        self.assertTrue(self.tool.seed(self.dir, self.times_file, _STESTR))
        stream = subprocess.run(list(_STESTR) + ['last', '--subunit'],
                                cwd=self.dir, capture_output=True,
                                check=True).stdout
        # What stestr schedules by: the durations its repository keeps.
        self.assertEqual(self.times, {
            test_id: round(seconds, 1) for test_id, seconds in
            self.tool.durations(io.BytesIO(stream)).items()})

    def test_an_existing_repository_is_left_alone(self):
        os.mkdir(os.path.join(self.dir, '.stestr'))
        self.assertFalse(self.tool.seed(self.dir, self.times_file, _STESTR))
        self.assertEqual([], os.listdir(os.path.join(self.dir, '.stestr')))

    def test_the_recorded_durations_are_of_this_suite(self):
        # Durations of moved or renamed tests balance nothing.
        with open(os.path.join(base.TOOLS, 'test_times.json')) as f:
            recorded = json.load(f)
        root = os.path.join(base.TOOLS, '..')

        def module_exists(test_id):
            parts = test_id.split('(')[0].split('.')
            return any(os.path.exists(os.path.join(root, *parts[:n]) + '.py')
                       for n in range(len(parts), 1, -1))

        stale = sum(seconds for test_id, seconds in recorded.items()
                    if not module_exists(test_id))
        self.assertLess(
            stale, 0.1 * sum(recorded.values()),
            'tools/test_times.json is stale: re-record it with '
            '"stestr last --subunit | python tools/test_times.py record" '
            'after a full run')
