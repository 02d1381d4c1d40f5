"""resobj.api.wsgi as a server that loads it before forking uses it."""

import os
import sqlite3
import subprocess
import sys

import fixtures

from resobj.tests import base

# Loads the module as a server's master would, then reports what a forked
# worker inherits (the pooled connections), whether the schema exists and
# the application answers, and what the loading process keeps pooled (the
# warmed-up connection, for a server that serves from it).
_LOAD = '''
import os
import webob
from resobj.api import wsgi
from resobj.db import facade, migration
kept = facade.get_engine().pool.checkedin()
child = os.fork()
if child == 0:
    pooled = facade.get_engine().pool.checkedin()
    current = migration.db_version() == migration.head_revision()
    status = webob.Request.blank('/').get_response(
        wsgi.application).status_int
    print('loaded:', pooled, current, status, flush=True)
    os._exit(0)
os.waitpid(child, 0)
print('kept:', kept)
'''


class TestWsgiModule(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.database = os.path.join(self.tmp, 'resobj.sqlite')

    def _load(self):
        tmp = self.tmp
        conf = os.path.join(tmp, 'resobj.conf')
        with open(conf, 'w') as f:
            f.write('[database]\nconnection = sqlite:///%s\n'
                    % self.database)
        env = dict(os.environ, RESOBJ_CONFIG_FILE=conf, HOME=tmp,
                   XDG_STATE_HOME=os.path.join(tmp, 'state'),
                   XDG_CONFIG_HOME=os.path.join(tmp, 'config'))
        out = subprocess.run(
            [sys.executable, '-c', _LOAD], env=env, cwd=tmp,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(0, out.returncode, out.stderr.decode())
        return out

    def test_a_forked_worker_inherits_no_pooled_connection(self):
        out = self._load()
        # Loading synced the schema and warmed one connection up, which
        # the loading process keeps; a worker forked from it forgets it
        # and opens its own. Answering '/' touches no database.
        # (The log goes to stdout too.)
        lines = out.stdout.decode().splitlines()
        [loaded] = [line for line in lines if line.startswith('loaded:')]
        self.assertEqual('loaded: 0 True 200', loaded)
        self.assertIn('kept: 1', lines)

    def test_schema_of_a_newer_release_is_served_as_it_is(self):
        # A rolling upgrade: the database was upgraded by a newer release
        # (whose revision this code does not know) before this older
        # service (re)starts.
        self._load()
        with sqlite3.connect(self.database) as db:
            db.execute("UPDATE alembic_version "
                       "SET version_num = '9999_from_a_newer_release'")
        out = self._load()
        output = (out.stdout + out.stderr).decode()
        [loaded] = [line for line in output.splitlines()
                    if line.startswith('loaded:')]
        # Not upgraded (the revision is still the newer one), and serving.
        self.assertEqual('loaded: 0 False 200', loaded)
        self.assertIn('The database schema is at revision '
                      '9999_from_a_newer_release', output)
        with sqlite3.connect(self.database) as db:
            self.assertEqual(
                [('9999_from_a_newer_release',)],
                db.execute('SELECT version_num FROM alembic_version')
                .fetchall())
