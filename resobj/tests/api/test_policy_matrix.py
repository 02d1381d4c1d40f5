"""The policy matrix, through the real application.

For every documented route, every caller of ``policy_matrix.PERSONAS``
and both policy modes, the application (noauth2, a fresh database of
each backend) must refuse with 403 exactly the requests the default rules
refuse when asked directly (``policy_matrix.Matrix``), and let the others
through to their handler. The matrix itself is compared with the
reference service's recorded answers in
``resobj.tests.unit.test_policy_matrix``.
"""

import json

import testscenarios
import webob

from resobj.api import app as api_app
from resobj.api import policy_matrix
from resobj.tests.api import fixtures as api_fixtures
from resobj.tests.api import policy_requests
from resobj.tests import backends
from resobj.tests import base

load_tests = testscenarios.load_tests_apply_scenarios


class TestPolicyMatrix(base.TestCase):

    # Test ids end in (sqlite), (postgresql) or (mysql), as every other
    # backend test's do: the allowed requests reach the handlers.
    scenarios = [(name, {'backend': name})
                 for name in ('sqlite', 'postgresql', 'mysql')]

    def setUp(self):
        super().setUp()
        if self.backend != 'sqlite':
            # Skips (or fails, when backends are required) if unusable.
            backends.provisioning_backend(self.backend)
        self.fixture = self.useFixture(
            api_fixtures.AppFixture(self.backend))

    def _app(self, mode):
        self.fixture.conf.set_override(
            'enforce_new_defaults', mode.enforce_new_defaults,
            group='oslo_policy')
        return api_app.make_app(self.fixture.conf)

    def _send(self, app, operation, persona):
        req = webob.Request.blank(
            policy_requests.path(operation), method=operation.method,
            headers=policy_requests.headers(persona))
        data = policy_requests.body(operation)
        if data is not None:
            req.body = data
            req.content_type = 'application/json'
        return req.get_response(app)

    def test_new_defaults(self):
        self._check(policy_matrix.MODES[0])

    def test_legacy_defaults(self):
        self._check(policy_matrix.MODES[1])

    def _check(self, mode):
        app = self._app(mode)
        matrix = policy_matrix.Matrix()
        wrong = []
        cells = 0
        for operation in policy_matrix.operations():
            for persona in policy_matrix.PERSONAS:
                cells += 1
                allowed = matrix.allowed(operation, persona, mode)
                resp = self._send(app, operation, persona)
                if allowed == (resp.status_int == 403):
                    wrong.append('%s as %s: %s, the rules %s it' % (
                        policy_requests.key(operation), persona.name,
                        resp.status, 'allow' if allowed else 'refuse'))
                elif not allowed:
                    detail = json.loads(resp.body)['errors'][0]['detail']
                    if operation.rule not in detail:
                        wrong.append('%s as %s: %r does not name %s' % (
                            policy_requests.key(operation), persona.name,
                            detail, operation.rule))
                self.assertNotEqual(500, resp.status_int)
        self.assertEqual([], wrong)
        # Every route and caller was asked; an empty walk proves nothing.
        self.assertEqual(len(policy_matrix.operations()) *
                         len(policy_matrix.PERSONAS), cells)
        self.assertGreater(cells, 200)
