"""Run the real ``resobj-api`` in a subprocess for a test.

``ServerFixture`` starts it on a free port against a temporary state
directory (so the embedded SQLite database is new), waits until it
answers, and stops it with SIGTERM at cleanup, recording the exit status.
"""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import fixtures
import requests


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class ServerFixture(fixtures.Fixture):
    def __init__(self, workers=1, extra_conf=''):
        super().__init__()
        self.workers = workers
        self.extra_conf = extra_conf
        self.returncode = None

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.port = free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.access_log = os.path.join(self.dir, 'access.log')
        self.conf_file = os.path.join(self.dir, 'resobj.conf')
        with open(self.conf_file, 'w') as f:
            f.write('[DEFAULT]\nstate_dir = %s\n[api]\naccess_log = %s\n%s'
                    % (os.path.join(self.dir, 'state'), self.access_log,
                       self.extra_conf))
        self.output = tempfile.TemporaryFile()
        self.addCleanup(self.output.close)
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'resobj.cmd.api', '--config-file',
             self.conf_file, '--port', str(self.port), '--workers',
             str(self.workers)],
            stdout=self.output, stderr=subprocess.STDOUT,
            start_new_session=True)
        self.addCleanup(self.stop)
        self._wait_ready()

    def _wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('resobj-api exited with %s:\n%s' % (
                    self.process.returncode, self.log()))
            try:
                requests.get(self.url + '/', timeout=5)
                return
            except (requests.ConnectionError, requests.Timeout):
                # Not listening yet, or listening (the master binds the
                # socket first) while the workers still load: on a
                # loaded machine the first answer took over a second.
                time.sleep(0.1)
        raise RuntimeError('resobj-api did not answer within %ds:\n%s'
                           % (timeout, self.log()))

    def log(self):
        self.output.seek(0)
        return self.output.read().decode('utf-8', 'replace')

    def stop(self, timeout=90):
        """SIGTERM, then wait; returns the exit status (killed: None).

        Idle it stops in about 2 s; the long timeout is for loaded CI
        machines, where workers were seen taking over 30 s to exit.
        """
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
                return None
        self.returncode = self.process.returncode
        return self.returncode
