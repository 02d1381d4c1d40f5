"""Fixtures shared by unit and functional tests."""

import gc
import os
import warnings

import fixtures
from oslo_config import cfg
import sqlalchemy as sa

from resobj.api import collector
from resobj.conductor import api as conductor_api
from resobj import conf as resobj_conf
from resobj import context
from resobj.db import facade
from resobj import objects
from resobj import rpc


class CollectorFixture(fixtures.Fixture):
    """A test leaves resobj-api's collector running, as it found it.

    A response dropped without ``close()`` (webob's ``get_response``
    drops one whose body is never read) keeps the collector paused
    until it is freed, and one caught in a reference cycle is freed only
    by the paused collector: every later test of the worker would run
    with it paused. Collecting at the end of such a test closes them.
    """

    def _setUp(self):
        self.addCleanup(self._collect_dropped_responses)

    @staticmethod
    def _collect_dropped_responses():
        if collector.in_flight():
            gc.collect()


class WarningsFixture(fixtures.Fixture):
    """Make the warnings that signal resobj bugs fail the test.

    Third-party deprecation noise (eventlet, oslo.service) is silenced at
    import in resobj.objects._ovo; everything else that matters is an
    error here.
    """

    def _setUp(self):
        self._filters = warnings.filters[:]
        self.addCleanup(self._restore)
        warnings.simplefilter('once', DeprecationWarning)
        # Anything resobj itself warns about is a bug in resobj or a test.
        warnings.filterwarnings('error', module='resobj')
        # The stock UUIDField stores an invalid UUID after this warning;
        # resobj's raises instead, so seeing it means a stock field slipped
        # in somewhere.
        warnings.filterwarnings('error', category=FutureWarning,
                                module='oslo_versionedobjects')
        # SQLAlchemy warns about real mistakes (cartesian products, implicit
        # coercions, identity conflicts).
        warnings.filterwarnings('error', category=sa.exc.SAWarning)

    def _restore(self):
        warnings.filters[:] = self._filters
        warnings._filters_mutated()


class ConfFixture(fixtures.Fixture):
    """A private, parsed ConfigOpts with every resobj option registered.

    ``register`` registers them (default ``resobj.conf.register_opts``);
    tests of the API pass ``resobj.api.service.register_all_opts``, which
    adds the options of the libraries the API configures.
    """

    def __init__(self, register=None):
        super().__init__()
        self._register = register or resobj_conf.register_opts

    def _setUp(self):
        self.conf = cfg.ConfigOpts()
        self._register(self.conf)
        self.conf([], project='resobj', default_config_files=[],
                  default_config_dirs=[])
        self.addCleanup(self.conf.reset)

    def config(self, group=None, **kw):
        for name, value in kw.items():
            self.conf.set_override(name, value, group=group)


def configure_keystone(conf_fixture, auth_url, **overrides):
    """[keystone_authtoken] as an OpenStack service sets it, on a fixture.

    Service credentials with the password plugin, whose options exist
    only once ``auth_type`` is set (``keystone.register_plugin_opts``).
    """
    from resobj.api import keystone
    conf_fixture.config(group='keystone_authtoken', auth_type='password')
    keystone.register_plugin_opts(conf_fixture.conf)
    settings = dict(
        www_authenticate_uri=auth_url, auth_url=auth_url,
        username='placement', password='secret', project_name='service',
        user_domain_name='Default', project_domain_name='Default')
    settings.update(overrides)
    conf_fixture.config(group='keystone_authtoken', **settings)


def register_rpc_opts(conf):
    """resobj's options and the RPC layer's (transport, timeouts)."""
    resobj_conf.register_opts(conf)
    rpc.register_opts(conf)


class ConductorClient(fixtures.Fixture):
    """This process as a node without database access.

    Objects reach the database through the conductors on ``topic`` over
    ``transport_url`` (``[conductor] use_local = false``), as on a compute
    host. ``conf`` (its ConfFixture as ``conf_fixture``), ``transport``
    and an admin ``context`` are the caller's to use. The test decides
    first whether RabbitMQ can be used (resobj.tests.backends), never
    this fixture.
    """

    def __init__(self, transport_url, topic, timeout, call_retries=None,
                 call_timeout=None, levels=None):
        super().__init__()
        # [upgrade_levels] of this node, set before its first call.
        self._levels = levels or {}
        self._transport_url = transport_url
        self._topic = topic
        self._timeout = timeout
        self._call_retries = call_retries
        self._call_timeout = call_timeout

    def _setUp(self):
        self.conf_fixture = self.useFixture(ConfFixture(register_rpc_opts))
        self.conf_fixture.config(transport_url=self._transport_url,
                                 rpc_response_timeout=self._timeout)
        conductor = {'use_local': False, 'topic': self._topic}
        if self._call_retries is not None:
            conductor['call_retries'] = self._call_retries
        if self._call_timeout is not None:
            conductor['call_timeout'] = self._call_timeout
        self.conf_fixture.config(group='conductor', **conductor)
        if self._levels:
            self.conf_fixture.config(group='upgrade_levels', **self._levels)
        self.conf = self.conf_fixture.conf
        self.transport = rpc.get_transport(self.conf)
        self.addCleanup(self.transport.cleanup)
        self.addCleanup(conductor_api.use_conductor(self.conf,
                                                    self.transport))
        objects.register_all()
        self.context = context.get_admin_context()


class StatementCounter(fixtures.Fixture):
    """Records the SQL statements ``engine`` runs while it is in use.

    ``table`` keeps only statements naming that table, leaving out the
    drivers' and oslo.db's own (transactions, connection checks). Use it
    with ``useFixture`` for a whole test or as a ``with`` block.
    """

    def __init__(self, engine, table=None):
        super().__init__()
        self.engine = engine
        self.table = table
        self.statements = []

    def _setUp(self):
        sa.event.listen(self.engine, 'before_cursor_execute', self._record)
        self.addCleanup(sa.event.remove, self.engine,
                        'before_cursor_execute', self._record)

    def _record(self, conn, cursor, statement, parameters, context,
                executemany):
        if self.table is None or self.table in statement:
            self.statements.append(statement)

    @property
    def count(self):
        return len(self.statements)


class FacadeFixture(fixtures.Fixture):
    """Give resobj's DB facade a fresh, unconfigured factory for one test.

    The process-wide facade can be configured only once; tests of
    ``facade.configure`` and of ``resobj-manage`` configure it again under
    this fixture, and the original factory comes back afterwards.
    """

    def _setUp(self):
        manager = facade.get_context_manager()
        fresh = facade.new_context_manager()
        self.addCleanup(manager.patch_factory(fresh))
        self.addCleanup(fresh.dispose_pool)


class CommandEnvironment(fixtures.Fixture):
    """A command's surroundings with nothing of the machine's in them.

    ``self.path`` is a temporary directory that serves as HOME and state
    directory; oslo.config finds no configuration file or directory, so
    a command reads only the files a test gives it.
    """

    def _setUp(self):
        self.path = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable(
            'XDG_STATE_HOME', os.path.join(self.path, 'state')))
        self.useFixture(fixtures.EnvironmentVariable('HOME', self.path))
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_config.cfg.find_config_files', lambda *a, **k: []))
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_config.cfg.find_config_dirs', lambda *a, **k: []))
