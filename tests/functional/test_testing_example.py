"""doc/testing.md's example, run as a third party runs it.

``tests/testing_example`` holds the example's files; this test checks they
are what the doc shows, then runs them in a fresh process whose path has
that directory and none of our sources (only the installed package), as a
test suite in another repository would.
"""

import os
import re
import subprocess
import sys
import tempfile

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
EXAMPLE = os.path.join(ROOT, 'tests', 'testing_example')
PACKAGE = 'drs_testing_example'
DOC = os.path.join(ROOT, 'doc', 'testing.md')


def doc_files() -> dict:
    """``{relative path: content}`` of the doc's example blocks.

    Each block is a fenced ``python`` block whose first line is a comment
    naming its file, e.g. ``# drs_testing_example/__init__.py``.
    """
    with open(DOC) as handle:
        text = handle.read()
    blocks = re.findall(r'```python\n# (\S+\.py)\n(.*?)```', text, re.S)
    return dict(blocks)


class ExampleTest(testtools.TestCase):

    def test_doc_shows_the_files_as_they_are(self):
        shown = doc_files()
        self.assertEqual({f'{PACKAGE}/__init__.py',
                          f'{PACKAGE}/test_hot_host.py'}, set(shown))
        for path, content in shown.items():
            with open(os.path.join(EXAMPLE, path)) as handle:
                self.assertEqual(handle.read(), content, path)

    def _run(self, *args):
        env = dict(os.environ, PYTHONPATH=EXAMPLE)
        with tempfile.TemporaryDirectory() as cwd:
            return subprocess.run(
                [sys.executable, *args], cwd=cwd, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                timeout=600)

    def test_our_test_helpers_are_out_of_reach(self):
        run = self._run('-c', 'import tests.functional.base')
        self.assertNotEqual(0, run.returncode)
        self.assertIn('ModuleNotFoundError', run.stdout)

    def test_example_passes_outside_our_tree(self):
        run = self._run('-m', 'testtools.run', f'{PACKAGE}.test_hot_host')
        self.assertEqual(0, run.returncode, run.stdout[-3000:])
        self.assertIn('Ran 2 tests', run.stdout)
        self.assertEqual('OK', run.stdout.strip().splitlines()[-1])
