"""The test suite's probes against the real servers.

``resobj.tests.backends`` skips a PostgreSQL or MariaDB test with a reason
when the server cannot be used; the unit tests meet a closed port, these
meet the other half of a developer's machine: a server that runs but does
not know the account.
"""

import sqlalchemy

from resobj.tests import backends
from resobj.tests import base


class TestUnknownAccount(base.TestCase):
    """A server that is up but refuses the account: a reason, no error.

    CI's fresh-machine run of the README's test command meets this on
    one backend (and a closed port on the other); this test meets it on
    both.
    """

    scenarios = [
        ('postgresql', {'backend': 'postgresql',
                        'cause': 'role "resobj_nobody" does not exist'}),
        ('mysql', {'backend': 'mysql',
                   'cause': "Access denied for user 'resobj_nobody'"}),
    ]

    def test_unknown_account_is_the_reason(self):
        backends.require(self.backend)
        url = sqlalchemy.engine.make_url(
            backends.database_url(self.backend)).set(
                username='resobj_nobody', password='nobody')
        reason = backends.probe_database(
            url.render_as_string(hide_password=False))
        self.assertIn('cannot connect as resobj_nobody@', reason)
        self.assertIn(self.cause, reason)
        self.assertNotIn('\n', reason)
