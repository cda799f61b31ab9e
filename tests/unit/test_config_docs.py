"""The sample config and the reference must match the code."""

import os
import subprocess
import sys
import tempfile

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SAMPLE = 'etc/nova-drs-scheduler.conf.sample'
HINT = 'out of date: run `tox -e genconfig` and commit the result'


def _read(path):
    with open(path) as handle:
        return handle.read()


class GeneratedDocsTest(testtools.TestCase):

    def test_sample_config_is_current(self):
        with tempfile.TemporaryDirectory() as tmp:
            output = os.path.join(tmp, 'sample.conf')
            generator = os.path.join(os.path.dirname(sys.executable),
                                     'oslo-config-generator')
            subprocess.run(
                [generator, '--config-file', os.path.join(
                    ROOT, 'etc/oslo-config-generator/nova-drs-scheduler.conf'),
                 '--output-file', output], check=True, cwd=ROOT)
            self.assertEqual(
                _read(output),
                _read(os.path.join(ROOT, SAMPLE)), f'{SAMPLE} is {HINT}')

    def test_config_reference_is_current(self):
        sys.path.insert(0, os.path.join(ROOT, 'tools'))
        self.addCleanup(sys.path.remove, os.path.join(ROOT, 'tools'))
        import config_reference
        self.assertEqual(
            config_reference.render(),
            _read(os.path.join(ROOT, 'doc/config-reference.md')),
            'doc/config-reference.md is ' + HINT)
