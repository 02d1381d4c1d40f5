"""hostreport's objects, round-tripped through the resobj its peers run.

During an upgrade, a hostreport service on today's resobj sends its
objects to one still on the previous resobj release. OlderRelease runs
that release in processes of its own, with hostreport's code on top;
each object goes at that release's versions (its ComputeNode child
backported), is loaded there, names every key the older code does not
know, and comes back with every field it kept unchanged.

The release: a wheel named by HOSTREPORT_PREVIOUS_RESOBJ (``pip download
resobj==X.Y.Z --no-deps``), or by default a commit of the resobj
repository this example sits in.
"""

import os
import subprocess

import testtools

from resobj import objects as resobj_objects
from resobj import testing

from hostreport.tests import samples

# The resobj release hostreport's peers may still run.
PREVIOUS_COMMIT = 'ac7013601001a0f34cb2954a9aa9e24295e1d729'
EXAMPLE = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def previous_resobj():
    wheel = os.environ.get('HOSTREPORT_PREVIOUS_RESOBJ')
    if wheel:
        return {'wheel': wheel}
    repo = subprocess.run(['git', '-C', EXAMPLE, 'rev-parse',
                           '--show-toplevel'], capture_output=True,
                          text=True, check=True).stdout.strip()
    return {'commit': PREVIOUS_COMMIT, 'repo': repo}


class TestPreviousResobj(testtools.TestCase):

    def test_reports_round_trip_through_the_previous_resobj(self):
        release = self.useFixture(testing.OlderRelease(
            modules=['hostreport.objects'], paths=[EXAMPLE],
            **previous_resobj()))
        # Its ComputeNode is older than today's: the round trip really
        # backports the child.
        resobj_objects.register_all()
        self.assertNotEqual(resobj_objects.ComputeNode.VERSION,
                            release.manifest['ComputeNode'])
        self.assertEqual('1.1', release.manifest['HostReport'])
        self.assertEqual([], release.round_trip([samples.host_report(),
                                                 samples.rack()]))
