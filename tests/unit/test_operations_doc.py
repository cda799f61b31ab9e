"""doc/operations.md cannot rot: each of its commands is one the
end-to-end run types against the deployment (``tools/e2e/e2e/runbook.py``),
with placeholders the run fills and options ``nova-drs`` accepts; its
alerts are those of doc/prometheus-alerts.yml, on series the exporter
serves."""

import contextlib
import io
import os
import re
import shlex
import sys
import types

import fixtures
import testtools
import yaml

from nova_drs_scheduler.cli import main as cli
from nova_drs_scheduler.rebalance import telemetry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools', 'e2e'))
from e2e import report  # noqa: E402
from e2e import runbook  # noqa: E402

DOC = os.path.join(ROOT, 'doc', 'operations.md')
ALERTS = os.path.join(ROOT, 'doc', 'prometheus-alerts.yml')
#: A value per placeholder, for parsing the commands.
SAMPLE = {'host': 'cmp7', 'server': 'web-1', 'scheduler': 'sched1',
          'port': '9595', 'redis_host': 'redis1', 'redis_port': '6379',
          'reason': 'kernel 6.12'}


def read(path: str) -> str:
    with open(path, encoding='utf-8') as handle:
        return handle.read()


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return text.replace(' ', '-')


class RunbookCommandsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.text = read(DOC)
        self.commands = runbook.commands(self.text)

    def test_the_run_reads_this_page(self):
        self.assertEqual(os.path.realpath(DOC),
                         os.path.realpath(runbook.DOC))
        self.assertEqual(self.commands, runbook.doc_commands())
        self.assertGreaterEqual(len(self.commands), 15)

    def test_every_command_has_a_runner(self):
        self.assertEqual([], [c for c in self.commands
                              if c not in runbook.RUNNERS])

    def test_every_runner_is_a_command_of_the_page(self):
        self.assertEqual([], [c for c in runbook.RUNNERS
                              if c not in self.commands])

    def test_runners_name_a_step_and_fillable_placeholders(self):
        for template, runner in runbook.RUNNERS.items():
            self.assertIn(runner.step, ('healthy', 'drain'), template)
            self.assertTrue(runner.rcs, template)
            for text in (template, *runner.shows):
                self.assertLessEqual(runbook.placeholders(text),
                                     runbook.FILLED, text)

    def test_placeholders_are_documented_and_filled(self):
        table = set(re.findall(r'^\s*\| `<([a-z_]+)>`(?:, `<([a-z_]+)>`)?',
                               self.text, re.M))
        documented = {name for row in table for name in row if name}
        used = set().union(*map(runbook.placeholders, self.commands))
        self.assertLessEqual(used, documented)
        self.assertLessEqual(used, runbook.FILLED)

    def test_commands_are_one_line(self):
        for command in self.commands:
            self.assertFalse(command.endswith('\\'), command)

    def test_nova_drs_commands_parse(self):
        parser = cli.build_parser()
        checked = 0
        for command in self.commands:
            head = runbook.with_conf(runbook.substitute(command, SAMPLE),
                                     '/etc/nova/nova.conf').partition(' | ')[0]
            argv = shlex.split(head)
            if argv[0] == 'nova-drs':
                checked += 1
                try:
                    with contextlib.redirect_stdout(io.StringIO()), \
                            contextlib.redirect_stderr(io.StringIO()):
                        parser.parse_args(argv[1:])
                except SystemExit as exc:  # --version prints and exits.
                    self.assertEqual((0, ['--version', '--config-file',
                                          '/etc/nova/nova.conf']),
                                     (exc.code, argv[1:]), head)
        self.assertGreaterEqual(checked, 12)

    def test_commands_outside_console_blocks_are_not_runbook_commands(self):
        text = ('```ini\n$ not-a-command\n```\n'
                '```console\n$ nova-drs status\noutput\n```\n'
                '    $ indented, not a block\n')
        self.assertEqual(['nova-drs status'], runbook.commands(text))

    def test_config_file_goes_where_each_program_reads_it(self):
        self.assertEqual(
            "nova-drs --json status --config-file C | jq '.attention'",
            runbook.with_conf("nova-drs --json status | jq '.attention'",
                              'C'))
        self.assertEqual('nova-manage --config-file C db sync',
                         runbook.with_conf('nova-manage db sync', 'C'))
        self.assertEqual('redis-cli -h r ping',
                         runbook.with_conf('redis-cli -h r ping', 'C'))

    def test_substitute_fails_on_a_value_not_given(self):
        self.assertEqual('nova-drs explain cmp7',
                         runbook.substitute('nova-drs explain <host>',
                                            {'host': 'cmp7'}))
        self.assertRaises(KeyError, runbook.substitute,
                          'nova-drs explain <host>', {})

    def test_a_run_passes_on_its_exit_code_and_output_only(self):
        book = runbook.Runbook(types.SimpleNamespace(
            report=report.Report()))
        values = {'host': 'cmp7', 'reason': 'e2e'}
        drained = 'cmp7: drained, 0 instance(s) left'
        # The report prints each check as the e2e run does; kept out of
        # the test log, where a FAIL line reads as a failed CI check.
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', io.StringIO()))
        self.assertTrue(book.judge(runbook.ENTER, values, 0, drained))
        self.assertFalse(book.judge(runbook.ENTER, values, 6, drained))
        self.assertFalse(book.judge(runbook.ENTER, values, 0,
                                    'cmp8: drained, 0 instance(s) left'))
        self.assertFalse(book.judge(runbook.ENTER, values, 0,
                                    'cmp7: blocked, 1 instance(s) left'))

    def test_links_within_the_page_resolve(self):
        anchors = {slug(line.lstrip('#')) for line in self.text.splitlines()
                   if line.startswith('#')}
        for target in re.findall(r'\]\(#([^)]+)\)', self.text):
            self.assertIn(target, anchors)
        for page, anchor in re.findall(r'\]\(([a-z-]+\.md)#([^)]+)\)',
                                       self.text):
            headings = {slug(line.lstrip('#')) for line in
                        read(os.path.join(ROOT, 'doc', page)).splitlines()
                        if line.startswith('#')}
            self.assertIn(anchor, headings, page)


class AlertsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.text = read(DOC)
        self.rules = [rule for group in yaml.safe_load(read(ALERTS))['groups']
                      for rule in group['rules']]

    def test_the_page_lists_exactly_the_shipped_alerts(self):
        listed = set(re.findall(r'^\| `(NovaDRS\w+)`', self.text, re.M))
        self.assertEqual({rule['alert'] for rule in self.rules}, listed)

    def test_each_alert_points_to_a_section_of_the_page(self):
        anchors = {slug(line.lstrip('#')) for line in self.text.splitlines()
                   if line.startswith('#')}
        for rule in self.rules:
            page, anchor = rule['annotations']['runbook'].split('#')
            self.assertEqual('doc/operations.md', page)
            self.assertIn(anchor, anchors, rule['alert'])

    def test_alerts_and_the_page_name_series_the_exporter_serves(self):
        served = set()
        for family in telemetry.Telemetry().registry.collect():
            served |= {sample.name for sample in family.samples}
            served.add(family.name)
            if family.type == 'histogram':
                served.add(family.name + '_bucket')
            if family.type == 'counter':
                served.add(family.name + '_total')
        named = set()
        for rule in self.rules:
            named |= set(re.findall(r'nova_drs_\w+', rule['expr']))
        named |= set(re.findall(r'`(nova_drs_\w+)', self.text))
        # ``nova_drs_host_*`` stands for a family, not a series.
        named = {name for name in named if not name.endswith('_')}
        self.assertEqual(set(), named - served)
