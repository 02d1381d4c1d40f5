"""Create, or reuse, the virtualenv that serves Keystone to the tests.

``python tools/keystone_venv.py DIR`` leaves in ``DIR`` a virtualenv with
``REQUIREMENTS`` installed from the package index (``tox -e keystone``
runs it before the tests of ``resobj/tests/keystone``). Keystone pins its
own libraries, so it never shares resobj's virtualenv.

The virtualenv is reused as long as its stamp file names the same
requirements and Python: only the first run, or a change of either,
installs anything. A run that did not finish leaves no stamp, and the
next one starts again from an empty directory.
"""

import os
import shutil
import subprocess
import sys

REQUIREMENTS = ['keystone==30.0.0', 'gunicorn==27.0.1']
STAMP = 'resobj-keystone-venv'


def _wanted():
    return '%s\n%s\n' % (sys.version.split()[0], '\n'.join(REQUIREMENTS))


def _stamp(directory):
    try:
        with open(os.path.join(directory, STAMP)) as f:
            return f.read()
    except OSError:
        return None


def ensure(directory):
    """The virtualenv in ``directory``, created unless it is current."""
    if _stamp(directory) == _wanted():
        print('%s: reusing %s' % (STAMP, directory))
        return
    print('%s: installing %s into %s' % (STAMP, ' '.join(REQUIREMENTS),
                                         directory), flush=True)
    shutil.rmtree(directory, ignore_errors=True)
    subprocess.run([sys.executable, '-m', 'venv', directory], check=True)
    subprocess.run([os.path.join(directory, 'bin', 'python'), '-m', 'pip',
                    'install', '--quiet', '--disable-pip-version-check']
                   + REQUIREMENTS, check=True)
    with open(os.path.join(directory, STAMP), 'w') as f:
        f.write(_wanted())


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print('usage: keystone_venv.py DIR', file=sys.stderr)
        return 2
    try:
        ensure(os.path.abspath(argv[0]))
    except subprocess.CalledProcessError as exc:
        print('%s: %s' % (STAMP, exc), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
