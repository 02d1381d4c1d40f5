"""The release number, and every command saying it with its versions."""

import configparser
import io
import os
import re

import fixtures

from resobj.cmd import api
from resobj.cmd import compute
from resobj.cmd import conductor
from resobj.cmd import manage
from resobj.cmd import sim
from resobj.cmd import status
from resobj.compute import rpcapi as compute_rpcapi
from resobj.conductor import rpcapi as conductor_rpcapi
from resobj.objects import service as service_obj
from resobj.tests import base
from resobj.tests import fixtures as resobj_fixtures
from resobj import version

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
COMMANDS = {'resobj-api': api.main, 'resobj-compute': compute.main,
            'resobj-conductor': conductor.main, 'resobj-manage': manage.main,
            'resobj-sim': sim.main, 'resobj-status': status.main}


def _run(main, *argv):
    """(exit status, stdout) of a command that exits, as --help does."""
    out = io.StringIO()
    with fixtures.MonkeyPatch('sys.stdout', out):
        try:
            main(list(argv))
        except SystemExit as exc:
            return exc.code, out.getvalue()
    raise AssertionError('%s did not exit' % (argv,))


class TestRelease(base.TestCase):

    def test_setup_cfg_names_this_release(self):
        # pbr versions the package from it; the code reports RELEASE.
        setup = configparser.ConfigParser()
        setup.read(os.path.join(TOP, 'setup.cfg'))
        self.assertEqual(version.RELEASE, setup['metadata']['version'])

    def test_described_with_the_service_and_rpc_versions(self):
        self.assertEqual(
            '%s (service version %d, RPC: conductor %s, compute %s)'
            % (version.RELEASE, service_obj.SERVICE_VERSION,
               conductor_rpcapi.VERSION, compute_rpcapi.VERSION),
            version.describe())


class CommandTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(resobj_fixtures.CommandEnvironment())
        # oslo.upgradecheck keeps the last command's configuration.
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_upgradecheck.upgradecheck.CONF', None))
        # A wide terminal: argparse wraps to it.
        self.useFixture(fixtures.EnvironmentVariable('COLUMNS', '200'))


class TestCommands(CommandTestCase):

    def test_every_command_says_its_version(self):
        for prog, main in COMMANDS.items():
            code, out = _run(main, '--version')
            self.assertEqual(0, code, prog)
            self.assertEqual('%s %s\n' % (prog, version.describe()), out)

    def test_every_command_describes_itself(self):
        for prog, main in COMMANDS.items():
            code, out = _run(main, '--help')
            self.assertEqual(0, code, prog)
            description = out.split('\n\n')[1]
            self.assertGreater(len(description), 20, (prog, out))
            self.assertNotIn(':', description.split('\n')[0][:20], prog)


def _entries(text):
    """{option: its help} of the "options:" part of a --help text."""
    entries, current = {}, None
    section = None
    for line in text.splitlines():
        if line and not line.startswith(' '):
            section = line
            continue
        if section != 'options:':
            continue
        stripped = line.strip()
        if line.startswith('  -') and not line.startswith('    '):
            option, _, help_text = stripped.partition('  ')
            current = option.split(',')[0].split()[0]
            entries[current] = help_text.strip()
        elif current is not None:
            entries[current] += ' ' + stripped
    return entries


def _subcommands(text):
    """The commands a --help text lists (indented under their metavar)."""
    return [match.group(1) for match in
            re.finditer(r'^    ([a-z_]+)(?:  |$)', text, re.MULTILINE)]


class TestOptionHelp(CommandTestCase):
    """resobj's own options each say what they do and their default.

    oslo.config's and oslo.log's options document themselves.
    """

    def assert_documented(self, main, *command):
        code, out = _run(main, *command, '--help')
        self.assertEqual(0, code, out)
        entries = _entries(out)
        for option, help_text in entries.items():
            if option in ('-h', '--version'):
                continue
            self.assertIn('default', help_text, (command, option, out))
        return out, len(entries)

    def test_resobj_api(self):
        self.assertGreater(self.assert_documented(api.main)[1], 5)

    def test_resobj_sim(self):
        self.assertGreater(self.assert_documented(sim.main)[1], 5)

    def test_resobj_manage(self):
        out = _run(manage.main, '--help')[1]
        commands = _subcommands(out)
        self.assertEqual({'db', 'capacity', 'candidates', 'objects'},
                         set(commands))
        documented = 0
        for command in commands:
            help_text, count = self.assert_documented(manage.main, command)
            documented += count
            for action in _subcommands(help_text):
                documented += self.assert_documented(
                    manage.main, command, action)[1]
        # -h on each, and the options of online_data_migrations, capacity,
        # candidates explain and objects fingerprints.
        self.assertGreater(documented, 15)
