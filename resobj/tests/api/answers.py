"""What every answer of resobj-api must be, for the tests that probe it.

``assert_answer`` fails a test on a 5xx, and on an error whose body is
not the API's error document: an ``errors`` list whose entries have the
HTTP status, a title, a detail, a request id and, from microversion
1.23, one of the codes that ``resobj.api.errors`` defines.
"""

import json

from resobj.api import errors

# Every code the API may send; clients branch on them, so an error with
# any other code is a bug.
CODES = frozenset(value for name, value in vars(errors).items()
                  if name.isupper() and isinstance(value, str)
                  and value.startswith(('placement.', 'resobj.')))


def assert_answer(test, resp, method, request):
    """Fail ``test`` unless ``resp`` is below 500 and well-formed.

    ``method``: the request's; ``request``: what was sent, for the
    failure message. Returns the error document's first entry, or None
    for a success.
    """
    status = resp.status_int
    test.assertLess(status, 500, '%s -> %s %s' % (
        request, resp.status, resp.body[:2000]))
    if status < 400 or method == 'HEAD':
        # A HEAD answer has no body, by HTTP's rules.
        return None
    test.assertEqual('application/json', resp.content_type,
                     '%s -> %s' % (request, resp.status))
    document = json.loads(resp.body)
    test.assertIsInstance(document.get('errors'), list, request)
    test.assertTrue(document['errors'], request)
    # As in placement, errors have a code from 1.23 and none before.
    with_code = _version(resp) >= (1, 23)
    for error in document['errors']:
        test.assertEqual(status, error['status'], request)
        for key in ('title', 'detail', 'request_id'):
            test.assertIsInstance(error[key], str, (request, key))
        if with_code:
            test.assertIn(error['code'], CODES, request)
        else:
            test.assertNotIn('code', error, request)
        test.assertTrue(error['request_id'].startswith('req-'), request)
    return document['errors'][0]


def _version(resp):
    """The (major, minor) the answer was served at."""
    if 'OpenStack-API-Version' not in resp.headers:
        # An answer to a malformed or unacceptable version header.
        return (1, 0)
    value = resp.headers['OpenStack-API-Version'].split()[-1]
    return tuple(int(part) for part in value.split('.'))
