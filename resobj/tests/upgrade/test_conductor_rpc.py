"""Today's node capped to the N-1 conductor's RPC API, against N-1 code.

A conductor of the baseline commit (resobj.tests.upgrade.n_minus_1)
serves conductor RPC 1.0 only; a node of today with ``[upgrade_levels]
conductor`` at that version sends its object calls as 1.0, without
idempotency keys, and the N-1 conductor carries them out. (Only objects
both releases have at the same versions can go to an N-1 conductor at
all; the upgrade guide upgrades the conductors first for that reason.)
"""

import testscenarios

from resobj.conductor import rpcapi as conductor_rpcapi
from resobj import objects
from resobj.tests import base as test_base
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import services

load_tests = testscenarios.load_tests_apply_scenarios


class TestCappedToTheBaselineConductor(test_base.TestCase):

    # Named so that CI counts it as a PostgreSQL test, which must run.
    scenarios = [('postgresql', {})]

    def setUp(self):
        super().setUp()
        self.cloud = services.cloud_for(self)
        self.cloud.sync(self)

    def test_capped_calls_are_served_by_the_baseline(self):
        old = n_minus_1.rpc_versions()['conductor']
        if old == conductor_rpcapi.VERSION:
            self.fail('the baseline serves conductor RPC %s too: move '
                      'resobj/tests/upgrade/baseline forward or drop this '
                      'test' % old)
        self.cloud.start_conductor(old=True)
        scheduler = self.useFixture(services.Scheduler(
            self.cloud, levels={'conductor': old}))
        api = objects.base.ResobjObject.indirection_api.rpcapi
        self.assertEqual(old, api.version_cap)
        # State-changing calls, class and instance ones, through the N-1
        # conductor.
        flavor = scheduler.flavor('capped', 1, 512, 1)
        flavor.description = 'saved through N-1'
        flavor.save()
        self.assertEqual('saved through N-1', objects.Flavor.get_by_id(
            scheduler.context, flavor.id).description)
        project = objects.Project.get_or_create(scheduler.context, 'p1')
        self.assertEqual(project.id, objects.Project.get_or_create(
            scheduler.context, 'p1').id)
        self.assertEqual(1, self.cloud.db.scalar(
            "SELECT count(*) FROM projects WHERE external_id = 'p1'"))
        # Unkeyed: nothing recorded.
        self.assertEqual(0, self.cloud.db.scalar(
            'SELECT count(*) FROM call_outcomes'))
