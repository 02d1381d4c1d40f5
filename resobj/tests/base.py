"""The base TestCase of every resobj test."""

import importlib.util
import os

from oslotest import base

from resobj.tests import fixtures as resobj_fixtures


class TestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(resobj_fixtures.CollectorFixture())
        self.useFixture(resobj_fixtures.WarningsFixture())


# The checkout's tools/: scripts that live outside the package.
TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                     'tools')


def load_tool(name):
    """The script ``tools/<name>.py``, loaded as a module of that name."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(TOOLS, name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
