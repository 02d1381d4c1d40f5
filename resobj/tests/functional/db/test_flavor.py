"""The flavors DB API on every backend."""

import sqlalchemy as sa

from resobj.db.api import flavor as flavor_db
from resobj.db import facade
from resobj.db.models import flavor as models
from resobj import exception
from resobj.tests.functional import db_base

_TABLE = models.Flavor.__table__


@facade.reader
def _raw_extra_specs(context, flavor_id):
    return context.session.execute(
        sa.select(_TABLE.c.extra_specs).where(_TABLE.c.id == flavor_id)
    ).scalar_one()


class TestFlavorDB(db_base.DBTestCase):

    def _create(self, **values):
        base = {'flavorid': 'm1.small', 'name': 'small', 'memory_mb': 2048,
                'vcpus': 1, 'root_gb': 20}
        base.update(values)
        return flavor_db.create(self.context, base)

    def test_create_fills_table_defaults(self):
        row = self._create()
        self.assertIsInstance(row['id'], int)
        self.assertEqual(0, row['ephemeral_gb'])
        self.assertEqual(0, row['swap'])
        self.assertEqual(1.0, row['rxtx_factor'])
        self.assertTrue(row['is_public'])
        self.assertFalse(row['disabled'])
        self.assertIsNone(row['description'])
        self.assertEqual(0, row['deleted'])
        self.assertIsNotNone(row['created_at'])
        # No extra specs written reads as an empty dict, not None.
        self.assertEqual({}, row['extra_specs'])

    def test_extra_specs_are_stored_as_json_text(self):
        specs = {'hw:cpu_policy': 'dedicated', 'trait:CUSTOM_X': 'required'}
        row = self._create(extra_specs=specs)
        self.assertEqual(specs, row['extra_specs'])
        raw = _raw_extra_specs(self.context, row['id'])
        self.assertIsInstance(raw, str)
        self.assertEqual(
            '{"hw:cpu_policy": "dedicated", "trait:CUSTOM_X": "required"}',
            raw)

    def test_lookups(self):
        row = self._create(extra_specs={'a': 'b'})
        self.assertEqual(row, flavor_db.get(self.context, row['id']))
        self.assertEqual(row, flavor_db.get_by_flavor_id(self.context,
                                                         'm1.small'))
        self.assertEqual(row, flavor_db.get_by_name(self.context, 'small'))

    def test_not_found_names_the_key(self):
        for call, arg, key in (
                (flavor_db.get, 4242, 'id=4242'),
                (flavor_db.get_by_flavor_id, 'nope', 'flavorid=nope'),
                (flavor_db.get_by_name, 'tiny', 'name=tiny')):
            exc = self.assertRaises(exception.FlavorNotFound, call,
                                    self.context, arg)
            self.assertEqual(key, exc.kwargs['key'])
            self.assertIn(key, str(exc))

    def test_duplicate_flavorid_or_name_is_refused(self):
        self._create()
        exc = self.assertRaises(exception.FlavorExists, self._create,
                                name='other')
        self.assertEqual('m1.small', exc.kwargs['flavorid'])
        self.assertEqual('other', exc.kwargs['name'])
        self.assertRaises(exception.FlavorExists, self._create,
                          flavorid='other')

    def test_update(self):
        row = self._create()
        updated = flavor_db.update(self.context, row['id'],
                                   {'extra_specs': {'k': 'v'},
                                    'description': 'general purpose',
                                    'disabled': True})
        self.assertEqual({'k': 'v'}, updated['extra_specs'])
        self.assertEqual('general purpose', updated['description'])
        self.assertTrue(updated['disabled'])
        self.assertIsNotNone(updated['updated_at'])
        self.assertEqual(updated, flavor_db.get(self.context, row['id']))

    def test_update_into_a_duplicate_names_both_keys(self):
        self._create(flavorid='a', name='a')
        b = self._create(flavorid='b', name='b')
        exc = self.assertRaises(exception.FlavorExists, flavor_db.update,
                                self.context, b['id'], {'name': 'a'})
        self.assertEqual({'flavorid': 'b', 'name': 'a'}, exc.kwargs)
        self.assertEqual('b', flavor_db.get(self.context, b['id'])['name'])

    def test_soft_delete_frees_both_keys(self):
        first = self._create()
        deleted = flavor_db.destroy(self.context, first['id'])
        self.assertEqual(first['id'], deleted['deleted'])
        self.assertIsNotNone(deleted['deleted_at'])
        self.assertEqual({}, deleted['extra_specs'])
        self.assertRaises(exception.FlavorNotFound, flavor_db.get,
                          self.context, first['id'])
        second = self._create()
        self.assertNotEqual(first['id'], second['id'])
        every = self.context.elevated(read_deleted='yes')
        self.assertEqual([first['id'], second['id']],
                         [r['id'] for r in flavor_db.get_all(every)])

    def test_deleted_flavor_cannot_change_or_be_deleted_again(self):
        row = self._create()
        flavor_db.destroy(self.context, row['id'])
        self.assertRaises(exception.FlavorNotFound, flavor_db.destroy,
                          self.context, row['id'])
        self.assertRaises(exception.FlavorNotFound, flavor_db.update,
                          self.context, row['id'], {'disabled': True})
        # Even through a context that can see the deleted row.
        every = self.context.elevated(read_deleted='yes')
        self.assertRaises(exception.FlavorNotFound, flavor_db.update,
                          every, row['id'], {'disabled': True})

    def test_get_all_filters(self):
        self._create(flavorid='1', name='pub')
        self._create(flavorid='2', name='priv', is_public=False)
        self._create(flavorid='3', name='off', disabled=True)
        self._create(flavorid='4', name='priv-off', is_public=False,
                     disabled=True)

        def names(**kw):
            return [r['name'] for r in flavor_db.get_all(self.context, **kw)]

        self.assertEqual(['pub', 'priv', 'off', 'priv-off'], names())
        self.assertEqual(['pub', 'off'], names(is_public=True))
        self.assertEqual(['priv', 'priv-off'], names(is_public=False))
        self.assertEqual(['pub', 'priv'], names(include_disabled=False))
        self.assertEqual(['priv'], names(is_public=False,
                                         include_disabled=False))
