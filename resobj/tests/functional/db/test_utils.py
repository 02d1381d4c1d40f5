"""The DB API's shared helpers, on every backend."""

import typing

from oslo_db import exception as db_exc
import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import resource_provider as rp_models
from resobj.db import precompile
from resobj.tests.functional import db_base

_RP = rp_models.ResourceProvider.__table__


def _two_providers(engine):
    """Providers rp-1 and rp-2; their ids."""
    with engine.begin() as conn:
        conn.execute(sa.insert(_RP), [
            {'uuid': 'u-%d' % n, 'name': 'rp-%d' % n} for n in (1, 2)])
        conn.execute(sa.update(_RP).values(root_provider_id=_RP.c.id))
        return conn.execute(
            sa.select(_RP.c.id).order_by(_RP.c.id)).scalars().all()


def _statement():
    # A new construct each time, as the candidate search builds them:
    # only its cache key matches an earlier one. Marked as the search's
    # statements are: PostgreSQL's hook would prepare and run it.
    return utils.prepared(sa.select(_RP.c.id, _RP.c.name).where(
        _RP.c.name != sa.bindparam('name'),
        _RP.c.id.in_(sa.bindparam('ids', expanding=True))))


@facade.reader
def _compile(context, statement=None):
    return utils.compile_into_cache(
        context, _statement() if statement is None else statement,
        {'name': 'x', 'ids': [1]})


@facade.reader
def _run(context, ids):
    result = utils.execute(context, _statement(),
                           {'name': 'x', 'ids': list(ids) + [max(ids) + 1]})
    return [tuple(row) for row in result], result.context.cache_hit


class TestCompileIntoCache(db_base.DBTestCase):
    """A statement compiled into the cache, not run, serves the next run."""

    def setUp(self):
        super().setUp()
        self.ids = _two_providers(self.engine)

    def test_the_next_run_finds_it_compiled(self):
        self.engine.clear_compiled_cache()
        rows, hit = _run(self.context, self.ids)
        self.assertEqual(self.engine.dialect.CACHE_MISS, hit)
        self.engine.clear_compiled_cache()
        self.assertTrue(_compile(self.context))
        again, hit = _run(self.context, self.ids)
        self.assertEqual(self.engine.dialect.CACHE_HIT, hit)
        # Rows described by the run's own cursor, by name.
        self.assertEqual(rows, again)
        self.assertEqual([(self.ids[0], 'rp-1'), (self.ids[1], 'rp-2')],
                         sorted(again))

    def test_nothing_runs(self):
        # The server would refuse it: no such table.
        missing = sa.table('no_such_table', sa.column('id'))
        statement = utils.prepared(sa.select(missing.c.id).where(
            missing.c.id != sa.bindparam('name'),
            missing.c.id.in_(sa.bindparam('ids', expanding=True))))
        self.assertTrue(_compile(self.context, statement))
        self.assertRaises((db_exc.DBError, sa.exc.DBAPIError),
                          self._run_missing, statement)

    def _run_missing(self, statement):
        with self.engine.connect() as conn:
            conn.execute(statement, {'name': 'x', 'ids': [1]})

    def test_an_engine_that_would_run_it_is_refused(self):
        engine = sa.create_engine(self.engine.url)
        self.addCleanup(engine.dispose)
        with engine.connect() as conn:
            self.assertRaises(RuntimeError, precompile.compile_into_cache,
                              conn, _statement(), {'name': 'x', 'ids': [1]})


class _Pair(typing.NamedTuple):
    name: str
    id: int


class _Lone(typing.NamedTuple):
    name: str


@facade.reader
def _named(context, row_type, *columns):
    return utils.named_rows(utils.execute(
        context, sa.select(*columns).order_by(_RP.c.id)), row_type)


@facade.reader
def _refused(context, row_type, *columns):
    """Whether the result named_rows refused is closed."""
    result = utils.execute(context, sa.select(*columns).order_by(_RP.c.id))
    try:
        utils.named_rows(result, row_type)
    except ValueError:
        return result.closed
    raise AssertionError('named_rows took rows without its fields')


class TestNamedRows(db_base.DBTestCase):
    """Rows become named tuples whose fields take the columns by name."""

    def setUp(self):
        super().setUp()
        _two_providers(self.engine)

    def test_columns_in_the_fields_order(self):
        rows = _named(self.context, _Pair, _RP.c.name, _RP.c.id)
        self.assertEqual(['rp-1', 'rp-2'], [row.name for row in rows])
        self.assertIsInstance(rows[0], _Pair)
        self.assertEqual(rows[0].id + 1, rows[1].id)

    def test_columns_in_another_order_go_to_their_fields(self):
        rows = _named(self.context, _Pair, _RP.c.id, _RP.c.uuid,
                      _RP.c.name)
        self.assertEqual(['rp-1', 'rp-2'], [row.name for row in rows])
        self.assertEqual(rows[0].id + 1, rows[1].id)

    def test_one_field(self):
        rows = _named(self.context, _Lone, _RP.c.id, _RP.c.name)
        self.assertEqual([_Lone('rp-1'), _Lone('rp-2')], rows)

    def test_a_field_without_its_column_is_refused(self):
        error = self.assertRaises(ValueError, _named, self.context, _Pair,
                                  _RP.c.name)
        self.assertIn("no column ['id']", str(error))
        # Closed, not left open to hold SQLite's table locks.
        self.assertIs(True, _refused(self.context, _Pair, _RP.c.name))
