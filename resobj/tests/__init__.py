import os

# oslo.db's own opportunistic test URLs, but psycopg (3), the driver
# resobj recommends, for PostgreSQL where oslo.db names psycopg2. oslo.db
# reads the variable when oslo_db.sqlalchemy.provision is first imported,
# so it is set here, before any test module imports it; a value already
# in the environment wins.
os.environ.setdefault('OS_TEST_DBAPI_ADMIN_CONNECTION', ';'.join([
    'sqlite://',
    'postgresql+psycopg://openstack_citest:openstack_citest@localhost/'
    'postgres',
    'mysql+pymysql://openstack_citest:openstack_citest@localhost/',
]))

# Import oslo.versionedobjects through resobj's quiet importer before any
# test module imports it (or oslo_versionedobjects.fixture) directly, so
# the eventlet deprecation warnings it triggers on import never reach the
# test output; see resobj/objects/_ovo.py.
from resobj.objects import _ovo  # noqa: E402,F401
