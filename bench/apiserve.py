"""Start and stop the services the side-by-side benchmarks compare.

Both run under the same gunicorn command line (version, worker count,
worker class, bind address, timeouts); only the WSGI application, its
configuration file and the Python environment differ. The reference
(openstack-placement) lives in its own virtualenv in a cache directory,
installed at run time: nothing of it is kept in this repository.
"""

import contextlib
import importlib.metadata
import os
import socket
import subprocess
import sys
import threading
import time

import psutil
import requests

REFERENCE_PACKAGE = 'openstack-placement==16.0.0'
PG_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres'
PG_URL = 'postgresql+psycopg2://postgres@127.0.0.1:5432/%s'


def gunicorn_version():
    try:
        return importlib.metadata.version('gunicorn')
    except importlib.metadata.PackageNotFoundError:
        sys.exit('gunicorn is not installed in this environment: '
                 'pip install gunicorn')


def ensure_reference_venv(path, log):
    """Return the python of the reference's virtualenv at ``path``.

    An existing virtualenv (one made by hand, or an earlier run's) is
    used as it is once it holds openstack-placement 16.0.0 and the
    gunicorn version this environment runs resobj with, so both services
    are served by the same server code; it is refused otherwise, with
    the pip command that fixes it. A missing one is created.
    """
    python = os.path.join(path, 'bin', 'python')
    wanted = ['gunicorn==%s' % gunicorn_version(), REFERENCE_PACKAGE,
              'psycopg2-binary']
    if os.path.exists(python):
        found = subprocess.run(
            [python, '-c', 'import importlib.metadata as m\n'
             'for name in ("gunicorn", "openstack-placement", '
             '"psycopg2-binary"):\n'
             '    try: print("%s==%s" % (name, m.version(name)))\n'
             '    except m.PackageNotFoundError: print(name)'],
            stdout=subprocess.PIPE, text=True, check=True).stdout.split()
        # Unpinned names (psycopg2-binary) are wanted at any version.
        have = [f if '==' in w else f.split('==')[0]
                for f, w in zip(found, wanted)]
        if have != wanted:
            sys.exit('%s holds %s; the benchmark needs %s:\n  %s -m pip '
                     'install %s' % (path, ' '.join(found), ' '.join(wanted),
                                     python, ' '.join(wanted)))
        return python
    log('creating the reference virtualenv in %s (%s)'
        % (path, ', '.join(wanted)))
    subprocess.run([sys.executable, '-m', 'venv', path], check=True)
    pip = subprocess.run([python, '-m', 'pip', 'install', '-q'] + wanted,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if pip.returncode:
        sys.exit('pip install failed in %s:\n%s' % (path, pip.stdout))
    return python


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def fresh_database(backend, name, workdir):
    """Return the SQLAlchemy URL of an empty database called name."""
    if backend == 'sqlite':
        path = os.path.join(workdir, name + '.sqlite')
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return 'sqlite:///' + path
    _administer('DROP DATABASE IF EXISTS %s WITH (FORCE)' % name,
                'CREATE DATABASE %s' % name)
    return PG_URL % name


def _administer(*commands):
    """Run ``commands`` on the PostgreSQL server as its administrator.

    Each on its own, outside a transaction block (CREATE and DROP
    DATABASE refuse to run inside one).
    """
    import psycopg2
    conn = psycopg2.connect(PG_ADMIN_URL)
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            for command in commands:
                cur.execute(command)
    finally:
        conn.close()


def autovacuum_on():
    """Whether the PostgreSQL server runs autovacuum (None: unknown)."""
    import psycopg2
    conn = psycopg2.connect(PG_ADMIN_URL)
    try:
        with conn.cursor() as cur:
            cur.execute('SHOW autovacuum')
            return cur.fetchone()[0] == 'on'
    finally:
        conn.close()


def analyze(url):
    """ANALYZE every table of the PostgreSQL database at ``url``."""
    import psycopg2
    conn = psycopg2.connect(PG_ADMIN_URL.rsplit('/', 1)[0] + '/' +
                            url.rsplit('/', 1)[1])
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute('ANALYZE')
    finally:
        conn.close()


class AutoAnalyze(object):
    """What autovacuum does, for one database, while it runs.

    PostgreSQL's autovacuum is on by default, and the targets are stated
    for a server that runs it; a server with it off (this VM's CI
    configuration) never gathers statistics, and its planner takes the
    freshly filled tables for empty; nor does it vacuum them, so an
    index-only scan still visits the table for every row (the
    visibility map is set by VACUUM). Changing that server-wide setting
    would change every other user of the server, so this thread applies
    autovacuum's own rules to the benchmarked database instead, with the
    server's settings: every ``autovacuum_naptime``, each table with
    more than ``autovacuum_vacuum_threshold +
    autovacuum_vacuum_scale_factor * reltuples`` dead rows, or more than
    ``autovacuum_vacuum_insert_threshold +
    autovacuum_vacuum_insert_scale_factor * reltuples`` rows inserted
    since its last vacuum, is vacuumed; each with more than
    ``autovacuum_analyze_threshold + autovacuum_analyze_scale_factor *
    reltuples`` rows changed since its last analyze is analyzed. Not
    started when the server runs autovacuum.
    """

    def __init__(self, url, log):
        self.dsn = (PG_ADMIN_URL.rsplit('/', 1)[0] + '/' +
                    url.rsplit('/', 1)[1])
        self.log = log
        self.analyzed = 0
        self.vacuumed = 0
        self._stop = threading.Event()
        self._thread = None

    def _settings(self, cur):
        cur.execute("SELECT name, setting FROM pg_settings WHERE name IN "
                    "('autovacuum_naptime', 'autovacuum_analyze_threshold',"
                    " 'autovacuum_analyze_scale_factor',"
                    " 'autovacuum_vacuum_threshold',"
                    " 'autovacuum_vacuum_scale_factor',"
                    " 'autovacuum_vacuum_insert_threshold',"
                    " 'autovacuum_vacuum_insert_scale_factor')")
        return {name: float(value) for name, value in cur.fetchall()}

    def _round(self, cur, settings):
        self.vacuumed += self._apply(
            cur, 'VACUUM', 'vacuumed',
            's.n_dead_tup > %s + %s * GREATEST(c.reltuples, 0) '
            'OR s.n_ins_since_vacuum > %s + %s * GREATEST(c.reltuples, 0)',
            (settings['autovacuum_vacuum_threshold'],
             settings['autovacuum_vacuum_scale_factor'],
             settings['autovacuum_vacuum_insert_threshold'],
             settings['autovacuum_vacuum_insert_scale_factor']))
        self.analyzed += self._apply(
            cur, 'ANALYZE', 'analyzed',
            's.n_mod_since_analyze > %s + %s * GREATEST(c.reltuples, 0)',
            (settings['autovacuum_analyze_threshold'],
             settings['autovacuum_analyze_scale_factor']))

    def _apply(self, cur, command, done, condition, values):
        """Run ``command`` on each table past ``condition``; how many."""
        cur.execute('SELECT s.relname FROM pg_stat_user_tables s '
                    'JOIN pg_class c ON c.oid = s.relid WHERE ' + condition,
                    values)
        tables = [table for (table,) in cur.fetchall()]
        for table in tables:
            cur.execute('%s "%s"' % (command, table))
        if tables:
            self.log('autovacuum rule: %s %s' % (done, ', '.join(tables)))
        return len(tables)

    @contextlib.contextmanager
    def _cursor(self):
        import psycopg2
        conn = psycopg2.connect(self.dsn)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                yield cur
        finally:
            conn.close()

    def _run(self):
        with self._cursor() as cur:
            settings = self._settings(cur)
            while not self._stop.wait(settings['autovacuum_naptime']):
                self._round(cur, settings)

    def run_once(self):
        """One round now, as autovacuum's next one would do it."""
        with self._cursor() as cur:
            self._round(cur, self._settings(cur))

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()


def checkpoint(backend):
    """Have PostgreSQL write every changed page out now.

    Before each service's run, so that each starts from the same
    state: none from a previous service's changes left to write during
    its run (the next periodic checkpoint would), and each page's first
    change after it writing the whole page to the WAL, for both alike.
    DROP DATABASE forces one too.
    """
    if backend == 'postgresql':
        _administer('CHECKPOINT')


def drop_database(backend, url):
    if backend == 'postgresql':
        _administer('DROP DATABASE IF EXISTS %s WITH (FORCE)'
                    % url.rsplit('/', 1)[1])


class Service(object):
    """One service: its config, schema sync and gunicorn process."""

    def __init__(self, name, python, app, env, workdir, db_url):
        self.name = name
        self.db_url = db_url
        self.db_name = (db_url.rsplit('/', 1)[1]
                        if db_url.startswith('postgresql') else None)
        self.python = python
        self.app = app
        self.env = env
        self.workdir = workdir
        self.proc = None
        self.log_path = os.path.join(workdir, name + '-server.log')

    def start(self, port, workers, worker_class, threads):
        cmd = [self.python, '-m', 'gunicorn',
               '--bind', '127.0.0.1:%d' % port,
               '--workers', str(workers),
               '--worker-class', worker_class,
               '--threads', str(threads),
               # The slowest reference request (every candidate over
               # 1,000 providers) must not be killed as a hung worker.
               '--timeout', '600',
               '--keep-alive', '30',
               '--no-control-socket',
               self.app]
        env = dict(os.environ, **self.env)
        # Appended to: a restarted server keeps its earlier log.
        self.log = open(self.log_path, 'a')
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT,
                                     cwd=self.workdir)
        self.url = 'http://127.0.0.1:%d' % port
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('%s exited at start (rc %s); log: %s\n%s'
                                   % (self.name, self.proc.returncode,
                                      self.log_path, self.log_tail()))
            try:
                if requests.get(self.url + '/', timeout=5).status_code == 200:
                    break
            except (requests.ConnectionError, requests.Timeout):
                # Not listening yet, or listening with its workers still
                # loading the application (seconds on a busy machine).
                pass
            time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError('%s did not answer GET / in 120 s; log: %s'
                               % (self.name, self.log_path))
        self.command = ' '.join(cmd)

    def log_tail(self, lines=30):
        self.log.flush()
        with open(self.log_path) as f:
            return ''.join(f.readlines()[-lines:])

    def pids(self):
        master = psutil.Process(self.proc.pid)
        return [master] + master.children(recursive=True)

    def db_pids(self):
        """PostgreSQL backends serving this service's database.

        Their CPU is the database's share of each request; with SQLite
        that work happens inside the workers and is counted there.
        """
        if not self.db_name:
            return []
        import psycopg2
        conn = psycopg2.connect(PG_ADMIN_URL)
        try:
            with conn.cursor() as cur:
                cur.execute('SELECT pid FROM pg_stat_activity '
                            'WHERE datname = %s', (self.db_name,))
                pids = [row[0] for row in cur.fetchall()]
        finally:
            conn.close()
        procs = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                procs.append(psutil.Process(pid))
        return procs

    def cpu_snapshot(self):
        """{pid: user + system seconds} of the server and its database.

        Diffed per pid, so a process started during a phase counts from
        zero and one that ended during it is lost (neither happens with
        gunicorn's long-lived workers and oslo.db's connection pool).
        """
        snap = {}
        for kind, procs in (('app', self.pids()), ('db', self.db_pids())):
            for proc in procs:
                with contextlib.suppress(psutil.Error):
                    times = proc.cpu_times()
                    snap[kind, proc.pid] = times.user + times.system
        return snap

    def cpu_since(self, before):
        """(server seconds, database seconds) used since a snapshot."""
        used = {'app': 0.0, 'db': 0.0}
        for key, value in self.cpu_snapshot().items():
            used[key[0]] += value - before.get(key, 0.0)
        return used['app'], used['db']

    def stop(self):
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.log.close()


def reference_service(python, db_url, workdir):
    confdir = os.path.join(workdir, 'placement-etc')
    os.makedirs(confdir, exist_ok=True)
    conf = os.path.join(confdir, 'placement.conf')
    with open(conf, 'w') as f:
        f.write('[api]\nauth_strategy = noauth2\n\n'
                '[placement_database]\nconnection = %s\n' % db_url)
    bindir = os.path.dirname(python)
    subprocess.run([os.path.join(bindir, 'placement-manage'),
                    '--config-file', conf, 'db', 'sync'],
                   check=True, stdout=subprocess.DEVNULL)
    # placement.wsgi reads $OS_PLACEMENT_CONFIG_DIR/placement.conf
    # (placement/wsgi/__init__.py:_get_config_files in 16.0.0).
    return Service('reference', python, 'placement.wsgi.api:application',
                   {'OS_PLACEMENT_CONFIG_DIR': confdir}, workdir, db_url)


def resobj_service(db_url, workdir):
    conf = os.path.join(workdir, 'resobj.conf')
    with open(conf, 'w') as f:
        f.write('[api]\nauth_strategy = noauth2\n\n'
                '[database]\nconnection = %s\n' % db_url)
    bindir = os.path.dirname(sys.executable)
    subprocess.run([os.path.join(bindir, 'resobj-manage'),
                    '--config-file', conf, 'db', 'sync'],
                   check=True, stdout=subprocess.DEVNULL)
    return Service('resobj', sys.executable, 'resobj.api.wsgi:application',
                   {'RESOBJ_CONFIG_FILE': conf}, workdir, db_url)


def start_service(backend, name, workdir, ref_venv, threads, log):
    """Start ``name`` (reference or resobj) on a fresh database.

    One gunicorn worker with ``threads`` gthread threads, the same
    command line for both services.
    """
    url = fresh_database(backend, 'resobj_sbs_%s' % name, workdir)
    if name == 'reference':
        service = reference_service(ensure_reference_venv(ref_venv, log),
                                    url, workdir)
    else:
        # psycopg (3) is the driver resobj's quick start recommends; the
        # reference stays on psycopg2, the one it is tested with.
        url = url.replace('+psycopg2:', '+psycopg:')
        service = resobj_service(url, workdir)
    service.start(free_port(), 1, 'gthread', threads)
    log('%s: %s (pid %d) on %s' % (name, service.command, service.proc.pid,
                                   url))
    return service


def auto_analyze(backend, service, log):
    """An AutoAnalyze of ``service``'s database when one is needed."""
    if backend == 'postgresql' and not autovacuum_on():
        return AutoAnalyze(service.db_url, log).start()
    return None
