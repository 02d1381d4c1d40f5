"""The default rules' matrix agrees with the reference service.

``resobj/tests/data/policy_reference.json`` holds what placement 16.0.0
answered the matrix's requests (``tools/probe_policy_reference.py``) in
both policy modes. Every cell the matrix has must be recorded there, and
placement must have refused (403) exactly the cells the rules refuse.
"""

import json
import os

from resobj.api import policy_matrix
from resobj.tests.api import policy_requests
from resobj.tests import base

REFERENCE = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                         'data', 'policy_reference.json')


class TestPolicyMatrixAgainstReference(base.TestCase):

    def setUp(self):
        super().setUp()
        with open(REFERENCE) as f:
            self.reference = json.load(f)
        self.matrix = policy_matrix.Matrix()

    def test_every_cell_is_recorded_and_agrees(self):
        wrong = []
        for operation, persona, mode, allowed in self.matrix.cells():
            status = self.reference[mode.name][
                policy_requests.key(operation)][persona.name]
            if allowed == (status == 403):
                wrong.append('%s %s as %s: placement %d, rules %s' % (
                    mode.name, policy_requests.key(operation),
                    persona.name, status, allowed))
        self.assertEqual([], wrong)

    def test_nothing_recorded_is_missing_from_the_matrix(self):
        keys = {policy_requests.key(op) for op in policy_matrix.operations()}
        names = {p.name for p in policy_matrix.PERSONAS}
        for mode in policy_matrix.MODES:
            recorded = self.reference[mode.name]
            self.assertEqual(keys, set(recorded))
            for callers in recorded.values():
                self.assertEqual(names, set(callers))

    def test_system_scoped_tokens_are_refused_everywhere(self):
        for operation, persona, mode, allowed in self.matrix.cells():
            if persona.system_scope:
                self.assertFalse(allowed, (operation, persona, mode))

    def test_legacy_mode_only_adds_the_admin_to_reshaping(self):
        new, legacy = policy_matrix.MODES
        differs = [(op.rule, persona.name)
                   for op, persona, mode, allowed in self.matrix.cells()
                   if mode is legacy and allowed !=
                   self.matrix.allowed(op, persona, new)]
        self.assertEqual([('placement:reshaper:reshape', 'admin')], differs)


class TestPolicyMatrixTable(base.TestCase):

    def test_table_has_a_row_per_route_and_a_column_per_caller(self):
        lines = policy_matrix.rst_lines()
        rows = [line for line in lines if line.startswith('   * - ``')]
        self.assertEqual(
            ['   * - ``%s %s``' % (op.method, op.path)
             for op in policy_matrix.operations()], rows)
        header = lines.index('   * - Route')
        self.assertEqual(
            ['     - ``%s``' % p.name for p in policy_matrix.PERSONAS],
            lines[header + 2:header + 2 + len(policy_matrix.PERSONAS)])

    def test_reshaper_row_says_an_admin_reshapes_only_in_legacy_mode(self):
        lines = policy_matrix.rst_lines()
        row = lines.index('   * - ``POST /reshaper``')
        cells = lines[row + 2:row + 2 + len(policy_matrix.PERSONAS)]
        self.assertEqual(['     - legacy only', '     - yes'] +
                         ['     - no'] * (len(policy_matrix.PERSONAS) - 2),
                         cells)
