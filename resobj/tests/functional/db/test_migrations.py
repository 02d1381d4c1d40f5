"""The alembic migrations build exactly the schema the models describe."""

from oslo_db.sqlalchemy import test_migrations

from resobj.db import migration
from resobj.db import models
from resobj.tests.functional import db_base


class TestMigrationsMatchModels(test_migrations.ModelsMigrationsSync,
                                db_base.DBTestCase):
    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def db_sync(self, engine):
        migration.db_sync(engine)

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.BASE.metadata


class TestDbSync(db_base.DBTestCase):
    scenarios = db_base.EMPTY_BACKEND_SCENARIOS

    def test_version_before_and_after_sync(self):
        self.assertIsNone(migration.db_version(self.engine))
        migration.db_sync(self.engine)
        self.assertEqual(migration.head_revision(),
                         migration.db_version(self.engine))

    def test_sync_twice_is_harmless(self):
        migration.db_sync(self.engine)
        migration.db_sync(self.engine)
        self.assertEqual(migration.head_revision(),
                         migration.db_version(self.engine))
