"""Recorded outcomes of keyed calls, on every backend.

A keyed call's writes and its recorded answer commit in one transaction
(call_outcome.run_recorded); a repeat of the key is refused and keeps
nothing of its own run.
"""

import datetime
import threading
import time

import sqlalchemy as sa

from resobj import context as resobj_context
from resobj.db.api import call_outcome as outcome_db
from resobj.db.api import service as service_db
from resobj.db import facade
from resobj.db.models import base as models_base
from resobj import exception
from resobj.tests.functional import db_base

KEY = '2b4c7a52-0d36-4f8e-9a0e-6f0f1f7c9d11'


class TestCallOutcomeDB(db_base.DBTestCase):

    def create_service(self, host):
        """A run that creates a service and answers its host."""
        def run():
            service_db.create(self.context,
                              {'host': host, 'binary': 'resobj-compute'})
            return '"%s"' % host
        return run

    def hosts(self):
        return sorted(row['host'] for row in service_db.get_all(self.context))

    def test_first_run_commits_its_writes_with_its_answer(self):
        answer = outcome_db.run_recorded(self.context, KEY, 'Service.create',
                                         self.create_service('h1'))
        self.assertEqual('"h1"', answer)
        self.assertEqual('"h1"', outcome_db.get_answer(self.context, KEY))
        self.assertEqual(['h1'], self.hosts())

    def test_a_repeat_is_refused_and_keeps_nothing_of_its_run(self):
        outcome_db.run_recorded(self.context, KEY, 'Service.create',
                                self.create_service('h1'))
        ran = []

        def again():
            ran.append(True)
            return self.create_service('h2')()
        self.assertRaises(exception.CallOutcomeExists,
                          outcome_db.run_recorded, self.context, KEY,
                          'Service.create', again)
        # Refused at its first statement, before anything ran.
        self.assertEqual([], ran)
        self.assertEqual(['h1'], self.hosts())
        self.assertEqual('"h1"', outcome_db.get_answer(self.context, KEY))

    def test_a_failed_run_leaves_neither_writes_nor_record(self):
        def failing():
            self.create_service('h1')()
            raise exception.ServiceNotFound(key='the test')
        self.assertRaises(exception.ServiceNotFound, outcome_db.run_recorded,
                          self.context, KEY, 'Service.create', failing)
        self.assertIsNone(outcome_db.get_answer(self.context, KEY))
        self.assertEqual([], self.hosts())
        # Its repeat runs.
        outcome_db.run_recorded(self.context, KEY, 'Service.create',
                                self.create_service('h1'))
        self.assertEqual(['h1'], self.hosts())

    def test_a_conflict_a_writer_inside_retries_runs_it_all_again(self):
        runs = []

        conflict = exception.ResourceProviderConcurrentUpdateDetected

        @facade.retrying_writer(conflict)
        def conflicting_once(context):
            service_db.create(context, {'host': 'h%d' % len(runs),
                                        'binary': 'resobj-compute'})
            if len(runs) == 1:
                raise conflict(provider='rp', generation=1)

        def run():
            runs.append(True)
            conflicting_once(self.context)
            return '%d' % len(runs)
        self.assertEqual('2', outcome_db.run_recorded(
            self.context, KEY, 'ResourceProvider.save', run))
        # The first run's service was rolled back with its transaction.
        self.assertEqual(['h2'], self.hosts())

    def test_a_conflict_no_writer_inside_retries_fails_the_call(self):
        runs = []

        def run():
            runs.append(True)
            raise exception.ResourceProviderConcurrentUpdateDetected(
                provider='rp', generation=1)
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            outcome_db.run_recorded, self.context, KEY,
            'ResourceProvider.save', run)
        self.assertEqual(1, len(runs))

    def test_a_prerequisite_is_prepared_and_the_call_run_again(self):
        def prepare():
            service_db.create(self.context, {'host': 'prepared',
                                             'binary': 'resobj-compute'})

        def run():
            if 'prepared' not in self.hosts():
                raise facade.Prerequisite(prepare)
            return self.create_service('h1')()
        outcome_db.run_recorded(self.context, KEY,
                                'AllocationList.replace_all', run)
        self.assertEqual(['h1', 'prepared'], self.hosts())
        self.assertEqual('"h1"', outcome_db.get_answer(self.context, KEY))

    def test_purge_deletes_only_the_old(self):
        outcome_db.run_recorded(self.context, KEY, 'Service.heartbeat',
                                lambda: 'null')
        new_key = '8f7e4a1c-3b2d-4c5e-8f90-1a2b3c4d5e6f'
        outcome_db.run_recorded(self.context, new_key, 'Service.heartbeat',
                                lambda: 'null')
        table = sa.table('call_outcomes', sa.column('idempotency_key'),
                         sa.column('created_at'))
        with self.engine.begin() as conn:
            conn.execute(sa.update(table).where(
                table.c.idempotency_key == KEY).values(
                    created_at=models_base.utcnow()
                    - datetime.timedelta(seconds=700)))
        self.assertEqual(1, outcome_db.purge(self.context, 600))
        self.assertIsNone(outcome_db.get_answer(self.context, KEY))
        self.assertEqual('null', outcome_db.get_answer(self.context, new_key))


class TestConcurrentRepeat(db_base.DBTestCase):
    """Two transactions with one key, on the backends with row locks.

    SQLite serialises every writer at BEGIN, so a repeat there cannot
    start before the first ends; the tests' in-memory SQLite database
    is not shared between threads either.
    """

    scenarios = db_base.BACKEND_SCENARIOS[1:]

    def hosts(self):
        return sorted(row['host'] for row in service_db.get_all(self.context))

    @staticmethod
    def create_service(context, host):
        def run():
            service_db.create(context, {'host': host,
                                        'binary': 'resobj-compute'})
            return '"%s"' % host
        return run

    def test_a_repeat_of_a_call_in_progress_waits_for_its_outcome(self):
        started, release = threading.Event(), threading.Event()
        first_context = resobj_context.get_admin_context()
        outcomes = {}

        def first_run():
            started.set()
            release.wait(10)
            return self.create_service(first_context, 'h1')()

        def first():
            outcomes['first'] = outcome_db.run_recorded(
                first_context, KEY, 'Service.create', first_run)

        def repeat():
            try:
                context = resobj_context.get_admin_context()
                outcome_db.run_recorded(context, KEY, 'Service.create',
                                        self.create_service(context, 'h2'))
            except exception.CallOutcomeExists:
                outcomes['repeat'] = 'refused'

        thread = threading.Thread(target=first)
        thread.start()
        self.assertTrue(started.wait(10))
        repeated = threading.Thread(target=repeat)
        repeated.start()
        # It waits on the first's key.
        time.sleep(0.3)
        self.assertTrue(repeated.is_alive())
        release.set()
        thread.join(10)
        repeated.join(10)
        self.assertEqual({'first': '"h1"', 'repeat': 'refused'}, outcomes)
        self.assertEqual(['h1'], self.hosts())
