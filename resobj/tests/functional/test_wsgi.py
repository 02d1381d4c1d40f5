"""resobj.api.wsgi as a server that loads it before forking uses it."""

import os
import subprocess
import sys

import fixtures

from resobj.tests import base

# Loads the module as a server's master would, then reports what a forked
# worker would inherit: the pooled connections, and whether the schema
# exists and the application answers.
_LOAD = '''
import webob
from resobj.api import wsgi
from resobj.db import facade, migration
pooled = facade.get_engine().pool.checkedin()
current = migration.db_version() == migration.head_revision()
status = webob.Request.blank('/').get_response(wsgi.application).status_int
print('loaded:', pooled, current, status)
'''


class TestWsgiModule(base.TestCase):

    def test_loaded_application_leaves_no_pooled_connection(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        conf = os.path.join(tmp, 'resobj.conf')
        with open(conf, 'w') as f:
            f.write('[database]\nconnection = sqlite:///%s\n'
                    % os.path.join(tmp, 'resobj.sqlite'))
        env = dict(os.environ, RESOBJ_CONFIG_FILE=conf, HOME=tmp,
                   XDG_STATE_HOME=os.path.join(tmp, 'state'),
                   XDG_CONFIG_HOME=os.path.join(tmp, 'config'))
        out = subprocess.run(
            [sys.executable, '-c', _LOAD], env=env, cwd=tmp,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(0, out.returncode, out.stderr.decode())
        # Loading synced the schema (it opened connections to do so), and
        # closed them: a worker forked now opens its own. Answering '/'
        # touches no database.
        # (The log goes to stdout too.)
        [loaded] = [line for line in out.stdout.decode().splitlines()
                    if line.startswith('loaded:')]
        self.assertEqual('loaded: 0 True 200', loaded)
