"""Instance objects over a real database, on every backend."""

from oslo_utils import uuidutils

from resobj import exception
from resobj import objects
from resobj.tests.functional import db_base
from resobj.tests import samples

objects.register_all()


class TestInstanceObject(db_base.DBTestCase):

    def _make(self, **kw):
        values = {'uuid': uuidutils.generate_uuid(), 'host': 'host1',
                  'node': 'node1', 'vm_state': 'active', 'task_state': None,
                  'project_id': 'p', 'user_id': 'u', 'vcpus': 2,
                  'memory_mb': 2048, 'root_gb': 20, 'ephemeral_gb': 0,
                  'flavor': samples.make('Flavor')}
        values.update(kw)
        instance = objects.Instance(self.context, **values)
        instance.create()
        return instance

    def test_create_and_get(self):
        instance = self._make(new_flavor=samples.make('Flavor'),
                              booted_from_volume=True)
        for found in (objects.Instance.get_by_uuid(self.context,
                                                   instance.uuid),
                      objects.Instance.get_by_id(self.context, instance.id)):
            self.assertEqual(instance.flavor.obj_to_primitive(),
                             found.flavor.obj_to_primitive())
            self.assertIsNone(found.old_flavor)
            self.assertEqual(instance.new_flavor.name, found.new_flavor.name)
            self.assertTrue(found.booted_from_volume)
            self.assertEqual(set(), found.obj_what_changed())

    def test_duplicate_uuid(self):
        instance = self._make()
        self.assertRaises(exception.InstanceExists, self._make,
                          uuid=instance.uuid)

    def test_save_with_expected_task_state(self):
        instance = self._make(task_state='spawning')
        instance.task_state = None
        instance.vm_state = 'active'
        instance.save(expected_task_state='spawning')
        self.assertIsNone(objects.Instance.get_by_uuid(
            self.context, instance.uuid).task_state)

    def test_save_refuses_a_changed_task_state_and_writes_nothing(self):
        instance = self._make(task_state='spawning')
        other = objects.Instance.get_by_uuid(self.context, instance.uuid)
        other.task_state = 'deleting'
        other.save()
        instance.task_state = None
        instance.memory_mb = 1
        exc = self.assertRaises(exception.UnexpectedTaskState,
                                instance.save,
                                expected_task_state=['spawning', None])
        self.assertEqual('deleting', exc.kwargs['actual'])
        fresh = objects.Instance.get_by_uuid(self.context, instance.uuid)
        self.assertEqual(('deleting', 2048),
                         (fresh.task_state, fresh.memory_mb))

    def test_expected_none_task_state(self):
        instance = self._make(task_state=None)
        instance.task_state = 'migrating'
        instance.save(expected_task_state=None)
        self.assertEqual('migrating', objects.Instance.get_by_uuid(
            self.context, instance.uuid).task_state)

    def test_flavor_change_is_saved(self):
        instance = self._make()
        instance.old_flavor = instance.flavor
        instance.flavor = samples.make('Flavor')
        instance.flavor.name = 'renamed'
        instance.save()
        fresh = objects.Instance.get_by_uuid(self.context, instance.uuid)
        self.assertEqual('renamed', fresh.flavor.name)
        self.assertIsNotNone(fresh.old_flavor)

    def test_pci_devices_are_lazy_loaded(self):
        instance = self._make()
        fresh = objects.Instance.get_by_uuid(self.context, instance.uuid)
        self.assertFalse(fresh.obj_attr_is_set('pci_devices'))
        self.assertEqual(0, len(fresh.pci_devices))
        self.assertEqual(set(), fresh.obj_what_changed())

    def test_get_by_host_and_node(self):
        a = self._make()
        self._make(node='node2')
        gone = self._make()
        gone.destroy()
        self.assertEqual([a.uuid], [i.uuid for i in
                                    objects.InstanceList.get_by_host_and_node(
                                        self.context, 'host1', 'node1')])

    def test_destroy(self):
        instance = self._make()
        instance.destroy()
        self.assertTrue(instance.deleted)
        self.assertRaises(exception.InstanceNotFound,
                          objects.Instance.get_by_uuid, self.context,
                          instance.uuid)
