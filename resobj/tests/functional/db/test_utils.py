"""The DB API's shared helpers that lean on a library's private API."""

import sqlalchemy as sa

from resobj.db.api import utils
from resobj.db import facade
from resobj.db.models import resource_provider as rp_models
from resobj.tests.functional import db_base

_RP = rp_models.ResourceProvider.__table__


def _statement():
    # A new construct each time, as the candidate search builds them:
    # only its cache key matches an earlier one.
    return sa.select(_RP.c.id).where(
        _RP.c.name == sa.bindparam('name'),
        _RP.c.id.in_(sa.bindparam('ids', expanding=True)))


@facade.reader
def _compile(context):
    return utils.compile_into_cache(context, _statement(),
                                    {'name': 'x', 'ids': [1]})


@facade.reader
def _run(context):
    result = utils.execute(context, _statement(),
                           {'name': 'x', 'ids': [1, 2, 3]})
    return result.all(), result.context.cache_hit


class TestCompileIntoCache(db_base.DBTestCase):
    """SQLAlchemy's private compilation does what the execution does.

    Fails if SQLAlchemy changes ``Engine._compiled_cache`` or
    ``ClauseElement._compile_w_cache`` (see utils.compile_into_cache).
    """

    def test_compile_into_cache(self):
        self.engine._compiled_cache.clear()
        rows, hit = _run(self.context)
        self.assertEqual(([], self.engine.dialect.CACHE_MISS), (rows, hit))
        self.engine._compiled_cache.clear()
        self.assertTrue(_compile(self.context))
        rows, hit = _run(self.context)
        self.assertEqual(([], self.engine.dialect.CACHE_HIT), (rows, hit))
