"""The policy matrix, through the real application.

For every documented route, every caller of ``policy_matrix.PERSONAS``
and both policy modes, the application (noauth2, a fresh SQLite
database) must refuse with 403 exactly the requests the default rules
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
from resobj.tests import base

load_tests = testscenarios.load_tests_apply_scenarios


class TestPolicyMatrix(base.TestCase):

    scenarios = [(mode.name, {'mode': mode})
                 for mode in policy_matrix.MODES]

    def setUp(self):
        super().setUp()
        fixture = self.useFixture(api_fixtures.AppFixture('sqlite'))
        fixture.conf.set_override(
            'enforce_new_defaults', self.mode.enforce_new_defaults,
            group='oslo_policy')
        self.app = api_app.make_app(fixture.conf)

    def _send(self, operation, persona):
        req = webob.Request.blank(
            policy_requests.path(operation), method=operation.method,
            headers=policy_requests.headers(persona))
        data = policy_requests.body(operation)
        if data is not None:
            req.body = data
            req.content_type = 'application/json'
        return req.get_response(self.app)

    def test_every_cell_is_decided_as_the_rules_say(self):
        matrix = policy_matrix.Matrix()
        wrong = []
        cells = 0
        for operation in policy_matrix.operations():
            for persona in policy_matrix.PERSONAS:
                cells += 1
                allowed = matrix.allowed(operation, persona, self.mode)
                resp = self._send(operation, persona)
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
