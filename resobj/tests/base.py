"""The base TestCase of every resobj test."""

from oslotest import base

from resobj.tests import fixtures as resobj_fixtures


class TestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(resobj_fixtures.CollectorFixture())
        self.useFixture(resobj_fixtures.WarningsFixture())
