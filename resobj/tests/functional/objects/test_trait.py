"""Trait and TraitList over a real database, on every backend."""

from resobj.db.api import trait as trait_db
from resobj import exception
from resobj import objects
from resobj.tests.functional.db import rp_fixtures as fx
from resobj.tests.functional import db_base

objects.register_all()


class TestTrait(db_base.DBTestCase):

    def setUp(self):
        super().setUp()
        trait_db.ensure_sync(self.context)

    def _create(self, name):
        trait = objects.Trait(self.context, name=name)
        trait.create()
        return trait

    def _names(self, **filters):
        return [t.name for t in objects.TraitList.get_all(self.context,
                                                          **filters)]

    def test_create_and_get(self):
        trait = self._create('CUSTOM_GOLD')
        self.assertIsInstance(trait.id, int)
        self.assertFalse(trait.is_standard)
        self.assertEqual(set(), trait.obj_what_changed())
        found = objects.Trait.get_by_name(self.context, 'CUSTOM_GOLD')
        self.assertEqual((trait.id, False), (found.id, found.is_standard))
        self.assertTrue(objects.Trait.get_by_name(
            self.context, 'HW_CPU_X86_AVX2').is_standard)

    def test_duplicate(self):
        self._create('CUSTOM_GOLD')
        exc = self.assertRaises(exception.TraitExists, self._create,
                                'CUSTOM_GOLD')
        self.assertEqual('CUSTOM_GOLD', exc.kwargs['name'])

    def test_invalid_names(self):
        for name in ('HW_CPU_X86_AVX2', 'CUSTOM_', 'CUSTOM_gold', 'GOLD',
                     'CUSTOM_' + 'A' * 249):
            exc = self.assertRaises(exception.InvalidTraitName, self._create,
                                    name)
            self.assertIsInstance(exc, ValueError)
        self._create('CUSTOM_' + 'A' * 248)

    def test_not_found(self):
        self.assertRaises(exception.TraitNotFound, objects.Trait.get_by_name,
                          self.context, 'CUSTOM_NOPE')

    def test_standard_cannot_be_deleted(self):
        trait = objects.Trait.get_by_name(self.context, 'HW_CPU_X86_AVX2')
        self.assertRaises(exception.TraitCannotDeleteStandard, trait.destroy)
        objects.Trait.get_by_name(self.context, 'HW_CPU_X86_AVX2')

    def test_delete_unused_custom(self):
        self._create('CUSTOM_GOLD').destroy()
        self.assertRaises(exception.TraitNotFound, objects.Trait.get_by_name,
                          self.context, 'CUSTOM_GOLD')

    def test_delete_refused_while_a_provider_has_it(self):
        trait = self._create('CUSTOM_GOLD')
        fx.add_trait(self.context, fx.provider(self.context), trait.name)
        exc = self.assertRaises(exception.TraitInUse, trait.destroy)
        self.assertEqual('CUSTOM_GOLD', exc.kwargs['name'])
        objects.Trait.get_by_name(self.context, 'CUSTOM_GOLD')

    def test_get_all_lists_standard_by_name_then_custom_as_created(self):
        # Placement's order: custom traits after the standard ones, in the
        # order they were created.
        self._create('CUSTOM_GOLD')
        self._create('CUSTOM_AXB')
        names = self._names()
        standard = [n for n in names if not n.startswith('CUSTOM_')]
        self.assertEqual(sorted(standard), standard)
        self.assertIn('HW_CPU_X86_AVX2', standard)
        self.assertEqual(standard + ['CUSTOM_GOLD', 'CUSTOM_AXB'], names)

    def test_get_all_filters(self):
        gold = self._create('CUSTOM_GOLD')
        self._create('CUSTOM_SILVER')
        self._create('CUSTOM_AXB')
        self._create('CUSTOM_A_B')
        provider = fx.provider(self.context)
        fx.add_trait(self.context, provider, gold.name)
        fx.add_trait(self.context, provider, 'HW_CPU_X86_AVX2')

        self.assertEqual(['HW_CPU_X86_AVX2', 'CUSTOM_GOLD'], self._names(
            name_in=['HW_CPU_X86_AVX2', 'CUSTOM_GOLD', 'CUSTOM_NOPE']))
        self.assertEqual([], self._names(name_in=[]))
        self.assertEqual(['CUSTOM_GOLD', 'CUSTOM_SILVER', 'CUSTOM_AXB',
                          'CUSTOM_A_B'], self._names(prefix='CUSTOM_'))
        # "_" and "%" are literal, not LIKE wildcards.
        self.assertEqual(['CUSTOM_A_B'], self._names(prefix='CUSTOM_A_'))
        self.assertEqual([], self._names(prefix='CUSTOM%'))
        self.assertEqual(['HW_CPU_X86_AVX2', 'CUSTOM_GOLD'],
                         self._names(associated=True))
        unassociated = self._names(associated=False)
        self.assertIn('CUSTOM_SILVER', unassociated)
        self.assertNotIn('CUSTOM_GOLD', unassociated)
        self.assertEqual(['CUSTOM_SILVER', 'CUSTOM_AXB', 'CUSTOM_A_B'],
                         self._names(prefix='CUSTOM_', associated=False))
        self.assertEqual(['HW_CPU_X86_AVX2'], self._names(
            name_in=['HW_CPU_X86_AVX2', 'CUSTOM_SILVER'], associated=True))
