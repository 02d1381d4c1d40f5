"""Recorded test durations: stestr balances its workers on a new checkout.

stestr hands tests to its workers by their durations in its repository
(``.stestr``) and round robin for tests it has no duration for. A new
checkout has no repository: the round robin left one of the two workers
of ``tox -e py3`` running long after the other had finished, because the
few tests of a minute or more fell where they fell.

    python tools/test_times.py seed      # before "stestr run" (tox.ini)
    stestr last --subunit | python tools/test_times.py record

``seed``: when the checkout has no stestr repository yet, creates it and
loads one run made of the recorded durations (``stestr load``), so that
the first real run is scheduled by them; with a repository, does nothing
(its own runs' durations are newer). ``record``: writes the durations of
the successful tests of the subunit stream on stdin that took at least
``--min-seconds`` to ``tools/test_times.json``. Stale durations only
balance the workers less well; they never change which tests run.
"""

import argparse
import datetime
import io
import json
import os
import subprocess
import sys

import subunit
import testtools

HERE = os.path.dirname(os.path.abspath(__file__))
TIMES = os.path.join(HERE, 'test_times.json')
# The run the seed makes starts here; only the durations matter.
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def durations(stream):
    """{test id: seconds} of the successful tests of a subunit v2 stream."""
    found = {}

    def keep(test):
        start, end = test['timestamps']
        if test['status'] == 'success' and start and end:
            found[test['id']] = (end - start).total_seconds()

    result = testtools.StreamToDict(keep)
    result.startTestRun()
    subunit.ByteStreamToStreamResult(stream).run(result)
    result.stopTestRun()
    return found


def stream_of(times):
    """A subunit v2 stream of one run: each test passed in its duration."""
    out = io.BytesIO()
    result = subunit.StreamResultToBytes(out)
    at = EPOCH
    for test_id, seconds in sorted(times.items()):
        result.status(test_id=test_id, test_status='inprogress',
                      timestamp=at)
        at += datetime.timedelta(seconds=seconds)
        result.status(test_id=test_id, test_status='success', timestamp=at)
    return out.getvalue()


def seed(directory, times_file=TIMES, stestr=(sys.executable, '-m', 'stestr')):
    """Load the recorded durations into ``directory``'s new repository.

    Returns True if it did, False if the repository was there already.
    """
    if os.path.exists(os.path.join(directory, '.stestr')):
        return False
    with open(times_file, encoding='utf-8') as f:
        times = json.load(f)
    subprocess.run(list(stestr) + ['load', '--force-init', '--subunit'],
                   input=stream_of(times), cwd=directory, check=True,
                   stdout=subprocess.DEVNULL)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='command', required=True)
    sub.add_parser('seed', help='load the durations into a new repository')
    record = sub.add_parser('record', help='write the durations of the '
                            'subunit v2 stream on stdin')
    record.add_argument('--min-seconds', type=float, default=0.2)
    args = p.parse_args(argv)
    if args.command == 'seed':
        if seed(os.getcwd()):
            print('tools/test_times.py: stestr repository created with '
                  'the durations of tools/test_times.json')
        return 0
    times = {test_id: round(seconds, 1) for test_id, seconds
             in durations(sys.stdin.buffer).items()
             if seconds >= args.min_seconds}
    with open(TIMES, 'w', encoding='utf-8') as f:
        json.dump(times, f, indent=0, sort_keys=True)
        f.write('\n')
    print('%d durations written to %s' % (len(times), TIMES))
    return 0


if __name__ == '__main__':
    sys.exit(main())
