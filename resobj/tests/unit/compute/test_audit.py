"""Who holds what during moves (resobj.compute.audit), without a DB."""

from resobj.compute import audit
from resobj import objects
from resobj.tests import base

objects.register_all()

OLD = objects.Flavor(name='old', vcpus=1, memory_mb=1, root_gb=1,
                     ephemeral_gb=0, swap=0)
NEW = objects.Flavor(name='new', vcpus=2, memory_mb=2, root_gb=2,
                     ephemeral_gb=0, swap=0)
I1 = '11111111-1111-1111-1111-111111111111'
M1 = '22222222-2222-2222-2222-222222222222'


def instance(node, moving=True, vm_state='active'):
    return objects.Instance(uuid=I1, host=node, node=node, vm_state=vm_state,
                            flavor=OLD, old_flavor=OLD if moving else None,
                            new_flavor=NEW if moving else None)


def migration(source, dest, status='pre-migrating', mid=1):
    return objects.Migration(id=mid, uuid=M1, instance_uuid=I1,
                             source_compute=source, source_node=source,
                             dest_compute=dest, dest_node=dest,
                             status=status)


def held(node, instances, migrations, moved=None):
    return sorted((t.consumer, t.flavor.name, t.kind) for t in
                  audit.tracked_consumers(node, node, instances, migrations,
                                          moved or {}))


class TestTrackedConsumers(base.TestCase):

    def test_instance_without_migration(self):
        self.assertEqual([(I1, 'old', 'instance')],
                         held('s', [instance('s', moving=False)], []))

    def test_deleted_instances_hold_nothing(self):
        self.assertEqual([], held('s', [instance('s', vm_state='deleted')],
                                  []))

    def test_before_finish_source_holds_migration_dest_instance(self):
        inst, mig = instance('s'), migration('s', 'd')
        self.assertEqual([(M1, 'old', 'migration')],
                         held('s', [inst], [mig]))
        self.assertEqual([(I1, 'new', 'instance')],
                         held('d', [], [mig], {I1: inst}))

    def test_after_finish_the_same(self):
        inst, mig = instance('d'), migration('s', 'd', status='finished')
        inst.flavor = NEW
        self.assertEqual([(M1, 'old', 'migration')],
                         held('s', [], [mig], {I1: inst}))
        self.assertEqual([(I1, 'new', 'instance')], held('d', [inst], [mig]))

    def test_same_node_resize_holds_both(self):
        self.assertEqual([(I1, 'new', 'instance'), (M1, 'old', 'migration')],
                         held('s', [instance('s')], [migration('s', 's')]))

    def test_newest_migration_wins(self):
        old = migration('s', 'x', mid=1)
        new = migration('s', 'd', mid=2)
        self.assertEqual(new, audit.newest_per_instance([new, old])[I1])
