"""The previous release's code (N-1), taken from this repository's history.

``resobj/tests/upgrade/baseline`` names a commit. The first test of a
process that asks for it has that commit's ``resobj`` package written out
of git (``git archive``, so the user's repository gains no worktree) into
a temporary directory, which the process keeps until it exits. N-1 code
then runs in *separate processes* of the same virtualenv, with
``PYTHONPATH`` pointing at that directory: nothing of the old code is
copied into this tree, and nothing of it is imported by the test process.

Where the commit cannot be had (a tarball without history, no git, a
shallow clone) the tests skip with that reason; CI fails on such a skip
(tools/check_test_results.py).
"""

import atexit
import functools
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

from resobj.tests import service_process

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE_FILE = os.path.join(HERE, 'baseline')
# Today's helper, run by the N-1 interpreter against the N-1 package.
OLD_SIDE = os.path.join(HERE, 'old_side.py')
SKIP_PREFIX = 'N-1 baseline unavailable'
# What the N-1 processes need of the old tree; the package is enough,
# the alembic scripts and the test helpers are inside it.
PATHS = ('resobj',)
# The directory holding an N-1 ``resobj`` already written out, for a copy
# of this package that is no git repository (test_mistakes's copies).
TREE_ENV = 'RESOBJ_TEST_N_MINUS_1_TREE'
# oslotest gives each test a temporary directory of its own, deleted
# after it; the tree outlives the test, so it goes where the process
# started.
TMP = tempfile.gettempdir()


def baseline_commit():
    """The commit named in ``baseline`` (comment lines skipped)."""
    with open(BASELINE_FILE) as f:
        lines = [line.strip() for line in f
                 if line.strip() and not line.startswith('#')]
    if len(lines) != 1:
        raise ValueError('%s must name exactly one commit' % BASELINE_FILE)
    return lines[0]


def _git(*args, stdout=subprocess.PIPE):
    return subprocess.run(('git', '-C', HERE) + args, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=120, check=True)


@functools.lru_cache(maxsize=None)
def _materialise():
    """(directory holding the N-1 ``resobj``, None) or (None, why not)."""
    if os.environ.get(TREE_ENV):
        return os.environ[TREE_ENV], None
    commit = baseline_commit()
    try:
        top = _git('rev-parse', '--show-toplevel').stdout.decode().strip()
    except FileNotFoundError:
        return None, 'git is not installed'
    except subprocess.CalledProcessError as exc:
        return None, 'this tree is not a git repository (%s)' % (
            exc.stderr.decode('utf-8', 'replace').strip())
    try:
        _git('cat-file', '-e', commit + '^{commit}')
    except subprocess.CalledProcessError:
        return None, ('commit %s is not in this repository (a shallow '
                      'clone?)' % commit)
    archive = _git('-C', top, 'archive', '--format=tar', commit,
                   *PATHS).stdout
    directory = tempfile.mkdtemp(prefix='resobj-n-1-%s-' % commit[:8],
                                 dir=TMP)
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(directory, filter='data')
    return directory, None


def tree():
    """The N-1 tree's directory; skips the calling test without one."""
    directory, reason = _materialise()
    if directory is None:
        raise unittest.SkipTest('%s (%s): %s' % (SKIP_PREFIX,
                                                 baseline_commit(), reason))
    return directory


def environ():
    """The environment of an N-1 process: PYTHONPATH names the old tree."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        [tree()] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep)
                    if p])
    return env


def command(*args):
    """``python -P`` for an N-1 process.

    ``-P`` keeps the working directory (or the script's) off sys.path, so
    today's ``resobj`` cannot shadow the old one; cwd is the old tree.
    """
    return [sys.executable, '-P'] + list(args)


def run(*args, stdin=None, timeout=300):
    """Run ``old_side.py args`` in an N-1 process; its JSON answer."""
    proc = subprocess.run(command(OLD_SIDE, *args), env=environ(),
                          cwd=tree(), input=stdin, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode:
        raise RuntimeError('N-1 %s failed (%d):\n%s%s' % (
            ' '.join(args), proc.returncode, proc.stdout, proc.stderr))
    return json.loads(proc.stdout)


def run_module(module, *args, timeout=120):
    """``python -m module args`` in an N-1 process (a command's main)."""
    return subprocess.run(command('-m', module, *args), env=environ(),
                          cwd=tree(), capture_output=True, text=True,
                          timeout=timeout)


@functools.lru_cache(maxsize=None)
def _about():
    about = run('about')
    # Guard against the old process importing today's package (an
    # editable install's finder, a stray path entry): every test here
    # would then compare today's code with itself.
    if not about['file'].startswith(tree() + os.sep):
        raise RuntimeError('the N-1 process imported resobj from %s, not '
                           'from %s' % (about['file'], tree()))
    return about


def manifest():
    """{object name: newest version} as the N-1 code registers them."""
    return dict(_about()['manifest'])


def service_version():
    """The N-1 code's SERVICE_VERSION."""
    return _about()['service_version']


def rpc_versions():
    """{'conductor': version, 'compute': version} of the N-1 RPC APIs."""
    return dict(_about()['rpc'])


def service(module, *conf_files, graceful=True, wait=True):
    """A ServiceProcess running ``module`` from the N-1 tree."""
    return service_process.ServiceProcess(
        module, *conf_files, graceful=graceful, env=environ(),
        cwd=tree(), python=command(), wait=wait)
