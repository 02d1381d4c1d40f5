"""An N conductor and API, an N-1 compute and an N compute, mid-upgrade.

Every service is a real process on PostgreSQL and RabbitMQ; the N-1
compute runs the baseline commit's code (resobj.tests.upgrade.n_minus_1).
Both compute hosts start at N-1 with an instance each, flat (the N-1
release has no NUMA cells); then ``cmp-new`` is upgraded (restarted as N)
with two NUMA cells while ``cmp-old`` keeps running N-1, so its first
audit at N reshapes its inventory and its running instance's allocation
onto cell providers, and
:meth:`TestMixedVersionServices.check_upgraded_node` checks that before
anything else moves. Then, with the test process as the
scheduler: claims on both hosts, a resize from N-1 to N and one back,
one of them reverted, and the periodic audits of both. After each step
every instance's allocations are its flavor exactly, and nothing else is
held (cloud.assert_accounting); the N API reports the same usage. The
conductor's backports for the N-1 side are counted: none while both
releases agree on every object version, some as soon as they differ.
"""

import time

import oslo_messaging as messaging
from oslo_utils import uuidutils
import testscenarios

from resobj.compute import numa
from resobj.compute import rpcapi as compute_rpcapi
from resobj import objects
from resobj.tests.upgrade import cloud
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import services

load_tests = testscenarios.load_tests_apply_scenarios

OLD, NEW = 'cmp-old', 'cmp-new'
# What the upgrade guide sets on every service while an N-1 compute runs.
AUTO = {'compute': 'auto', 'auto_interval': 1}
# The upgraded node's NUMA cells.
CELLS = 2


class TestMixedVersionServices(services.ConductorTestCase):

    def setUp(self):
        super().setUp()
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

    def inventory(self, provider):
        return {row['rc']: row['total'] for row in self.cloud.db.rows(
            'SELECT rc.name AS rc, i.total FROM inventories i '
            'JOIN resource_classes rc ON rc.id = i.resource_class_id '
            'JOIN resource_providers rp ON rp.id = i.resource_provider_id '
            'WHERE rp.uuid = :uuid', uuid=provider)}

    def cells(self, host):
        """{cell provider name: uuid} under ``host``'s node provider."""
        return {row['name']: row['uuid'] for row in self.cloud.db.rows(
            'SELECT c.name AS name, c.uuid AS uuid '
            'FROM resource_providers c '
            'JOIN resource_providers p ON p.id = c.parent_provider_id '
            'WHERE p.uuid = :uuid', uuid=self.provider(host))}

    def check_upgraded_node(self, host, instances):
        """``host`` was just restarted as N with NUMA cells, the other N-1.

        Its first audit at N reshaped it: VCPU and MEMORY_MB moved from the
        node's provider to one provider per cell, DISK_GB stayed, and the
        instances it ran at N-1 hold their flavors on the cells and the
        root (cloud.assert_accounting checks the amounts).
        """
        provider = self.provider(host)
        # The service reports itself alive as an audit starts; the reshape
        # is that audit's next step.
        deadline = time.monotonic() + 30
        while ('VCPU' in self.inventory(provider)
               and time.monotonic() < deadline):
            time.sleep(0.2)
        # On failure, the end of the node's log says why it did not.
        self.assertEqual({'DISK_GB': services.NODE['local_gb']},
                         self.inventory(provider),
                         self.cloud.computes[host].log()[-6000:])
        cells = self.cells(host)
        self.assertEqual(
            sorted(numa.cell_provider_name(host, n) for n in range(CELLS)),
            sorted(cells))
        for uuid in cells.values():
            self.assertEqual(
                {'VCPU': services.NODE['vcpus'] // CELLS,
                 'MEMORY_MB': services.NODE['memory_mb'] // CELLS},
                self.inventory(uuid))
        held = self.cloud.db.rows(
            'SELECT DISTINCT rp.uuid AS uuid, rc.name AS rc '
            'FROM allocations a '
            'JOIN consumers c ON c.id = a.consumer_id '
            'JOIN resource_providers rp ON rp.id = a.resource_provider_id '
            'JOIN resource_classes rc ON rc.id = a.resource_class_id '
            'WHERE c.uuid = :consumer',
            consumer=instances[0].uuid)
        on = {row['rc']: row['uuid'] for row in held}
        self.assertIn(on['VCPU'], cells.values())
        self.assertIn(on['MEMORY_MB'], cells.values())
        self.assertEqual(provider, on['DISK_GB'])
        for instance in instances:
            self.assertEqual(host, objects.Instance.get_by_uuid(
                self.scheduler.context, instance.uuid).host)
        self.assertEqual(objects.service.SERVICE_VERSION,
                         self.cloud.db.scalar(
                             'SELECT version FROM services WHERE host = :h '
                             'AND deleted = 0', h=host))
        # The N-1 node beside it is still flat.
        self.assertEqual({}, self.cells(OLD))
        self.assertEqual(services.NODE['vcpus'],
                         self.inventory(self.provider(OLD))['VCPU'])

    def test_claims_resizes_and_audits_across_versions(self):
        self.cloud.start_computes([OLD, NEW], old=True)
        self.scheduler = self.useFixture(services.Scheduler(
            self.cloud, levels=AUTO))
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
        self.cloud.start_compute(NEW, extra_files=[self.cloud.db.write(
            'numa.conf', '[fake_driver]\nnuma_cells = %d\n'
            '[upgrade_levels]\ncompute = auto\nauto_interval = 1\n'
            % CELLS)])
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

        # Backports for the N-1 side counted; no audit or call failed on
        # any compute, N-1 or N, all along.
        self.cloud.assert_backports_and_no_failures(self)

    def _build(self, scheduler, flavor, host):
        instance = objects.Instance(
            scheduler.context, uuid=uuidutils.generate_uuid(),
            project_id='project-u', user_id='user-u', vm_state='building',
            vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
            root_gb=flavor.root_gb, ephemeral_gb=0, flavor=flavor)
        instance.create()
        self.addCleanup(instance.destroy)
        return scheduler.computes.build_instance(scheduler.context, host,
                                                 instance, host)

    def test_a_capped_call_reaches_the_baseline_compute(self):
        # The baseline serves an older compute RPC API than this code
        # sends uncapped: the cap is what lets the call through.
        old_rpc = n_minus_1.rpc_versions()['compute']
        self.assertNotEqual(old_rpc, compute_rpcapi.VERSION)
        self.cloud.start_compute(OLD, old=True)

        # Uncapped: a 1.1 call with an idempotency key, which the
        # baseline's server refuses (and carries out nothing).
        uncapped = self.useFixture(services.Scheduler(self.cloud))
        self.assertIsNone(uncapped.computes.version_cap)
        flavor = uncapped.flavor('small', 1, 512, 1)
        refused = self.assertRaises(messaging.MessagingException,
                                    self._build, uncapped, flavor, OLD)
        self.assertIn('UnsupportedVersion', '%s %s %s' % (
            type(refused).__name__, getattr(refused, 'exc_type', ''),
            refused))
        cloud.assert_accounting(self, self.cloud.db)

        # Capped to what the baseline serves, explicitly and by auto:
        # the 1.0 form, without the key, carried out by the N-1 code.
        for levels in ({'compute': old_rpc}, AUTO):
            capped = self.useFixture(services.Scheduler(self.cloud,
                                                        levels=levels))
            self.assertEqual(old_rpc, capped.computes.version_cap)
            booted = capped.boot(flavor, OLD)
            self.assertEqual((OLD, 'active'),
                             (booted.host, booted.vm_state))
        cloud.assert_accounting(self, self.cloud.db)
