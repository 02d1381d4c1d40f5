"""The compute's record of call outcomes: once per key, bounded."""

import threading

from resobj.compute import outcome
from resobj.tests import base


class Clock:

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class TestOutcomeRecord(base.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = Clock()
        self.record = outcome.OutcomeRecord(size=3, max_age=60,
                                            clock=self.clock)
        self.runs = []

    def work(self, answer):
        self.runs.append(answer)
        return answer

    def test_a_repeat_answers_what_the_first_did_without_running(self):
        self.assertEqual('first', self.record.run('k', self.work, 'first'))
        self.assertEqual('first', self.record.run('k', self.work, 'second'))
        self.assertEqual(['first'], self.runs)

    def test_without_a_key_every_call_runs(self):
        self.record.run(None, self.work, 1)
        self.record.run(None, self.work, 2)
        self.assertEqual([1, 2], self.runs)
        self.assertEqual(0, len(self.record))

    def test_an_error_is_raised_again_not_retried(self):
        def fail():
            self.runs.append('ran')
            raise ValueError('no room')
        self.assertRaises(ValueError, self.record.run, 'k', fail)
        exc = self.assertRaises(ValueError, self.record.run, 'k', fail)
        self.assertEqual('no room', str(exc))
        self.assertEqual(['ran'], self.runs)

    def test_a_repeat_during_the_first_waits_for_its_answer(self):
        started, go = threading.Event(), threading.Event()

        def slow():
            started.set()
            go.wait(10)
            self.runs.append('slow')
            return 'done'
        answers = []
        first = threading.Thread(
            target=lambda: answers.append(self.record.run('k', slow)))
        first.start()
        self.assertTrue(started.wait(10))
        second = threading.Thread(
            target=lambda: answers.append(self.record.run('k', slow)))
        second.start()
        go.set()
        first.join(10)
        second.join(10)
        self.assertEqual(['done', 'done'], answers)
        self.assertEqual(['slow'], self.runs)

    def test_bounded_by_count_oldest_first(self):
        for key in 'abcd':
            self.record.run(key, self.work, key)
        self.assertEqual(3, len(self.record))
        # 'a' was forgotten: a repeat of it runs again.
        self.record.run('a', self.work, 'a again')
        self.record.run('d', self.work, 'd again')
        self.assertEqual(['a', 'b', 'c', 'd', 'a again'], self.runs)

    def test_bounded_by_age(self):
        self.record.run('k', self.work, 'first')
        self.clock.now += 61
        self.record.run('k', self.work, 'later')
        self.assertEqual(['first', 'later'], self.runs)
