"""OlderRelease: an older resobj, run beside today's for a round trip.

The older release is a wheel (``resobj-X.Y.Z-py3-none-any.whl``, as
``pip download resobj==X.Y.Z --no-deps`` fetches it) or a commit of a
resobj git repository. Its ``resobj`` package is written into a
temporary directory, and it runs in processes of its own
(``python -P resobj/testing/peer.py``) with ``PYTHONPATH`` naming that
directory and the project's own code: the test process never imports
it. The older release needs the libraries it was made for, taken from
the interpreter that runs it (by default the test's own).

    release = self.useFixture(resobj.testing.OlderRelease(
        commit='<sha>', repo='/src/resobj', modules=['myproject.objects'],
        paths=['/src/myproject']))
    self.assertEqual([], release.round_trip([sample_a(), sample_b()]))
"""

import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile

import fixtures

from resobj.objects import base
from resobj.testing import compare

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'peer.py')


class ReleaseUnavailable(Exception):
    """The older release could not be written out or did not start."""


def unpack_wheel(wheel, directory):
    """Write the packages of ``wheel`` into ``directory``."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(directory)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ReleaseUnavailable('cannot unpack %s: %s' % (wheel, exc))


def export_commit(repo, commit, directory, paths=('resobj',)):
    """Write ``paths`` of ``commit`` of the git ``repo`` into ``directory``.

    ``git archive``, so the repository gains no worktree.
    """
    try:
        archive = subprocess.run(
            ['git', '-C', repo, 'archive', '--format=tar', commit] +
            list(paths), capture_output=True, timeout=120, check=True).stdout
    except FileNotFoundError:
        raise ReleaseUnavailable('git is not installed')
    except subprocess.CalledProcessError as exc:
        raise ReleaseUnavailable('git archive %s in %s failed: %s' % (
            commit, repo, exc.stderr.decode('utf-8', 'replace').strip()))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(directory, filter='data')


def _wheel_version(wheel):
    # A wheel is named <distribution>-<version>-<tags>.whl.
    parts = os.path.basename(wheel).split('-')
    return parts[1] if len(parts) > 2 else os.path.basename(wheel)


class OlderRelease(fixtures.Fixture):
    """An older resobj release, and the round trip of objects through it.

    :param wheel: the path of the release's wheel; or
    :param commit: a commit of the git repository ``repo``.
    :param modules: modules the older side imports after resobj's
        objects, to register the project's own objects.
    :param paths: directories the older side finds those modules in.
    :param python: the interpreter of the older side (default: this one).
    """

    def __init__(self, wheel=None, commit=None, repo=None, modules=(),
                 paths=(), python=None, timeout=300):
        super().__init__()
        if (wheel is None) == (commit is None):
            raise ValueError('name the release by wheel or by commit')
        if commit is not None and repo is None:
            raise ValueError('a commit needs the repository it is in')
        self.wheel, self.commit, self.repo = wheel, commit, repo
        self.modules = list(modules)
        self.paths = [os.path.abspath(p) for p in paths]
        self.python = python or sys.executable
        self.timeout = timeout
        # How messages name the release: its version, or its commit.
        self.name = _wheel_version(wheel) if wheel else commit[:12]

    def _setUp(self):
        self.directory = self.useFixture(fixtures.TempDir()).path
        if self.wheel is not None:
            unpack_wheel(self.wheel, self.directory)
        else:
            export_commit(self.repo, self.commit, self.directory)
        about = self.run('about')
        # An editable install's finder or a stray path entry would make
        # the older side today's code, and every round trip pass.
        if not about['resobj'].startswith(self.directory + os.sep):
            raise ReleaseUnavailable(
                'the older side imported resobj from %s, not from %s'
                % (about['resobj'], self.directory))
        self.manifest = about['manifest']

    def run(self, command, stdin=None):
        """The JSON answer of ``peer.py command`` on the older side."""
        args = [self.python, '-P', PEER, command]
        for module in self.modules:
            args += ['--import', module]
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join([self.directory] + self.paths)
        proc = subprocess.run(args, input=stdin, capture_output=True,
                              text=True, env=env, cwd=self.directory,
                              timeout=self.timeout)
        if proc.returncode:
            raise ReleaseUnavailable('resobj %s: peer.py %s failed (%d):\n%s'
                                     % (self.name, command, proc.returncode,
                                        proc.stderr[-4000:]))
        return json.loads(proc.stdout)

    def backport(self, obj):
        """``obj`` as a primitive at this release's versions."""
        return obj.obj_to_primitive(
            target_version=self.manifest[obj.obj_name()],
            version_manifest=self.manifest)

    def round_trip(self, objs, converted=None):
        """Send ``objs`` through this release and back: the problems.

        Each object goes at this release's versions (children included);
        the older side loads it, names every key it does not know, and
        writes it back; today's code loads that, and every field the
        older side kept must hold the object's value (converted fields
        their keys', see resobj.testing.compare). An empty list when all
        is well.
        """
        found, sent = [], []
        for obj in objs:
            if obj.obj_name() not in self.manifest:
                found.append('%s: resobj %s does not know it (is its module '
                             'in modules?)' % (obj.obj_name(), self.name))
                continue
            sent.append((obj, json.loads(json.dumps(self.backport(obj),
                                                    default=repr))))
        answers = self.run('load', json.dumps([wire for _, wire in sent]))
        for (obj, wire), answer in zip(sent, answers):
            label = '%s %s' % (obj.obj_name(), compare.version(wire))
            if 'error' in answer:
                found.append('%s: resobj %s cannot load it: %s' % (
                    label, self.name, answer['error']))
                continue
            found += ['resobj %s does not know %s' % (self.name, key)
                      for key in answer['unknown']]
            back = answer['primitive']
            try:
                loaded = base.ResobjObjectRegistry.obj_classes()[
                    obj.obj_name()][0].obj_from_primitive(back)
            except Exception as exc:  # noqa: B902 - the problem reported
                found.append('%s: today\'s code cannot load what resobj %s '
                             'wrote back: %s: %s' % (
                                 label, self.name, type(exc).__name__, exc))
                continue
            found += ['%s (through resobj %s)' % (problem, self.name)
                      for problem in compare.kept(obj, loaded, back,
                                                  converted or {})]
        return found
