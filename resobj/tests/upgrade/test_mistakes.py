"""The safety net tests itself: every known mistake is caught.

For each mistake of resobj.tests.upgrade.mistakes, a copy of the
``resobj`` package gets the mistake, then the regeneration a developer
would run (``GENERATE_HASHES``, ``GENERATE_GOLDEN``, ``GENERATE_SHAPES``,
as the contributor docs say), then the tests that must catch it, in
processes of their own that import the copy: each must fail, its
message holding the fragments that name the object and the version. An
untouched copy must pass every guardrail test, so that a mistake is
caught by the guardrails, not by a broken copy.

The N-1 tests among them use the N-1 tree this process writes out
(n_minus_1.TREE_ENV): the copies are no git repositories.
"""

import os
import re
import shutil
import subprocess
import sys

import fixtures
import testscenarios

import resobj
from resobj.tests import base as test_base
from resobj.tests.upgrade import mistakes
from resobj.tests.upgrade import n_minus_1

load_tests = testscenarios.load_tests_apply_scenarios

PACKAGE = os.path.dirname(os.path.abspath(resobj.__file__))
# A testtools.run failure: a rule line, 'FAIL: <id>' (or ERROR), a rule,
# the traceback and message, up to the next rule line. The first rule
# follows the progress dots on their line.
_SECTION = re.compile(r'={20,}\n(?:FAIL|ERROR): (\S+)\n-{20,}\n(.*?)'
                      r'(?=={20,}\n|\Z)', re.S)


def failures(output):
    """{test id: its failure text} of a testtools.run output."""
    found = {}
    for test_id, text in _SECTION.findall(output):
        found[test_id.split('(')[0]] = found.get(test_id, '') + text
    return found


def _n_minus_1_tests():
    return sorted({test_id for mistake in mistakes.MISTAKES
                   for test_id in mistake.caught
                   if test_id.startswith('resobj.tests.upgrade.')})


class CopyTestCase(test_base.TestCase):
    """A copy of the package, and the guardrail tests run on it."""

    def setUp(self):
        super().setUp()
        self.tree = n_minus_1.tree()
        self.root = self.useFixture(fixtures.TempDir()).path
        shutil.copytree(PACKAGE, os.path.join(self.root, 'resobj'),
                        ignore=shutil.ignore_patterns('__pycache__'))

    def _environ(self, **environ):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('GENERATE_')}
        env.update(environ, PYTHONPATH=self.root, PYTHONDONTWRITEBYTECODE='1',
                   OS_STDOUT_CAPTURE='1', OS_STDERR_CAPTURE='1',
                   OS_LOG_CAPTURE='1')
        env[n_minus_1.TREE_ENV] = self.tree
        return env

    def run_tests(self, test_ids, **environ):
        proc = subprocess.run(
            [sys.executable, '-P', '-m', 'testtools.run'] + list(test_ids),
            cwd=self.root, env=self._environ(**environ),
            capture_output=True, text=True, timeout=600)
        output = proc.stdout + proc.stderr
        # Import errors and the like fail the run before any test does.
        self.assertIn('\nRan ', output, output[-4000:])
        return proc.returncode, output


class TestCopy(CopyTestCase):

    def test_an_untouched_copy_passes_every_guardrail(self):
        # And it is the copy that runs, not this checkout.
        where = subprocess.run(
            [sys.executable, '-P', '-c',
             'import resobj; print(resobj.__file__)'],
            cwd=self.root, env=self._environ(), capture_output=True,
            text=True, timeout=600, check=True).stdout
        self.assertTrue(where.startswith(self.root + os.sep), where)
        code, output = self.run_tests(
            list(mistakes.GUARDRAILS) + _n_minus_1_tests())
        self.assertEqual(0, code, output[-6000:])


class TestMistakesAreCaught(CopyTestCase):

    scenarios = [(re.sub(r'\W+', '_', mistake.name), {'mistake': mistake})
                 for mistake in mistakes.MISTAKES]

    def _make(self):
        for path, text, replacement in self.mistake.edits:
            target = os.path.join(self.root, 'resobj', path)
            with open(target, encoding='utf-8') as f:
                source = f.read()
            # A mistake that no longer applies must be updated, not
            # silently skipped.
            self.assertEqual(1, source.count(text), '%s: %r' % (path, text))
            with open(target, 'w', encoding='utf-8') as f:
                f.write(source.replace(text, replacement))
        for path in self.mistake.deleted:
            os.unlink(os.path.join(self.root, 'resobj', path))
        if self.mistake.regenerate:
            self.run_tests(
                [mistakes.REGENERATING[name]
                 for name in self.mistake.regenerate],
                **{name: '1' for name in self.mistake.regenerate})

    def test_caught(self):
        self._make()
        # The tests that must catch it; the untouched copy passes them.
        code, output = self.run_tests(sorted(self.mistake.caught))
        self.assertNotEqual(0, code, output[-6000:])
        failed = failures(output)
        for test_id, fragments in sorted(self.mistake.caught.items()):
            self.assertIn(test_id, failed, 'not caught by %s; failed: %s\n%s'
                          % (test_id, sorted(failed), output[-6000:]))
            for fragment in fragments:
                self.assertIn(fragment, failed[test_id])
