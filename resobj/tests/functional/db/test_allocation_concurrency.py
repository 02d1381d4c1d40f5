"""Four processes claim against a few small providers at once.

Whatever the interleaving, on every backend: no provider's usage exceeds
its capacity, every claim a process was told succeeded is stored, and
every claim it was told was refused is absent; with deletes among the
claims, every inventory's usage column is the sum of what is stored.
"""

import multiprocessing
import random
import traceback
import uuid

from oslo_config import cfg
import sqlalchemy as sa

from resobj import conf as resobj_conf
from resobj import context
from resobj.db.api import allocation as alloc_db
from resobj.db.api import inventory as inventory_db
from resobj.db.api import resource_class as rc_db
from resobj.db import connection_url
from resobj.db import facade
from resobj.db import migration
from resobj.db.models import allocation as alloc_models
from resobj.db.models import consumer as consumer_models
from resobj import exception
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

VCPU = 0
PROCESSES = 4
CLAIMS_PER_PROCESS = 15
CAPACITY = 10


def _worker(body, url, providers, seed, results):
    """Runs in a spawned process: ``body``, then report what it saw.

    ``body(url, providers, seed, outcome)`` appends to ``outcome``; an
    exception becomes an ('error', traceback) entry.
    """
    outcome = []
    try:
        body(url, providers, seed, outcome)
    except Exception:
        outcome.append(('error', traceback.format_exc()))
    finally:
        # Always answer, so the parent never waits for a dead process.
        results.put(outcome)


def _claim(url, providers, seed, outcome):
    """Claim, and report what the database said of each claim."""
    _configure(url)
    ctx = context.get_admin_context()
    rnd = random.Random(seed)
    for _ in range(CLAIMS_PER_PROCESS):
        # A project and user per process: the race under test is on the
        # providers; the test helper's get-or-insert is not race-safe.
        consumer = fx.consumer(ctx, project='p%d' % seed,
                               user='u%d' % seed)
        rp = rnd.choice(providers)
        amount = rnd.randint(1, 3)
        try:
            alloc_db.replace_for_consumers(
                ctx, [consumer], [(rp, consumer, VCPU, amount)],
                max_retries=100)
            outcome.append(('ok', consumer, rp, amount))
        except exception.InvalidAllocationCapacityExceeded:
            outcome.append(('refused', consumer, rp, amount))
        except Exception as exc:
            outcome.append(('error', consumer, rp, repr(exc)))


def _claim_new(url, providers, seed, outcome):
    """Claim for new consumers as ``PUT /allocations`` does; report.

    A project and user per process, which its first claim creates.
    """
    _configure(url)
    ctx = context.get_admin_context()
    rnd = random.Random(seed)
    uuids = {rp: fx.uuid(ctx, rp) for rp in providers}
    for n in range(CLAIMS_PER_PROCESS):
        consumer = str(uuid.UUID(int=seed << 32 | n))
        rp = rnd.choice(providers)
        amount = rnd.randint(1, 3)
        request = {
            'consumer_uuid': consumer, 'project_id': 'p%d' % seed,
            'user_id': 'u%d' % seed, 'generation': None,
            'allocations': [{'resource_provider_uuid': uuids[rp],
                             'resource_class': 'VCPU', 'used': amount}]}
        try:
            alloc_db.replace_all(ctx, [request], max_retries=100)
            outcome.append(('ok', consumer, rp, amount))
        except exception.InvalidAllocationCapacityExceeded:
            outcome.append(('refused', consumer, rp, amount))
        except Exception as exc:
            outcome.append(('error', consumer, rp, repr(exc)))


def _churn(url, providers, seed, outcome):
    """Claim, delete half the claims, and report how many are held."""
    _configure(url)
    ctx = context.get_admin_context()
    rnd = random.Random(seed)
    held = []
    for _ in range(CLAIMS_PER_PROCESS):
        consumer = fx.consumer(ctx, project='p%d' % seed, user='u%d' % seed)
        rows = [(rp, consumer, VCPU, 1) for rp in
                rnd.sample(providers, rnd.randint(1, len(providers)))]
        try:
            alloc_db.replace_for_consumers(ctx, [consumer], rows,
                                           max_retries=100)
            held.append(consumer)
        except exception.InvalidAllocationCapacityExceeded:
            pass
        if held and rnd.random() < 0.5:
            # delete_all bumps no generation: nothing orders it against
            # the claims but the inventory rows' locks.
            alloc_db.delete_all(
                ctx, fx.consumer_uuid(ctx, held.pop(rnd.randrange(
                    len(held)))), max_retries=100)
    outcome.append(('ok', len(held)))


def _configure(url):
    conf = cfg.ConfigOpts()
    resobj_conf.register_opts(conf)
    conf([], default_config_files=[], default_config_dirs=[])
    conf.set_override('connection', url, group='database')
    facade.configure(conf)


class TestConcurrentClaims(db_base.DBTestCase):

    def _shared_url(self):
        if self.backend != 'sqlite':
            return self.engine.url.render_as_string(hide_password=False)
        # The in-memory test database is private to this process; use a
        # file that other processes can open, set up as resobj does.
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = self.useFixture(resobj_fixtures.ConfFixture())
        conf.config(state_dir=self.useFixture(
            resobj_fixtures.fixtures.TempDir()).path)
        facade.configure(conf.conf)
        migration.db_sync()
        return connection_url.database_url(conf.conf).render_as_string(
            hide_password=False)

    def _race(self, body, capacity):
        """Run ``body`` in PROCESSES processes on three new providers.

        ``body``: see :func:`_worker`.

        Returns (the providers, every process's outcomes).
        """
        url = self._shared_url()
        rc_db.ensure_sync(self.context)
        providers = [fx.provider(self.context) for _ in range(3)]
        for rp in providers:
            fx.inventory(self.context, rp, VCPU, total=capacity)
        facade.dispose()

        spawn = multiprocessing.get_context('spawn')
        results = spawn.Queue()
        workers = [spawn.Process(target=_worker,
                                 args=(body, url, providers, seed, results))
                   for seed in range(PROCESSES)]
        for worker in workers:
            worker.start()
        outcomes = [item for _ in workers
                    for item in results.get(timeout=300)]
        for worker in workers:
            worker.join(timeout=60)
            self.assertEqual(0, worker.exitcode)
        return providers, outcomes

    def test_no_over_allocation_and_nothing_lost(self):
        providers, outcomes = self._race(_claim, CAPACITY)
        self._assert_granted_as_told(providers, outcomes, self._stored())

    def test_new_consumers_claim_as_the_api_does(self):
        # replace_all with new consumers: on PostgreSQL each claim is
        # one statement (sql.allocation.claim_query).
        providers, outcomes = self._race(_claim_new, CAPACITY)
        table = consumer_models.Consumer.__table__
        with facade.get_engine().connect() as conn:
            ids = dict(conn.execute(sa.select(table.c.uuid, table.c.id)).all())
        stored = self._stored()
        self._assert_granted_as_told(
            providers, outcomes,
            {uuid: stored.get(consumer_id)
             for uuid, consumer_id in ids.items()})

    def _assert_granted_as_told(self, providers, outcomes, stored):
        """Every claim granted is stored, no refused one, within capacity.

        ``stored``: {consumer: [(rp, used)]} as the outcomes name them.
        """
        errors = [o for o in outcomes if o[0] == 'error']
        self.assertEqual([], errors)
        self.assertEqual(PROCESSES * CLAIMS_PER_PROCESS, len(outcomes))
        granted = {}
        for status, consumer, rp, amount in outcomes:
            if status == 'ok':
                self.assertEqual([(rp, amount)], stored.get(consumer))
                granted[rp] = granted.get(rp, 0) + amount
            else:
                self.assertIsNone(stored.get(consumer))
        for rp in providers:
            used = fx.usage(self.context, rp)['VCPU']
            self.assertLessEqual(used, CAPACITY)
            self.assertEqual(granted.get(rp, 0), used)
        # Demand was far above capacity, so the race was real.
        self.assertTrue(any(o[0] == 'refused' for o in outcomes))

    def test_claims_and_deletes_keep_every_inventory_usage(self):
        providers, outcomes = self._race(_churn, CAPACITY * 2)
        self.assertEqual([], [o for o in outcomes if o[0] == 'error'])
        stored = self._stored()
        self.assertEqual(sum(o[1] for o in outcomes), len(stored))
        for rp in providers:
            self.assertEqual(
                sum(used for rows in stored.values()
                    for held_rp, used in rows if held_rp == rp),
                fx.usage(self.context, rp)['VCPU'])
        self.assertEqual([], inventory_db.find_wrong_usage(self.context))

    def _stored(self):
        table = alloc_models.Allocation.__table__
        with facade.get_engine().connect() as conn:
            rows = conn.execute(sa.select(
                table.c.consumer_id, table.c.resource_provider_id,
                table.c.used))
            stored = {}
            for consumer, rp, used in rows:
                stored.setdefault(consumer, []).append((rp, used))
        return stored
