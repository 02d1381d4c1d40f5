"""The ``policy-matrix`` directive: who may do what by default.

Renders ``resobj.api.policy_matrix.rst_lines()``, computed from the
default policy rules at build time, so the page cannot fall behind the
rules. The tests check the same matrix against the running application
and against placement's recorded answers.
"""

from docutils import nodes
from docutils import statemachine
from sphinx.util import docutils as sphinx_docutils

from resobj.api import policy_matrix


class PolicyMatrix(sphinx_docutils.SphinxDirective):
    has_content = False

    def run(self):
        lines = statemachine.StringList(
            policy_matrix.rst_lines(), source='policy_matrix')
        node = nodes.section()
        node.document = self.state.document
        self.state.nested_parse(lines, 0, node)
        return node.children


def setup(app):
    app.add_directive('policy-matrix', PolicyMatrix)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
