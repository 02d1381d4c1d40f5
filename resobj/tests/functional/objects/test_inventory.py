"""Inventories written through their provider, on every backend."""

import logging

import fixtures

from resobj import exception
from resobj import objects
from resobj.tests.functional import provider_fixtures as pf

objects.register_all()


def inventory(resource_class, total, **kw):
    return objects.Inventory(resource_class=resource_class, total=total,
                             **kw)


class TestInventory(pf.ProviderTestCase):

    def setUp(self):
        super().setUp()
        self.provider = self.make('node')

    def stored(self):
        """{class: (total, reserved, ratio)} as stored, and the generation."""
        fresh = self.get(self.provider)
        return {inv.resource_class: (inv.total, inv.reserved,
                                     inv.allocation_ratio)
                for inv in objects.InventoryList.get_all_by_resource_provider(
                    self.context, fresh)}, fresh.generation

    def test_add_update_delete_each_bump_once(self):
        vcpu = inventory('VCPU', 8, allocation_ratio=4.0)
        self.provider.add_inventory(vcpu)
        self.assertEqual(self.provider.uuid, vcpu.resource_provider_uuid)
        self.assertEqual(({'VCPU': (8, 0, 4.0)}, 1), self.stored())
        self.assertEqual(1, self.provider.generation)

        self.provider.update_inventory(inventory('VCPU', 16, reserved=2,
                                                 allocation_ratio=1.1))
        self.assertEqual(({'VCPU': (16, 2, 1.1)}, 2), self.stored())

        self.provider.delete_inventory('VCPU')
        self.assertEqual(({}, 3), self.stored())
        self.assertEqual(3, self.provider.generation)

    def test_list_carries_every_field_and_finds_classes(self):
        self.provider.add_inventory(inventory(
            'DISK_GB', 100, reserved=10, min_unit=5, max_unit=50,
            step_size=5, allocation_ratio=1.5))
        found = objects.InventoryList.get_all_by_resource_provider(
            self.context, self.provider)
        disk = found.find('DISK_GB')
        self.assertIsNone(found.find('VCPU'))
        self.assertEqual(
            (self.provider.uuid, 100, 10, 5, 50, 5, 1.5, 135),
            (disk.resource_provider_uuid, disk.total, disk.reserved,
             disk.min_unit, disk.max_unit, disk.step_size,
             disk.allocation_ratio, disk.capacity))
        self.assertIsNotNone(disk.created_at)
        self.assertEqual(set(), found.obj_what_changed())

    def test_missing_and_duplicate_classes(self):
        self.assertRaises(exception.InventoryNotFound,
                          self.provider.update_inventory,
                          inventory('VCPU', 1))
        self.assertRaises(exception.InventoryNotFound,
                          self.provider.delete_inventory, 'VCPU')
        self.provider.add_inventory(inventory('VCPU', 1))
        exc = self.assertRaises(exception.InventoryExists,
                                self.provider.add_inventory,
                                inventory('VCPU', 2))
        self.assertIn('VCPU', str(exc))
        self.assertRaises(exception.ResourceClassNotFound,
                          self.provider.add_inventory,
                          inventory('CUSTOM_NOPE', 1))
        # Only the one successful add counted.
        self.assertEqual(({'VCPU': (1, 0, 1.0)}, 1), self.stored())

    def test_validation(self):
        bad = [dict(total=0), dict(reserved=-1), dict(min_unit=0),
               dict(max_unit=0), dict(step_size=0),
               dict(allocation_ratio=0.0), dict(reserved=11),
               dict(total=2 ** 31)]
        for values in bad:
            kw = dict({'total': 10}, **values)
            inv = objects.Inventory(resource_class='VCPU')
            # Bypass the field types: the DB API validates on its own.
            for name, value in kw.items():
                setattr(inv, '_obj_' + name, value)
            exc = self.assertRaises(exception.InvalidInventoryValue,
                                    self.provider.add_inventory, inv)
            self.assertIn('VCPU', str(exc))
        self.assertEqual(({}, 0), self.stored())
        # Everything reserved is allowed (placement 1.26).
        self.provider.add_inventory(inventory('VCPU', 4, reserved=4))
        self.assertEqual(({'VCPU': (4, 4, 1.0)}, 1), self.stored())

    def test_delete_in_use_is_refused(self):
        self.provider.set_inventory(objects.InventoryList(objects=[
            inventory('VCPU', 8), inventory('MEMORY_MB', 1024)]))
        pf.allocate(self.context, self.provider.id, 'VCPU', 2)
        exc = self.assertRaises(exception.InventoryInUse,
                                self.provider.delete_inventory, 'VCPU')
        self.assertIn(self.provider.uuid, str(exc))
        self.assertIn('VCPU', str(exc))
        # Replacing it away is refused too, and the other changes with it.
        exc = self.assertRaises(
            exception.InventoryInUse, self.provider.set_inventory,
            objects.InventoryList(objects=[inventory('MEMORY_MB', 2048),
                                           inventory('DISK_GB', 10)]))
        self.assertEqual('VCPU', exc.kwargs['resource_classes'])
        self.assertEqual(({'VCPU': (8, 0, 1.0), 'MEMORY_MB': (1024, 0, 1.0)},
                          1), self.stored())
        self.assertEqual(1, self.provider.generation)

    def test_set_inventory_replaces_all_with_one_bump(self):
        self.provider.set_inventory(objects.InventoryList(objects=[
            inventory('VCPU', 8), inventory('MEMORY_MB', 1024),
            inventory('DISK_GB', 100)]))
        self.assertEqual(1, self.provider.generation)
        self.provider.set_inventory(objects.InventoryList(objects=[
            inventory('VCPU', 8), inventory('MEMORY_MB', 4096),
            inventory('PCI_DEVICE', 2)]))
        self.assertEqual(({'VCPU': (8, 0, 1.0), 'MEMORY_MB': (4096, 0, 1.0),
                           'PCI_DEVICE': (2, 0, 1.0)}, 2), self.stored())
        self.provider.set_inventory(objects.InventoryList(objects=[]))
        self.assertEqual(({}, 3), self.stored())
        self.assertRaises(exception.InvalidInventoryValue,
                          self.provider.set_inventory,
                          objects.InventoryList(objects=[
                              inventory('VCPU', 1), inventory('VCPU', 2)]))

    def test_stale_generation_changes_nothing(self):
        stale = self.get(self.provider)
        self.provider.add_inventory(inventory('VCPU', 8))
        for change in (
                lambda: stale.add_inventory(inventory('DISK_GB', 1)),
                lambda: stale.update_inventory(inventory('VCPU', 1)),
                lambda: stale.set_inventory(objects.InventoryList(
                    objects=[inventory('MEMORY_MB', 1)])),
                lambda: stale.delete_inventory('VCPU')):
            self.assertRaises(
                exception.ResourceProviderConcurrentUpdateDetected, change)
        self.assertEqual(({'VCPU': (8, 0, 1.0)}, 1), self.stored())

    def test_over_capacity_update_is_allowed_and_logged(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name='resobj.db.api.inventory', level=logging.WARNING))
        self.provider.add_inventory(inventory('VCPU', 8, max_unit=8))
        pf.allocate(self.context, self.provider.id, 'VCPU', 4, 2)
        # Capacity 6 == usage: no warning yet.
        self.provider.update_inventory(inventory('VCPU', 8, reserved=2))
        self.assertEqual('', logger.output)
        self.provider.update_inventory(inventory('VCPU', 8, reserved=4))
        self.assertEqual(({'VCPU': (8, 4, 1.0)}, 3), self.stored())
        self.assertEqual(
            'Resource provider %s is now over-capacity for VCPU\n'
            % self.provider.uuid, logger.output)
        # Nothing more fits.
        self.assertEqual([], objects.ResourceProviderList.get_all_by_filters(
            self.context, {'resources': {'VCPU': 1}}).objects)

    def test_inventory_of_another_provider_is_refused(self):
        other = self.make('other')
        inv = inventory('VCPU', 1)
        other.add_inventory(inv)
        self.assertRaises(exception.ObjectActionError,
                          self.provider.update_inventory, inv)
        self.assertEqual(({}, 0), self.stored())
