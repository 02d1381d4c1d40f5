"""The gabbi fixture: a fresh database and application per YAML file.

``APIFixture`` builds a private configuration, provisions an empty
database on its backend (a temporary SQLite file, or a new database on
the opportunistic PostgreSQL or MariaDB server), creates the schema and
the standard resource classes and traits, and points the facade at it.
Each YAML file therefore starts from an empty service, whatever ran
before, and runs its requests in order against the real application.

Values YAML files use are exported as environment variables (gabbi's
``$ENVIRON``): provider, consumer, project and user ids unique per file.
"""

import os
import tempfile

import fixtures
from gabbi import fixture as gabbi_fixture
from oslo_db.sqlalchemy import provision
from oslo_utils import uuidutils
import sqlalchemy as sa

from resobj.api import app as api_app
from resobj.api import service
from resobj import context as resobj_context
from resobj.db.api import resource_class as resource_class_db
from resobj.db.api import trait as trait_db
from resobj.db import facade
from resobj.db import models
from resobj.tests import backends
from resobj.tests import fixtures as resobj_fixtures

# The application of the file being run; gabbi's intercept asks for it.
_APP = {}

ENVIRON_UUIDS = ('RP_UUID', 'RP_UUID2', 'RP_UUID3', 'RP_UUID4', 'SS_UUID',
                 'PARENT_UUID', 'CHILD_UUID', 'CHILD_UUID2', 'CONSUMER_UUID',
                 'CONSUMER_UUID2', 'CONSUMER_UUID3', 'AGG_UUID', 'AGG_UUID2',
                 'AGG_UUID3',
                 'PROJECT_ID', 'USER_ID', 'PROJECT_ID2', 'USER_ID2')


def _current_app(environ, start_response):
    return _APP['app'](environ, start_response)


def setup_app():
    # gabbi asks for the application when it builds the tests, before any
    # fixture ran: give it one that calls the current file's.
    return _current_app


class _Database:
    """An empty database of one backend, dropped at the end."""

    def __init__(self, backend_name):
        self._name = backend_name
        self._backend = None
        self._ident = None
        self._tmp = None

    def create(self):
        if self._name == 'sqlite':
            self._tmp = tempfile.TemporaryDirectory(prefix='resobj-gabbi-')
            return 'sqlite:///%s/resobj.sqlite' % self._tmp.name
        # make_fixture's start_fixture has made sure the server is usable.
        self._backend = provision.Backend.backend_for_database_type(
            self._name)
        self._ident = 'gabbi_' + uuidutils.generate_uuid(dashed=False)[:12]
        self._backend.create_named_database(self._ident)
        return self._backend.provisioned_database_url(
            self._ident).render_as_string(hide_password=False)

    def drop(self):
        if self._tmp is not None:
            self._tmp.cleanup()
        if self._backend is not None:
            self._backend.drop_named_database(self._ident)


class AppFixture(fixtures.Fixture):
    """A fresh database of one backend and an application over it.

    ``self.app`` is the WSGI application, ``self.conf`` its configuration.
    The schema, standard resource classes and traits exist; nothing else.

    ``url``: an empty database the caller made (for one behind a proxy,
    resobj.tests.tcp_proxy.proxied_database), instead of a new one;
    ``self.url`` is the one in use. ``options``: {group or None:
    {option: value}}, set before the facade is configured.
    """

    def __init__(self, backend_name, url=None, options=None):
        super().__init__()
        self._backend_name = backend_name
        self.url = url
        self._options = options or {}

    def _setUp(self):
        if self.url is None:
            database = _Database(self._backend_name)
            self.url = sa.engine.make_url(database.create())
            self.addCleanup(database.drop)
        url = self.url.render_as_string(hide_password=False)
        conf = self.useFixture(
            resobj_fixtures.ConfFixture(service.register_all_opts))
        conf.config(group='database', connection=url)
        conf.config(group='api', auth_strategy='noauth2')
        for group, values in self._options.items():
            conf.config(group=group, **values)
        self.conf = conf.conf
        fresh = facade.new_context_manager()
        self.addCleanup(facade.get_context_manager().patch_factory(fresh))
        self.addCleanup(fresh.dispose_pool)
        facade.configure(self.conf)
        models.BASE.metadata.create_all(facade.get_engine())
        ctx = resobj_context.get_admin_context()
        resource_class_db.ensure_sync(ctx)
        trait_db.ensure_sync(ctx)
        self.app = api_app.make_app(self.conf)


def make_fixture(backend_name):
    class APIFixture(gabbi_fixture.GabbiFixture):
        """A fresh database and application for one YAML file."""

        def start_fixture(self):
            # Decided here, outside any fixtures.Fixture: a SkipTest raised
            # inside one reaches gabbi wrapped in MultipleExceptions, which
            # gabbi reports as the file's first test failing and then
            # stops the whole test process. Raised plainly, gabbi reports
            # every test of the file as skipped with this reason.
            if backend_name != 'sqlite':
                backends.provisioning_backend(backend_name)
            self._app = AppFixture(backend_name)
            self._app.setUp()
            _APP['app'] = self._app.app
            self._saved_environ = {k: os.environ.get(k)
                                   for k in ENVIRON_UUIDS}
            for key in ENVIRON_UUIDS:
                os.environ[key] = uuidutils.generate_uuid()

        def stop_fixture(self):
            _APP.pop('app', None)
            for key, value in self._saved_environ.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            self._app.cleanUp()

    APIFixture.__name__ = 'APIFixture'
    return APIFixture
