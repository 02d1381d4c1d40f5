"""A resobj RPC service (resobj-conductor, resobj-compute) in a process.

``ServiceProcess`` starts ``python -m <module> --config-file ...`` in a
session of its own, waits until the service prints that it serves its
topic, and at cleanup stops it with SIGTERM (SIGKILL after 60 s, or at
once with ``graceful=False``). Its output is kept for the test to read.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import fixtures

# What resobj.cmd.serve prints once the RPC server listens.
READY = 'serving topic'


class ServiceProcess(fixtures.Fixture):

    def __init__(self, module, *conf_files, graceful=True, env=None,
                 cwd=None, python=None, wait=True):
        super().__init__()
        # wait=False: set-up only starts the process; the caller starts
        # others meanwhile and calls wait_ready() itself.
        self.wait = wait
        self.module = module
        self.conf_files = conf_files
        self.graceful = graceful
        # Another release's code runs with its own environment
        # (PYTHONPATH), directory and interpreter flags
        # (resobj.tests.upgrade.n_minus_1).
        self.env = env
        self.cwd = cwd
        self.python = python or [sys.executable]

    def _setUp(self):
        self.output = tempfile.TemporaryFile()
        self.addCleanup(self.output.close)
        command = list(self.python) + ['-m', self.module]
        for path in self.conf_files:
            command += ['--config-file', path]
        self.process = subprocess.Popen(
            command, stdout=self.output, stderr=subprocess.STDOUT,
            start_new_session=True, env=self.env, cwd=self.cwd)
        self.addCleanup(self.stop if self.graceful else self.kill)
        if self.wait:
            self.wait_ready()

    def wait_ready(self):
        """Return once the service serves; RuntimeError if it cannot."""
        deadline = time.monotonic() + 60
        while READY not in self.log():
            if self.process.poll() is not None or \
                    time.monotonic() > deadline:
                raise RuntimeError('%s did not start:\n%s'
                                   % (self.module, self.log()))
            time.sleep(0.1)

    def log(self):
        self.output.seek(0)
        return self.output.read().decode('utf-8', 'replace')

    def stop(self, timeout=60):
        """SIGTERM, then wait; SIGKILL if it has not exited in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def kill(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
