"""Summarise a subunit v2 stream and enforce the backend rule.

Reads ``stestr last --subunit`` on stdin, prints one closing line
``tests: N passed, N failed, N skipped`` and exits non-zero when any test
failed, when any PostgreSQL or MySQL/MariaDB test was skipped, or when
none of those ran at all (a test layout change that silently dropped the
backends must not pass either). Backend tests are the scenario ids ending
in ``(postgresql)`` or ``(mysql)``, and the gabbi tests of those backends
(``resobj.tests.api.test_gabbi.<backend>.*``).
"""

import re
import sys

import subunit
import testtools

# Scenario ids end in (backend); gabbi ids carry .test_gabbi.<backend>.
BACKEND = re.compile(r'\((postgresql|mysql)\)$'
                     r'|\.test_gabbi\.(postgresql|mysql)\.')


def main():
    statuses = {}

    def record(test_id=None, test_status=None, **kwargs):
        if test_id and test_status in ('success', 'fail', 'skip', 'xfail',
                                       'uxsuccess'):
            statuses[test_id] = test_status

    stream = subunit.ByteStreamToStreamResult(sys.stdin.buffer,
                                              non_subunit_name='stdout')
    result = testtools.StreamToDict(
        lambda test: record(test['id'], test['status']))
    result.startTestRun()
    stream.run(result)
    result.stopTestRun()

    counts = {'passed': 0, 'failed': 0, 'skipped': 0}
    backend_ran = {'postgresql': 0, 'mysql': 0}
    problems = []
    for test_id, status in sorted(statuses.items()):
        key = {'success': 'passed', 'skip': 'skipped',
               'xfail': 'passed'}.get(status, 'failed')
        counts[key] += 1
        match = BACKEND.search(test_id)
        if match and status == 'skip':
            problems.append('skipped on a required backend: %s' % test_id)
        elif match and status == 'success':
            backend_ran[match.group(1) or match.group(2)] += 1
    for backend, ran in sorted(backend_ran.items()):
        print('%s tests passed: %d' % (backend, ran))
        if not ran:
            problems.append('no %s test passed' % backend)
    for problem in problems:
        print('check_test_results: %s' % problem, file=sys.stderr)
    print('tests: %(passed)d passed, %(failed)d failed, '
          '%(skipped)d skipped' % counts)
    return 1 if problems or counts['failed'] or not statuses else 0


if __name__ == '__main__':
    sys.exit(main())
