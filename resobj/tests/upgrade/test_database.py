"""N-1 code writing on today's schema; today's code reads it right.

Step 1 of the upgrade (``resobj-manage db sync`` with the new release)
leaves N-1 services running on the new schema until they are upgraded.
Here today's ``db sync`` builds the schema, then an N-1 process
(old_side.py ``workload``) does what an N-1 compute does with database
access, through its own objects and tracker: audits of two nodes, boot
claims, a resize from one node to the other, confirmed, and a compute
node save. Today's code then reads it: each instance's allocations
(its flavor exactly), ComputeNode's resources (from the provider's
inventory where it has one, from the legacy columns otherwise: both must
say the same), and ``resobj-manage capacity``.
"""

import json

from oslo_config import cfg
import testscenarios

from resobj import conf as resobj_conf
from resobj import context
from resobj.db import facade
from resobj import objects
from resobj.tests import backends
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj.tests.upgrade import cloud
from resobj.tests.upgrade import n_minus_1
from resobj.tests.upgrade import primitives

load_tests = testscenarios.load_tests_apply_scenarios

# What old_side.workload leaves on its nodes: old-a holds a small and a
# large instance, old-b the small one resized to large.
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 6}
LARGE = {'VCPU': 4, 'MEMORY_MB': 4096, 'DISK_GB': 41}


def _sum(*amounts):
    total = {}
    for amount in amounts:
        for rc, n in amount.items():
            total[rc] = total.get(rc, 0) + n
    return total


class TestNMinus1WritesOnTodaysSchema(base.TestCase):

    scenarios = [('postgresql', {'BACKEND': 'postgresql'}),
                 ('mysql', {'BACKEND': 'mysql'})]

    def setUp(self):
        super().setUp()
        backend = backends.provisioning_backend(self.BACKEND)
        n_minus_1.tree()
        self.cloud = self.useFixture(cloud.CloudDatabase(backend))

    def todays_objects(self):
        """Today's objects on this cloud's database, in this process."""
        self.useFixture(resobj_fixtures.FacadeFixture())
        conf = cfg.ConfigOpts()
        resobj_conf.register_opts(conf)
        conf(['--config-file', self.cloud.conf_file], project='resobj',
             default_config_files=[])
        facade.configure(conf)
        objects.register_all()
        return context.get_admin_context()

    def test_n_minus_1_claims_and_saves_read_by_today(self):
        sync = self.cloud.command('resobj.cmd.manage', 'db', 'sync')
        self.assertEqual(0, sync.returncode, sync.stderr)

        did = n_minus_1.run('workload', self.cloud.conf_file)
        self.assertEqual({'old-small': SMALL, 'old-large': LARGE},
                         did['flavors'])

        # Allocations: each instance its flavor, the confirmed migration
        # nothing, the providers' usage their sum.
        cloud.assert_accounting(self, self.cloud)
        held = self.cloud.allocations()
        for uuid, flavor in did['instances'].items():
            self.assertEqual(did['flavors'][flavor], held[uuid])

        ctx = self.todays_objects()
        expected_used = {'old-a': _sum(SMALL, LARGE), 'old-b': LARGE}
        for node_name, used in expected_used.items():
            provider = did['nodes'][node_name]
            usage = objects.UsageList.get_all_by_resource_provider_uuid(
                ctx, provider).as_dict()
            self.assertEqual(used, {k: v for k, v in usage.items() if v})

            node = objects.ComputeNode.get_by_host_and_nodename(
                ctx, 'old-host', node_name)
            self.assertEqual(
                (16, 32768, 500, used['VCPU'], used['MEMORY_MB'],
                 used['DISK_GB']),
                (node.vcpus, node.memory_mb, node.local_gb, node.vcpus_used,
                 node.memory_mb_used, node.local_gb_used))
            # The legacy columns, which readers fall back to without
            # inventory, say the same as the provider.
            legacy = self.cloud.rows(
                'SELECT vcpus, memory_mb, local_gb, vcpus_used, '
                'memory_mb_used, local_gb_used, cpu_allocation_ratio '
                'FROM compute_nodes WHERE hypervisor_hostname = :n '
                'AND deleted = 0', n=node_name)[0]
            self.assertEqual(
                (node.vcpus, node.memory_mb, node.local_gb,
                 node.vcpus_used, node.memory_mb_used, node.local_gb_used),
                (legacy['vcpus'], legacy['memory_mb'], legacy['local_gb'],
                 legacy['vcpus_used'], legacy['memory_mb_used'],
                 legacy['local_gb_used']))
        # The flavors the N-1 code stored with the instances are at its
        # Flavor version, which today's code loaded above (the
        # instances' accounting); count them as the objects carried
        # across versions.
        stored = [json.loads(row['flavor'])[primitives.VERSION]
                  for row in self.cloud.rows('SELECT flavor FROM instances')]
        self.assertEqual([n_minus_1.manifest()['Flavor']] * 3, stored)
        older = sum(1 for v in stored if v != objects.Flavor.VERSION)
        if n_minus_1.manifest()['Flavor'] != objects.Flavor.VERSION:
            self.assertEqual(3, older)
        else:
            self.assertEqual(0, older)
        # The N-1 node's own save is what today reads.
        node = objects.ComputeNode.get_by_host_and_nodename(
            ctx, 'old-host', 'old-b')
        self.assertEqual(2.0, node.cpu_allocation_ratio)

        report = self.cloud.command('resobj.cmd.manage', 'capacity',
                                    '--format', 'json')
        self.assertEqual(0, report.returncode, report.stderr)
        report = json.loads(report.stdout)
        used = {p['uuid']: {i['resource_class']: i['used']
                            for i in p['inventories'] if i['used']}
                for p in report['providers']}
        self.assertEqual({did['nodes'][n]: u
                          for n, u in expected_used.items()}, used)
        totals = {t['resource_class']: t['used'] for t in report['totals']}
        self.assertEqual(_sum(SMALL, LARGE, LARGE),
                         {k: v for k, v in totals.items() if v})
