"""Run ``openstack`` commands one after the other in one process.

Run as a script (not imported): each line on stdin is a JSON list, the
arguments of one command; each is run as the ``openstack`` executable
runs it (``openstackclient.shell.main``: a new shell, which
authenticates anew), and one JSON line answers with its exit status,
standard output and standard error. The interpreter and the CLI's
imports are paid once instead of once per command.
"""

import contextlib
import io
import json
import sys

from openstackclient import shell


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = shell.main(argv)
        except SystemExit as exc:
            status = exc.code
    return {'status': status, 'stdout': out.getvalue(),
            'stderr': err.getvalue()}


def main():
    for line in sys.stdin:
        print(json.dumps(run(json.loads(line))), flush=True)


if __name__ == '__main__':
    main()
