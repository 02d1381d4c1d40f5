"""Start openstack-placement and resobj-api side by side.

Each gets its own fresh database: a SQLite file in a temporary
directory, or a PostgreSQL database created for the run and dropped
afterwards.
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

REFERENCE = 'openstack-placement==16.0.0'

_APP = """import os
os.environ.setdefault('OS_PLACEMENT_CONFIG_DIR', %r)
from placement import wsgi
application = wsgi.init_application()
"""


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def ensure_reference_venv(path, postgresql):
    """The venv at ``path``, created from PyPI if it does not exist."""
    python = os.path.join(path, 'bin', 'python')
    if not os.path.exists(python):
        subprocess.run([sys.executable, '-m', 'venv', path], check=True)
        packages = [REFERENCE, 'waitress']
        if postgresql:
            packages.append('psycopg2-binary')
        subprocess.run([python, '-m', 'pip', 'install', '-q'] + packages,
                       check=True)
    return path


class Database:
    """A fresh database URL for one server; ``drop()`` removes it."""

    def __init__(self, backend, name, directory, pg_url):
        self.backend = backend
        self._name = name
        self._pg_url = pg_url
        if backend == 'sqlite':
            self.url = 'sqlite:///%s' % os.path.join(directory,
                                                     name + '.db')
        else:
            self._admin('DROP DATABASE IF EXISTS %s' % name)
            self._admin('CREATE DATABASE %s' % name)
            self.url = '%s/%s' % (pg_url, name)

    def _admin(self, statement):
        import sqlalchemy
        engine = sqlalchemy.create_engine(
            self._pg_url + '/postgres', isolation_level='AUTOCOMMIT')
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text(statement))
        engine.dispose()

    def drop(self):
        if self.backend == 'postgresql':
            self._admin('DROP DATABASE IF EXISTS %s WITH (FORCE)'
                        % self._name)


class Server:
    def __init__(self, name, directory):
        self.name = name
        self.directory = directory
        self.port = free_port()
        self.process = None
        self.log = os.path.join(directory, name + '.log')

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.port

    def _spawn(self, argv, env=None, cwd=None):
        with open(self.log, 'ab') as log:
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                cwd=cwd)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('%s exited; see %s' % (self.name,
                                                          self.log))
            try:
                urllib.request.urlopen(self.url + '/', timeout=1).read()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError('%s did not start; see %s' % (self.name,
                                                         self.log))

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Reference(Server):
    def start(self, venv, db_url):
        conf_dir = os.path.join(self.directory, 'placement')
        os.makedirs(conf_dir, exist_ok=True)
        with open(os.path.join(conf_dir, 'placement.conf'), 'w') as f:
            f.write('[DEFAULT]\ndebug = False\n[api]\n'
                    'auth_strategy = noauth2\n[placement_database]\n'
                    'connection = %s\n' % db_url)
        with open(os.path.join(conf_dir, 'app.py'), 'w') as f:
            f.write(_APP % conf_dir)
        env = dict(os.environ, OS_PLACEMENT_CONFIG_DIR=conf_dir)
        bin_dir = os.path.join(venv, 'bin')
        subprocess.run([os.path.join(bin_dir, 'placement-manage'),
                        '--config-file',
                        os.path.join(conf_dir, 'placement.conf'), 'db',
                        'sync'], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        self._spawn([os.path.join(bin_dir, 'waitress-serve'), '--listen',
                     '127.0.0.1:%d' % self.port, '--threads', '1',
                     'app:application'], env=env, cwd=conf_dir)


class Resobj(Server):
    def start(self, db_url):
        conf = os.path.join(self.directory, 'resobj.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_dir = %s\n[api]\nport = %d\n'
                    'workers = 1\nthreads = 1\naccess_log =\n'
                    '[database]\nconnection = %s\n'
                    % (self.directory, self.port, db_url))
        script = os.path.join(os.path.dirname(sys.executable),
                              'resobj-api')
        self._spawn([script, '--config-file', conf])


class Pair:
    """Both servers on fresh databases of one backend."""

    def __init__(self, backend, ref_venv, pg_url, keep=False):
        self.directory = tempfile.mkdtemp(prefix='difftest-')
        self._keep = keep
        tag = '%d' % os.getpid()
        self.databases = [
            Database(backend, 'difftest_ref_' + tag, self.directory,
                     pg_url),
            Database(backend, 'difftest_res_' + tag, self.directory,
                     pg_url)]
        self.reference = Reference('reference', self.directory)
        self.resobj = Resobj('resobj', self.directory)
        try:
            self.reference.start(ref_venv, self.databases[0].url)
            self.resobj.start(self.databases[1].url)
        except Exception:
            self.stop()
            raise

    def stop(self):
        for server in (self.reference, self.resobj):
            server.stop()
        for db in self.databases:
            db.drop()
        if not self._keep:
            shutil.rmtree(self.directory, ignore_errors=True)
