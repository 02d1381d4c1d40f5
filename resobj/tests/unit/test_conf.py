import os

import fixtures
from oslo_config import cfg
from oslo_db import options as db_options

from resobj.api import service
from resobj.cmd import options
from resobj import conf as resobj_conf
from resobj.conf import opts
from resobj.conf import paths
from resobj.conf import validate
from resobj.db import connection_url
from resobj import exception
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures


class TestOptions(base.TestCase):

    def test_register_on_a_private_conf(self):
        conf = cfg.ConfigOpts()
        resobj_conf.register_opts(conf)
        conf([], default_config_files=[], default_config_dirs=[])
        self.assertIsNone(conf.state_dir)
        self.assertEqual(30, conf.database.sqlite_busy_timeout)
        self.assertEqual('force_generic_plan',
                         conf.database.postgresql_plan_cache_mode)
        self.assertEqual(1, conf.database.postgresql_prepare_threshold)
        self.assertIsNone(conf.database.connection)
        self.assertNotIn('state_dir', cfg.CONF)

    def test_list_opts_names_every_resobj_option(self):
        conf = cfg.ConfigOpts()
        resobj_conf.register_opts(conf)
        listed = {(group, opt.dest) for group, group_opts in opts.list_opts()
                  for opt in group_opts}
        oslo_db_names = {opt.dest for opt in db_options.database_opts}
        registered = {(group, opt.dest)
                      for group, opt in validate._registered_opts(conf)
                      if not (group == 'database'
                              and opt.dest in oslo_db_names)}
        registered -= {('DEFAULT', 'config_file'),
                       ('DEFAULT', 'config_dir'),
                       ('DEFAULT', 'config_source'),
                       ('DEFAULT', 'shell_completion')}
        self.assertEqual(registered, listed)

    def test_registered_opts_are_the_public_names(self):
        # validate._registered_opts reads oslo.config's private registry;
        # what it yields must be what the public Mappings name (ConfigOpts:
        # DEFAULT's options and the groups; a group: its options).
        conf = cfg.ConfigOpts()
        service.register_all_opts(conf)
        conf.register_opt(cfg.StrOpt('new_name', deprecated_name='old'),
                          group='some_group')
        conf([], default_config_files=[], default_config_dirs=[])
        public = set()
        for name in conf:
            if isinstance(conf[name], cfg.ConfigOpts.GroupAttr):
                public.update((name, opt) for opt in conf[name])
            else:
                public.add(('DEFAULT', name))
        private = {(group, opt.dest)
                   for group, opt in validate._registered_opts(conf)}
        self.assertEqual(public, private)
        self.assertIn(('some_group', 'new_name'), private)
        aliases = [opt.deprecated_opts
                   for group, opt in validate._registered_opts(conf)
                   if opt.dest == 'new_name']
        self.assertEqual([['old']], [[a.name for a in d] for d in aliases])


class TestServiceConfiguration(base.TestCase):
    """The configuration file of a host, as every command reads it."""

    def _write(self, text):
        path = self.useFixture(fixtures.TempDir()).join('resobj.conf')
        with open(path, 'w') as f:
            f.write(text)
        return path

    def test_keystone_authtoken_as_an_openstack_service_sets_it(self):
        path = self._write(KEYSTONE_AUTHTOKEN)
        conf = service.load_conf([path])
        self.assertEqual('placement', conf.keystone_authtoken.username)
        self.assertEqual('http://keystone.example.org/identity/v3',
                         conf.keystone_authtoken.auth_url)
        # The deprecated names keystoneauth still reads are accepted.
        conf = service.load_conf([self._write(
            KEYSTONE_AUTHTOKEN.replace('auth_type', 'auth_plugin')
            .replace('project_name', 'tenant_name'))])
        self.assertEqual('password', conf.keystone_authtoken.auth_type)
        self.assertEqual('service', conf.keystone_authtoken.project_name)

    def test_every_command_reads_the_apis_file(self):
        conf = cfg.ConfigOpts()
        options.register_all(conf)
        conf(['--config-file', self._write(
            KEYSTONE_AUTHTOKEN + '[oslo_policy]\nenforce_new_defaults = '
            'true\n[cors]\nallowed_origin = https://x.example.org\n')],
            default_config_files=[], default_config_dirs=[])
        options.check(conf)

    def test_plugin_options_need_the_plugin(self):
        # Without auth_type nothing reads them.
        path = self._write(KEYSTONE_AUTHTOKEN.replace(
            'auth_type = password\n', ''))
        exc = self.assertRaises(exception.UnknownConfigOption,
                                service.load_conf, [path])
        self.assertIn('[keystone_authtoken] auth_url', str(exc))

    def test_plugin_options_in_the_auth_section(self):
        path = self._write(
            '[api]\nauth_strategy = keystone\n'
            '[keystone_authtoken]\nauth_section = placement_user\n'
            'www_authenticate_uri = http://keystone.example.org/v3\n'
            '[placement_user]\nauth_type = password\n'
            'auth_url = http://keystone.example.org/v3\n'
            'username = placement\npassword = secret\n')
        conf = service.load_conf([path])
        self.assertEqual('placement', conf.placement_user.username)

    def test_misconfigured_keystone_is_refused_at_load(self):
        path = self._write(KEYSTONE_AUTHTOKEN.replace(
            'auth_url = http://keystone.example.org/identity/v3\n', ''))
        exc = self.assertRaises(exception.ConfigurationError,
                                service.load_conf, [path])
        self.assertEqual('Invalid configuration: [keystone_authtoken] '
                         'auth_type = password needs auth_url', str(exc))


# What an OpenStack service's configuration guide tells an operator to
# write (placement's, nova's), with resobj-api behind it.
KEYSTONE_AUTHTOKEN = """[api]
auth_strategy = keystone
[keystone_authtoken]
www_authenticate_uri = http://keystone.example.org/identity
auth_url = http://keystone.example.org/identity/v3
auth_type = password
username = placement
password = secret
project_name = service
user_domain_name = Default
project_domain_name = Default
service_token_roles_required = true
memcached_servers = 127.0.0.1:11211
"""


class TestStateDir(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(resobj_fixtures.ConfFixture())

    def test_xdg_state_home(self):
        self.useFixture(fixtures.EnvironmentVariable('XDG_STATE_HOME',
                                                     '/srv/state'))
        self.assertEqual('/srv/state/resobj',
                         paths.state_dir(self.conf.conf))

    def test_home_fallback(self):
        self.useFixture(fixtures.EnvironmentVariable('XDG_STATE_HOME'))
        self.useFixture(fixtures.EnvironmentVariable('HOME', '/home/u'))
        self.assertEqual('/home/u/.local/state/resobj',
                         paths.state_dir(self.conf.conf))

    def test_option_wins(self):
        self.conf.config(state_dir='~/elsewhere')
        self.assertEqual(os.path.expanduser('~/elsewhere'),
                         paths.state_dir(self.conf.conf))


class TestDatabaseURL(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(resobj_fixtures.ConfFixture())

    def url(self):
        return connection_url.database_url(self.conf.conf)

    def test_default_is_an_embedded_file_with_a_busy_timeout(self):
        self.conf.config(state_dir='/srv/resobj')
        url = self.url()
        self.assertEqual('sqlite', url.get_backend_name())
        self.assertEqual('/srv/resobj/resobj.sqlite', url.database)
        self.assertEqual('30', url.query['timeout'])

    def test_busy_timeout_option(self):
        self.conf.config(sqlite_busy_timeout=5, group='database')
        self.conf.config(connection='sqlite:////tmp/x.db', group='database')
        self.assertEqual('5', self.url().query['timeout'])

    def test_explicit_sqlite_timeout_is_kept(self):
        self.conf.config(connection='sqlite:////tmp/x.db?timeout=2',
                         group='database')
        self.assertEqual('2', self.url().query['timeout'])

    def test_server_urls_gain_only_the_connect_timeout(self):
        url = 'postgresql+psycopg2://u:p@db.example/resobj'
        self.conf.config(connection=url, group='database')
        self.assertEqual(url + '?connect_timeout=5',
                         self.url().render_as_string(hide_password=False))

    def test_a_urls_own_timeouts_win(self):
        url = ('mysql+pymysql://u:p@db/resobj?charset=utf8mb4&'
               'connect_timeout=9&read_timeout=99&write_timeout=98')
        self.conf.config(connection=url, group='database')
        self.assertEqual(url, self.url().render_as_string(
            hide_password=False))

    def test_mysql_connections_use_utf8mb4(self):
        for given in ('mysql+pymysql://u:p@db/resobj',
                      'mysql+pymysql://u:p@db/resobj?charset=utf8',
                      'mysql+pymysql://u:p@db/resobj?charset=utf8mb3',
                      'mariadb+pymysql://u:p@db/resobj?charset=utf8'):
            self.conf.config(connection=given, group='database')
            self.assertEqual('utf8mb4', self.url().query['charset'], given)

    def test_malformed_url(self):
        self.conf.config(connection='not a url', group='database')
        exc = self.assertRaises(exception.ConfigurationError, self.url)
        self.assertIn('[database] connection', str(exc))

    def test_unknown_dialect(self):
        self.conf.config(connection='nosuchdb://x/y', group='database')
        exc = self.assertRaises(exception.ConfigurationError, self.url)
        self.assertIn("unknown database type 'nosuchdb'", str(exc))

    def test_driver_not_installed(self):
        self.conf.config(connection='mysql+mysqlconnector://u@h/d',
                         group='database')
        exc = self.assertRaises(exception.ConfigurationError, self.url)
        self.assertIn('not installed', str(exc))


class TestValidate(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = cfg.ConfigOpts()
        resobj_conf.register_opts(self.conf)

    def _parse(self, text):
        path = self.useFixture(fixtures.TempDir()).join('resobj.conf')
        with open(path, 'w') as f:
            f.write(text)
        self.conf(['--config-file', path], default_config_files=[],
                  default_config_dirs=[])
        return path

    def _refused(self, text):
        """The message check_values gives for the config ``text``."""
        self._parse(text)
        return str(self.assertRaises(exception.ConfigurationError,
                                     validate.check_values, self.conf))

    def test_known_options_pass(self):
        self._parse('[DEFAULT]\nstate_dir = /srv\n'
                    '[Database]\nconnection = sqlite://\n'
                    'max_pool_size = 3\n')
        validate.check_unknown_options(self.conf)
        validate.check_values(self.conf)
        # Read as written: any case but DEFAULT's.
        self.assertEqual(3, self.conf.database.max_pool_size)

    def test_option_names_are_matched_as_oslo_config_reads_them(self):
        # oslo.config reads neither: the option keeps its default.
        for text, option in [
                ('[database]\nmax-pool-size = 3\n',
                 '[database] max-pool-size'),
                ('[default]\nstate_dir = /srv\n', '[default] state_dir')]:
            self.conf.reset()
            path = self._parse(text)
            exc = self.assertRaises(exception.UnknownConfigOption,
                                    validate.check_unknown_options,
                                    self.conf)
            self.assertEqual('Unknown option %s in %s' % (option, path),
                             str(exc))
        self.assertIsNone(self.conf.state_dir)

    def test_deprecated_alias_passes(self):
        # oslo.config still reads an option under its deprecated name, so
        # the check must accept it too.
        self.conf.register_opt(cfg.StrOpt(
            'new_name', deprecated_name='old_name',
            deprecated_group='legacy'), group='database')
        self._parse('[legacy]\nold_name = x\n')
        validate.check_unknown_options(self.conf)
        self.assertEqual('x', self.conf.database.new_name)

    def test_unknown_option(self):
        path = self._parse('[database]\nconection = sqlite://\n')
        exc = self.assertRaises(exception.UnknownConfigOption,
                                validate.check_unknown_options, self.conf)
        self.assertEqual('Unknown option [database] conection in %s' % path,
                         str(exc))

    def test_unknown_group(self):
        self._parse('[databse]\nconnection = sqlite://\n')
        exc = self.assertRaises(exception.UnknownConfigOption,
                                validate.check_unknown_options, self.conf)
        self.assertIn('[databse] connection', str(exc))

    def test_unknown_option_in_a_config_dir(self):
        directory = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(directory, '10-db.conf'), 'w') as f:
            f.write('[databse]\nconnection = sqlite://\n')
        self.conf(['--config-dir', directory], default_config_files=[],
                  default_config_dirs=[])
        exc = self.assertRaises(exception.UnknownConfigOption,
                                validate.check_unknown_options, self.conf)
        self.assertIn('10-db.conf', str(exc))

    def test_bad_value(self):
        message = self._refused('[database]\nsqlite_busy_timeout = soon\n')
        self.assertIn('[database] sqlite_busy_timeout', message)
        self.assertNotIn('LocationInfo', message)

    def test_prepare_threshold_below_minus_one(self):
        self.assertIn('[database] postgresql_prepare_threshold',
                      self._refused('[database]\n'
                                    'postgresql_prepare_threshold = -2\n'))

    def test_plan_cache_mode_outside_its_choices(self):
        # Written into a SET statement: only the listed words pass.
        self.assertIn('[database] postgresql_plan_cache_mode',
                      self._refused('[database]\npostgresql_plan_cache_mode'
                                    " = auto'; DROP TABLE traits; --\n"))
