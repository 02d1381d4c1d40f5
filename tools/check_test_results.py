"""Summarise a subunit v2 stream and enforce CI's backend rules.

Reads a run's ``stestr last --subunit`` on stdin and prints one closing
line ``tests: N passed, N failed, N skipped``.

Backend tests are the scenario ids ending in ``(postgresql)``,
``(postgresql+<driver>)`` or ``(mysql)``, and the gabbi tests of those
backends (``resobj.tests.api.test_gabbi.<backend>.*``). A skip because a
server was unusable carries a reason starting with
``resobj.tests.backends.SKIP_PREFIX``.

Without options (the full run, every server provisioned) it exits non-zero
when any test failed, when any backend test was skipped or any test was
skipped for an unusable backend, or when no PostgreSQL or no MySQL test
passed (a layout change that silently dropped a backend must not pass).
The upgrade tests (``resobj.tests.upgrade``, N-1 code from the project's
history beside today's) are required there too: every one must pass,
none may skip for any reason (a checkout without the baseline commit
included), and the mixed-version scenarios must have run on PostgreSQL.

With ``--keystone`` the stream is the run of ``tox -e keystone``
(resobj-api behind a real Keystone). It exits non-zero when any test
failed or was skipped, for whatever reason, or when no test of
``resobj.tests.keystone`` passed.

With ``--fresh FULL`` the stream on stdin is a run on a machine whose
servers are unusable (the README's "fresh machine"), and ``FULL`` is the
saved stream of the full run. It exits non-zero unless that run is what a
new developer must see: the same tests as the full run (none lost to a
stopped worker), none failed, every backend test skipped with a
backend-unavailable reason, and every other test passed.
"""

import argparse
import re
import sys

import subunit
import testtools

# Scenario ids end in (backend) or (backend+driver); gabbi ids carry
# .test_gabbi.<backend>.
BACKEND = re.compile(r'\((postgresql|mysql)(?:\+\w+)?\)$'
                     r'|\.test_gabbi\.(postgresql|mysql)\.')
# resobj.tests.backends.SKIP_PREFIX; not imported, so that this script
# runs without resobj on the path.
SKIP_PREFIX = 'backend unavailable'

STATUS_KEY = {'success': 'passed', 'skip': 'skipped', 'xfail': 'passed'}

# The tests of resobj-api behind a real Keystone (tox -e keystone).
KEYSTONE = 'resobj.tests.keystone.'

# The upgrade tests; their scenarios that start services are named for
# their backend, so the fresh-machine runs count them as backend tests.
UPGRADE = 'resobj.tests.upgrade.'


def read_stream(stream):
    """{test id: (status, skip reason or '')} of a subunit v2 stream."""
    results = {}

    def record(test):
        if test['status'] not in ('success', 'fail', 'skip', 'xfail',
                                  'uxsuccess'):
            return
        reason = ''
        if 'reason' in test['details']:
            reason = test['details']['reason'].as_text()
        results[test['id']] = (test['status'], reason)

    source = subunit.ByteStreamToStreamResult(stream,
                                              non_subunit_name='stdout')
    result = testtools.StreamToDict(record)
    result.startTestRun()
    source.run(result)
    result.stopTestRun()
    return results


def backend_of(test_id):
    match = BACKEND.search(test_id)
    return match and (match.group(1) or match.group(2))


def summarise(results):
    counts = {'passed': 0, 'failed': 0, 'skipped': 0}
    for status, _ in results.values():
        counts[STATUS_KEY.get(status, 'failed')] += 1
    print('tests: %(passed)d passed, %(failed)d failed, '
          '%(skipped)d skipped' % counts)
    return counts


def check_full(results):
    problems = []
    backend_ran = {'postgresql': 0, 'mysql': 0}
    for test_id, (status, reason) in sorted(results.items()):
        backend = backend_of(test_id)
        if status == 'skip' and (backend or reason.startswith(SKIP_PREFIX)):
            problems.append('skipped on a required backend: %s (%s)'
                            % (test_id, reason))
        elif backend and status == 'success':
            backend_ran[backend] += 1
    for backend, ran in sorted(backend_ran.items()):
        print('%s tests passed: %d' % (backend, ran))
        if not ran:
            problems.append('no %s test passed' % backend)
    return problems + check_upgrade(results)


def check_upgrade(results):
    """The upgrade tests all ran and passed, on PostgreSQL among others."""
    problems = []
    upgrade = {test_id: outcome for test_id, outcome in results.items()
               if test_id.startswith(UPGRADE)}
    for test_id, (status, reason) in sorted(upgrade.items()):
        if status == 'skip':
            problems.append('upgrade test skipped: %s (%s)'
                            % (test_id, reason))
    passed = sorted(t for t, (status, _) in upgrade.items()
                    if status == 'success')
    print('upgrade tests passed: %d' % len(passed))
    if not any(backend_of(t) == 'postgresql' for t in passed):
        problems.append('no upgrade test passed on PostgreSQL')
    return problems


def check_fresh(results, full):
    problems = []
    missing = sorted(set(full) - set(results))
    if missing:
        problems.append('%d tests of the full run did not run, e.g. %s'
                        % (len(missing), ', '.join(missing[:3])))
    skipped = 0
    for test_id, (status, reason) in sorted(results.items()):
        if backend_of(test_id):
            if status != 'skip' or not reason.startswith(SKIP_PREFIX):
                problems.append('backend test not skipped for its unusable '
                                'server: %s %s %s' % (test_id, status,
                                                      reason))
            else:
                skipped += 1
        elif status not in ('success', 'xfail'):
            problems.append('test without a backend did not pass: %s %s %s'
                            % (test_id, status, reason))
    print('backend tests skipped for their unusable servers: %d' % skipped)
    if not skipped:
        problems.append('no backend test was skipped')
    return problems


def check_keystone(results):
    """Every test of the Keystone run passed, and some ran."""
    problems = ['Keystone test skipped: %s (%s)' % (test_id, reason)
                for test_id, (status, reason) in sorted(results.items())
                if status == 'skip']
    passed = [test_id for test_id, (status, _) in results.items()
              if test_id.startswith(KEYSTONE) and status == 'success']
    print('Keystone tests passed: %d' % len(passed))
    if not passed:
        problems.append('no Keystone test passed')
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--fresh', metavar='FULL',
                        help="check a fresh machine's run against the "
                             "full run's saved subunit stream FULL")
    parser.add_argument('--keystone', action='store_true',
                        help='check the run of tox -e keystone')
    args = parser.parse_args(argv)

    results = read_stream(sys.stdin.buffer)
    if args.keystone:
        problems = check_keystone(results)
    elif args.fresh:
        with open(args.fresh, 'rb') as f:
            full = read_stream(f)
        problems = check_fresh(results, full)
    else:
        problems = check_full(results)
    for problem in problems[:50]:
        print('check_test_results: %s' % problem, file=sys.stderr)
    if len(problems) > 50:
        print('check_test_results: ... and %d more' % (len(problems) - 50),
              file=sys.stderr)
    counts = summarise(results)
    return 1 if problems or counts['failed'] or not results else 0


if __name__ == '__main__':
    sys.exit(main())
