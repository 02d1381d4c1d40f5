#!/usr/bin/env python3
"""Record what a placement-compatible service answers each policy cell.

Sends the policy matrix's requests (``resobj/tests/api/policy_requests``)
for every documented route and every caller to a running service with
noauth2, and prints a JSON object ``{route: {caller: status}}``. Run it
against placement with ``[oslo_policy] enforce_new_defaults`` True and
False and store the answers under ``new`` and ``legacy`` in
``resobj/tests/data/policy_reference.json``; ``test_policy_matrix``
compares them with the matrix the default rules give.

    python tools/probe_policy_reference.py http://127.0.0.1:8800

With ``--compare MODE`` it prints instead every cell where the service's
answer differs from the one recorded for ``MODE`` (``new`` or
``legacy``): run against resobj-api to check it black-box.

    python tools/probe_policy_reference.py http://127.0.0.1:8778 \
        --compare new
"""

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

from resobj.api import policy_matrix
from resobj.tests.api import policy_requests


def status(base_url, operation, persona):
    req = urllib.request.Request(
        base_url + policy_requests.path(operation),
        data=policy_requests.body(operation), method=operation.method,
        headers=policy_requests.headers(persona))
    if req.data is not None:
        req.add_header('Content-Type', 'application/json')
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


RECORDED = os.path.join(os.path.dirname(__file__), '..', 'resobj', 'tests',
                        'data', 'policy_reference.json')


def compare(answers, mode):
    """Print the differences from the recorded answers; their number."""
    with open(RECORDED) as f:
        recorded = json.load(f)[mode]
    refusals = others = 0
    for route, callers in sorted(recorded.items()):
        for caller, expected in sorted(callers.items()):
            got = answers[route][caller]
            if (got == 403) != (expected == 403):
                refusals += 1
                print('POLICY  %s as %s: %d, recorded %d'
                      % (route, caller, got, expected))
            elif got != expected:
                others += 1
                print('status  %s as %s: %d, recorded %d'
                      % (route, caller, got, expected))
    cells = sum(len(callers) for callers in recorded.values())
    print('%d cells: %d differ in refusing (403), %d in another status'
          % (cells, refusals, others))
    return refusals


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('url')
    parser.add_argument('--compare', choices=['new', 'legacy'])
    args = parser.parse_args(argv[1:])
    base_url = args.url.rstrip('/')
    answers = {}
    for operation in policy_matrix.operations():
        answers[policy_requests.key(operation)] = {
            persona.name: status(base_url, operation, persona)
            for persona in policy_matrix.PERSONAS}
    if args.compare:
        return 1 if compare(answers, args.compare) else 0
    json.dump(answers, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
