"""A real Keystone for a test: installed, bootstrapped, served over HTTP.

``KeystoneFixture(venv)`` runs Keystone from the virtualenv ``venv``
(``tools/keystone_venv.py``) on SQLite, everything in a temporary
directory:

* ``keystone-manage`` (``db_sync``, ``fernet_setup``,
  ``credential_setup``, ``bootstrap``) is given the configuration file
  on its command line (it does not read ``OS_KEYSTONE_CONFIG_FILES``)
  and an empty ``--config-dir``, with ``HOME`` in the temporary
  directory, so no file of the machine is read. Every key repository
  (tokens, receipts, credentials, JWS) is in the temporary directory:
  ``[fernet_receipts]`` has its own, which defaults to
  ``/etc/keystone/fernet-keys``. The fixture checks that the keys are
  there, that ``/etc/keystone`` is as it was, and that the tokens
  Keystone issues are sealed with those keys.
* gunicorn serves ``keystone.wsgi.api`` through a module that replaces
  ``sys.argv`` first: Keystone parses it with oslo.config, which refuses
  gunicorn's own arguments.

``bootstrap`` creates the ``admin`` user, project and system role
assignment, the ``admin``, ``manager``, ``member``, ``reader`` and
``service`` roles, and the identity endpoints: the public one at
:attr:`url`; the internal and admin ones at :attr:`internal_url`,
through a TCP proxy the test can cut (:attr:`proxy`), which is where a
service behind keystonemiddleware (interface ``internal``) validates
tokens.
"""

import datetime
import grp
import os
import pwd
import signal
import subprocess
import time
import uuid

import fixtures
import requests

from resobj.tests.api import server as api_server
from resobj.tests import tcp_proxy

ETC = '/etc/keystone'

_CONF = """[DEFAULT]
[database]
connection = sqlite:///{dir}/keystone.db
[token]
provider = fernet
[fernet_tokens]
key_repository = {dir}/fernet-keys
[fernet_receipts]
key_repository = {dir}/fernet-receipts
[credential]
key_repository = {dir}/credential-keys
[jwt_tokens]
jws_public_key_repository = {dir}/jws-keys/public
jws_private_key_repository = {dir}/jws-keys/private
[identity]
domain_config_dir = {dir}/domains
# bcrypt's fewest rounds: every password authentication checks a hash,
# and the default's cost, paid by each command of the CLI test, made that
# test's Keystone the busiest process on a loaded machine.
password_hash_rounds = 4
"""

_KEY_REPOSITORIES = ('fernet-keys', 'fernet-receipts', 'credential-keys')

# Served by gunicorn: Keystone parses sys.argv with oslo.config.
_WSGI = """import sys
sys.argv = [sys.argv[0], '--config-file', {conf!r}, '--config-dir', {empty!r}]
from keystone.wsgi.api import application  # noqa
"""

# Run by Keystone's own Python, which has the cryptography library: the
# number of the key (a file name) that opens the token, or an error.
_OPEN_TOKEN = """import os, sys
from cryptography import fernet
repository, token = sys.argv[1:]
token += '=' * (-len(token) % 4)
for name in sorted(os.listdir(repository)):
    with open(os.path.join(repository, name), 'rb') as f:
        key = fernet.Fernet(f.read())
    try:
        key.decrypt(token.encode())
    except fernet.InvalidToken:
        continue
    print(name)
    break
else:
    sys.exit('no key of %s opens the token' % repository)
"""


def _snapshot(path):
    """What a directory holds (names, sizes, times), None if absent."""
    if not os.path.exists(path):
        return None
    found = []
    for directory, _, files in os.walk(path):
        for name in files:
            stat = os.stat(os.path.join(directory, name))
            found.append((os.path.relpath(os.path.join(directory, name),
                                          path),
                          stat.st_size, stat.st_mtime_ns))
    return sorted(found)


class KeystoneError(Exception):
    pass


class KeystoneFixture(fixtures.Fixture):
    def __init__(self, venv):
        super().__init__()
        self.venv = venv

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.empty_dir = os.path.join(self.dir, 'conf.d')
        os.mkdir(self.empty_dir)
        self.conf_file = os.path.join(self.dir, 'keystone.conf')
        with open(self.conf_file, 'w') as f:
            f.write(_CONF.format(dir=self.dir))
        self.env = dict(os.environ, HOME=self.dir)
        self.env.pop('OS_KEYSTONE_CONFIG_FILES', None)
        self.env.pop('OS_KEYSTONE_CONFIG_DIR', None)
        self.port = api_server.free_port()
        self.url = 'http://127.0.0.1:%d/v3' % self.port
        self.proxy = tcp_proxy.TCPProxy('127.0.0.1', self.port)
        self.addCleanup(self.proxy.close)
        self.internal_url = 'http://127.0.0.1:%d/v3' % self.proxy.port
        self.admin_password = uuid.uuid4().hex

        etc_before = _snapshot(ETC)
        self._initialise()
        self._check_key_repositories()
        if _snapshot(ETC) != etc_before:
            raise KeystoneError('keystone-manage changed %s' % ETC)
        self._serve()
        self.admin_token, _ = self.issue({
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': 'admin', 'domain': {'id': 'default'},
                'password': self.admin_password}}},
            'scope': {'project': {'name': 'admin',
                                  'domain': {'id': 'default'}}}})
        self.check_token_keys(self.admin_token)

    def _manage(self, *args):
        return subprocess.Popen(
            [os.path.join(self.venv, 'bin', 'keystone-manage'),
             '--config-file', self.conf_file, '--config-dir', self.empty_dir]
            + list(args), env=self.env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)

    def _wait(self, *processes):
        for process in processes:
            output, _ = process.communicate(timeout=300)
            if process.returncode:
                raise KeystoneError('%s exited with %s:\n%s' % (
                    ' '.join(process.args), process.returncode,
                    output.decode('utf-8', 'replace')[-4000:]))

    def _initialise(self):
        user = ['--keystone-user', pwd.getpwuid(os.getuid()).pw_name,
                '--keystone-group', grp.getgrgid(os.getgid()).gr_name]
        # The key set-ups touch no database: they run beside db_sync.
        self._wait(self._manage('db_sync'),
                   self._manage('fernet_setup', *user),
                   self._manage('credential_setup', *user))
        self._wait(self._manage(
            'bootstrap', '--bootstrap-password', self.admin_password,
            '--bootstrap-region-id', 'RegionOne',
            '--bootstrap-public-url', self.url,
            '--bootstrap-internal-url', self.internal_url,
            '--bootstrap-admin-url', self.internal_url))

    def _check_key_repositories(self):
        for name in _KEY_REPOSITORIES:
            keys = os.listdir(os.path.join(self.dir, name))
            # A staged key (0) and a primary one.
            if sorted(keys) != ['0', '1']:
                raise KeystoneError('%s holds %s, not keys 0 and 1'
                                    % (name, keys))

    def check_token_keys(self, token):
        """The token is sealed with a key of the temporary repository."""
        subprocess.run(
            [os.path.join(self.venv, 'bin', 'python'), '-c', _OPEN_TOKEN,
             os.path.join(self.dir, 'fernet-keys'), token],
            check=True, capture_output=True, timeout=60)

    def _serve(self):
        with open(os.path.join(self.dir, 'resobj_keystone_wsgi.py'),
                  'w') as f:
            f.write(_WSGI.format(conf=self.conf_file, empty=self.empty_dir))
        self.log_file = os.path.join(self.dir, 'keystone.log')
        self.access_log = os.path.join(self.dir, 'access.log')
        log = open(self.log_file, 'wb')
        self.addCleanup(log.close)
        self.process = subprocess.Popen(
            [os.path.join(self.venv, 'bin', 'gunicorn'), '--bind',
             '127.0.0.1:%d' % self.port, '--workers', '1',
             '--no-control-socket', '--chdir', self.dir,
             '--access-logfile', self.access_log,
             '--access-logformat', '%(m)s %(U)s %(s)s',
             'resobj_keystone_wsgi:application'],
            env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.addCleanup(self._stop)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise KeystoneError('Keystone exited with %s:\n%s' % (
                    self.process.returncode, self.log()))
            try:
                if requests.get(self.url, timeout=5).status_code == 200:
                    return
            except (requests.ConnectionError, requests.Timeout):
                pass
            time.sleep(0.2)
        raise KeystoneError('Keystone did not answer:\n%s' % self.log())

    def _stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def answered(self, method, path, status):
        """How many requests Keystone answered so."""
        try:
            with open(self.access_log) as f:
                return sum(1 for line in f
                           if line.split() == [method, path, str(status)])
        except FileNotFoundError:
            return 0

    def log(self):
        with open(self.log_file, 'rb') as f:
            return f.read().decode('utf-8', 'replace')[-4000:]

    # The identity API, as the test's administrator.

    def call(self, method, path, body=None, token=None, expect=None,
             headers=None):
        headers = dict(headers or {})
        headers['X-Auth-Token'] = token or self.admin_token
        resp = requests.request(method, self.url + path, json=body,
                                timeout=60, headers=headers)
        if expect is not None and resp.status_code != expect:
            raise KeystoneError('%s %s: %s %s' % (method, path,
                                                  resp.status_code,
                                                  resp.text))
        return resp.json() if resp.content else None

    def issue(self, auth):
        """(token, body) for an ``auth`` request body."""
        resp = requests.post(self.url + '/auth/tokens', json={'auth': auth},
                             timeout=60)
        if resp.status_code != 201:
            raise KeystoneError('no token: %s %s' % (resp.status_code,
                                                     resp.text))
        return resp.headers['X-Subject-Token'], resp.json()['token']

    def role_id(self, name):
        roles = self.call('GET', '/roles?name=%s' % name,
                          expect=200)['roles']
        return roles[0]['id']

    def project(self, name):
        return self.call('POST', '/projects', {'project': {
            'name': name, 'domain_id': 'default'}}, expect=201)['project']

    def user(self, name, password, project=None, role=None):
        """A user in domain Default, with ``role`` on ``project``."""
        user = self.call('POST', '/users', {'user': {
            'name': name, 'password': password, 'domain_id': 'default'}},
            expect=201)['user']
        if role:
            self.call('PUT', '/projects/%s/users/%s/roles/%s' % (
                project['id'], user['id'], self.role_id(role)), expect=204)
        return user

    def grant_system(self, user, role):
        self.call('PUT', '/system/users/%s/roles/%s' % (
            user['id'], self.role_id(role)), expect=204)

    def application_credential(self, user, token, lifetime):
        """An application credential of ``user``, for ``lifetime`` seconds.

        The tokens issued with it expire with it.
        """
        expires = (datetime.datetime.now(datetime.timezone.utc)
                   + datetime.timedelta(seconds=lifetime))
        return self.call('POST', '/users/%s/application_credentials' % (
            user['id']), {'application_credential': {
                'name': uuid.uuid4().hex,
                'expires_at': expires.strftime('%Y-%m-%dT%H:%M:%S.%f')}},
            token=token, expect=201)['application_credential']

    def register(self, service_type, name, url):
        """A service and its public and internal endpoints."""
        service = self.call('POST', '/services', {'service': {
            'type': service_type, 'name': name}}, expect=201)['service']
        for interface in ('public', 'internal'):
            self.call('POST', '/endpoints', {'endpoint': {
                'service_id': service['id'], 'interface': interface,
                'region_id': 'RegionOne', 'url': url}}, expect=201)


def venv():
    """Keystone's virtualenv, from the environment (tox -e keystone)."""
    from resobj.tests import keystone
    path = os.environ[keystone.VENV_VARIABLE]
    if not os.path.exists(os.path.join(path, 'bin', 'keystone-manage')):
        raise KeystoneError('%s=%s holds no Keystone; run '
                            'tools/keystone_venv.py %s' % (
                                keystone.VENV_VARIABLE, path, path))
    return path


def service_conf(keystone, password):
    """resobj-api's configuration behind ``keystone``, as documented."""
    return ('[api]\nauth_strategy = keystone\n'
            '[keystone_authtoken]\n'
            'www_authenticate_uri = %s\n'
            'auth_url = %s\n'
            'auth_type = password\n'
            'username = placement\n'
            'password = %s\n'
            'project_name = service\n'
            'user_domain_name = Default\n'
            'project_domain_name = Default\n'
            % (keystone.url, keystone.internal_url, password))
