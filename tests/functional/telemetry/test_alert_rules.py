"""doc/prometheus-alerts.yml, evaluated by Prometheus's own rule tester.

``promtool test rules`` runs each alert of the file on series shaped like
the scheduler's exporter (``prometheus_alerts_test.yml``): a healthy
cloud fires nothing, and each fault fires its alert, with its labels and
annotations, at the time its ``for`` says.
"""

import os
import subprocess

import testtools

from tests import realservers

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, os.pardir, os.pardir, os.pardir, 'doc',
                     'prometheus-alerts.yml')


class AlertRulesTest(testtools.TestCase):

    def promtool(self, *args) -> str:
        result = subprocess.run(
            [realservers.binary('promtool'), *args], cwd=HERE,
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, result.returncode,
                         result.stdout + result.stderr)
        return result.stdout

    def test_rules_are_valid(self):
        self.assertIn('SUCCESS: 7 rules found',
                      self.promtool('check', 'rules', RULES))

    def test_each_alert_fires_on_its_fault_and_not_when_healthy(self):
        self.assertIn('SUCCESS', self.promtool(
            'test', 'rules', 'prometheus_alerts_test.yml'))
