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
"""

import json
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


def main(argv):
    base_url = argv[1].rstrip('/')
    answers = {}
    for operation in policy_matrix.operations():
        answers[policy_requests.key(operation)] = {
            persona.name: status(base_url, operation, persona)
            for persona in policy_matrix.PERSONAS}
    json.dump(answers, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main(sys.argv)
