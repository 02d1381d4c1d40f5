"""An N conductor and API, an N-1 compute and an N compute, mid-upgrade.

Every service is a real process on PostgreSQL and RabbitMQ; the N-1
compute runs the baseline commit's code (resobj.tests.upgrade.n_minus_1).
Both compute hosts start at N-1 with an instance each; then ``cmp-new``
is upgraded (restarted as N) while ``cmp-old`` keeps running N-1, and
:meth:`TestMixedVersionServices.check_upgraded_node` checks the upgraded
node before anything else moves. Then, with the test process as the
scheduler: claims on both hosts, a resize from N-1 to N and one back,
one of them reverted, and the periodic audits of both. After each step
every instance's allocations are its flavor exactly, and nothing else is
held (cloud.assert_accounting); the N API reports the same usage. The
conductor's backports for the N-1 side are counted: none while both
releases agree on every object version, some as soon as they differ.
"""

import testscenarios

from resobj import objects
from resobj.tests import backends
from resobj.tests import base
from resobj.tests.upgrade import cloud
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import services

load_tests = testscenarios.load_tests_apply_scenarios

OLD, NEW = 'cmp-old', 'cmp-new'


class TestMixedVersionServices(base.TestCase):

    # Named so that CI counts it as a PostgreSQL test, which must run.
    scenarios = [('postgresql', {})]

    def setUp(self):
        super().setUp()
        backends.require('rabbitmq')
        backend = backends.provisioning_backend('postgresql')
        n_minus_1.tree()
        self.cloud = self.useFixture(services.Cloud(backend))
        sync = self.cloud.manage('db', 'sync')
        self.assertEqual(0, sync.returncode, sync.stderr)
        self.cloud.start_conductor()
        self.api = self.cloud.start_api()

    def assert_accounting(self):
        cloud.assert_accounting(self, self.cloud.db)
        # The N API reads the same usage from the same rows.
        for host in (OLD, NEW):
            provider = self.provider(host)
            usages = self.api.get('/resource_providers/%s/usages'
                                  % provider)['usages']
            self.assertEqual(
                self.cloud.db.allocated_per_provider().get(provider, {}),
                {rc: n for rc, n in usages.items() if n})

    def provider(self, host):
        return self.cloud.db.scalar(
            'SELECT uuid FROM compute_nodes WHERE host = :host '
            'AND deleted = 0', host=host)

    def check_upgraded_node(self, host, instances):
        """``host`` was just restarted as N, the other host still N-1.

        Its first audits at N keep the instances it ran at N-1 and its
        inventory. Where an upgraded node changes how it reports itself
        (a reshape of its provider tree, a new inventory class), the
        assertions on what the N code made of the N-1 node go here.
        """
        provider = self.provider(host)
        inventory = {row['rc']: row['total'] for row in self.cloud.db.rows(
            'SELECT rc.name AS rc, i.total FROM inventories i '
            'JOIN resource_classes rc ON rc.id = i.resource_class_id '
            'JOIN resource_providers rp ON rp.id = i.resource_provider_id '
            'WHERE rp.uuid = :uuid', uuid=provider)}
        self.assertEqual({'VCPU': services.NODE['vcpus'],
                          'MEMORY_MB': services.NODE['memory_mb'],
                          'DISK_GB': services.NODE['local_gb']},
                         {rc: inventory.get(rc) for rc in
                          ('VCPU', 'MEMORY_MB', 'DISK_GB')})
        for instance in instances:
            self.assertEqual(host, objects.Instance.get_by_uuid(
                self.scheduler.context, instance.uuid).host)
        self.assertEqual(objects.service.SERVICE_VERSION,
                         self.cloud.db.scalar(
                             'SELECT version FROM services WHERE host = :h '
                             'AND deleted = 0', h=host))

    def test_claims_resizes_and_audits_across_versions(self):
        self.cloud.start_computes([OLD, NEW], old=True)
        self.scheduler = self.useFixture(services.Scheduler(self.cloud))
        small = self.scheduler.flavor('small', 2, 2048, 20)
        large = self.scheduler.flavor('large', 4, 4096, 40)

        # Claims on both N-1 hosts.
        on_old = self.scheduler.boot(small, OLD)
        on_new = self.scheduler.boot(small, NEW)
        self.assertEqual(('active', 'active'),
                         (on_old.vm_state, on_new.vm_state))
        self.assert_accounting()

        # cmp-new is upgraded; cmp-old runs on at N-1.
        since = self.cloud.last_seen()
        self.cloud.start_compute(NEW)
        self.cloud.audited_since([NEW], since)
        self.check_upgraded_node(NEW, [on_new])
        self.assert_accounting()

        # Claims on both, at their releases.
        another = self.scheduler.boot(large, NEW)
        third = self.scheduler.boot(small, OLD)
        self.assertEqual((NEW, OLD), (another.host, third.host))
        self.assert_accounting()

        # A resize from N-1 to N, confirmed on the N-1 source...
        moved = self.scheduler.resize(on_old, large, NEW)
        self.assertEqual((NEW, 'large'), (moved.host, moved.flavor.name))
        self.assert_accounting()
        # ... and back from N to N-1, confirmed on the N source.
        moved = self.scheduler.resize(moved, small, OLD)
        self.assertEqual((OLD, 'small'), (moved.host, moved.flavor.name))
        self.assert_accounting()
        # A resize from N-1 to N reverted on the N destination: the
        # instance stays on its N-1 host with its flavor.
        kept = self.scheduler.resize(third, large, NEW, confirm=False)
        self.assertEqual((OLD, 'small'), (kept.host, kept.flavor.name))
        self.assert_accounting()

        # Both hosts' periodic audits change none of it.
        self.cloud.audited_since([OLD, NEW], self.cloud.last_seen())
        self.assert_accounting()

        old_manifest = n_minus_1.manifest()
        differ = any(
            old_manifest.get(name) != classes[0].VERSION
            for name, classes in objects.base.ResobjObjectRegistry
            .obj_classes().items() if name in old_manifest)
        if differ:
            self.assertGreater(self.cloud.backports(), 0)
        else:
            self.assertEqual(0, self.cloud.backports())
        for process in self.cloud.all_computes:
            self.assertNotIn('Traceback', process.log())
