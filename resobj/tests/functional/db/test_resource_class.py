"""Standard resource classes and traits in the database, every backend."""

import os_resource_classes as orc
import os_traits

from resobj.db.api import resource_class as rc_db
from resobj.db.api import trait as trait_db
from resobj import exception
from resobj.tests.functional import db_base


class TestStandardSync(db_base.DBTestCase):

    def test_resource_classes_get_their_index_as_id(self):
        self.assertEqual(len(orc.STANDARDS), rc_db.ensure_sync(self.context))
        rows = rc_db.get_all(self.context)
        self.assertEqual(list(enumerate(orc.STANDARDS)),
                         [(r['id'], r['name']) for r in rows])
        # VCPU's id is 0 on every backend (MySQL would otherwise treat 0
        # as "generate one").
        self.assertEqual(0, rc_db.get_by_name(self.context, 'VCPU')['id'])

    def test_sync_is_idempotent(self):
        rc_db.ensure_sync(self.context)
        trait_db.ensure_sync(self.context)
        self.assertEqual(0, rc_db.ensure_sync(self.context))
        self.assertEqual(0, trait_db.ensure_sync(self.context))

    def test_traits(self):
        self.assertEqual(len(os_traits.get_traits()),
                         trait_db.ensure_sync(self.context))
        ids = trait_db.ids_by_names(
            self.context, ['HW_CPU_X86_AVX2', 'MISC_SHARES_VIA_AGGREGATE'])
        self.assertEqual(2, len(set(ids.values())))
        exc = self.assertRaises(exception.TraitNotFound,
                                trait_db.ids_by_names, self.context,
                                ['HW_CPU_X86_AVX2', 'CUSTOM_NOPE'])
        self.assertIn('CUSTOM_NOPE', str(exc))

    def test_unknown_traits_named_first_or_all(self):
        trait_db.ensure_sync(self.context)
        names = ['CUSTOM_ZZ', 'HW_CPU_X86_AVX2', 'CUSTOM_AA']
        exc = self.assertRaises(exception.TraitNotFound,
                                trait_db.ids_by_names, self.context, names)
        self.assertEqual('CUSTOM_AA', exc.kwargs['name'])
        exc = self.assertRaises(exception.TraitNotFound,
                                trait_db.ids_by_names, self.context, names,
                                every=True)
        self.assertEqual('CUSTOM_AA, CUSTOM_ZZ', exc.kwargs['name'])
        # Or in the order given.
        exc = self.assertRaises(exception.TraitNotFound,
                                trait_db.ids_by_names, self.context, names,
                                in_order=True)
        self.assertEqual('CUSTOM_ZZ', exc.kwargs['name'])

    def test_ids_by_names(self):
        rc_db.ensure_sync(self.context)
        self.assertEqual({'VCPU': 0, 'DISK_GB': 2}, rc_db.ids_by_names(
            self.context, ['VCPU', 'DISK_GB']))
        self.assertEqual({}, rc_db.ids_by_names(self.context, []))
        exc = self.assertRaises(exception.ResourceClassNotFound,
                                rc_db.ids_by_names, self.context,
                                ['VCPU', 'CUSTOM_GPU'])
        self.assertIn('CUSTOM_GPU', str(exc))


class TestHelpersOnHardDeletedTables(db_base.DBTestCase):

    def test_select_get_one_and_update_live(self):
        from resobj.db.api import utils
        from resobj.db import facade
        from resobj.db.models import trait as trait_models
        table = trait_models.Trait.__table__

        @facade.writer
        def exercise(context):
            trait_id = utils.insert(context, table, {'name': 'CUSTOM_X'})
            row = utils.get_one(context, table, exception.TraitNotFound,
                                'CUSTOM_X', table.c.id == trait_id)
            count = utils.update_live(context, table, {'name': 'CUSTOM_Y'},
                                      table.c.id == trait_id)
            rows = utils.fetch_all(context, utils.select(context, table))
            return row['name'], count, [r['name'] for r in rows]

        self.assertEqual(('CUSTOM_X', 1, ['CUSTOM_Y']),
                         exercise(self.context))

    def test_insert_refuses_a_value_for_no_column(self):
        from resobj.db.api import utils
        from resobj.db import facade
        from resobj.db.models import trait as trait_models
        import sqlalchemy as sa
        table = trait_models.Trait.__table__

        @facade.writer
        def insert(context, values):
            return utils.insert(context, table, values)

        exc = self.assertRaises(sa.exc.CompileError, insert, self.context,
                                {'name': 'CUSTOM_X', 'colour': 'red'})
        self.assertIn('colour', str(exc))

        @facade.reader
        def names(context):
            return [r['name'] for r in utils.fetch_all(
                context, utils.select(context, table))]

        # Nothing half-written; a valid insert still goes through.
        self.assertNotIn('CUSTOM_X', names(self.context))
        insert(self.context, {'name': 'CUSTOM_X'})
        self.assertIn('CUSTOM_X', names(self.context))
