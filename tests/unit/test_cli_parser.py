"""``nova-drs`` argument parsing and help, before anything talks to a cloud."""

import argparse
import contextlib
import io
import json
import os
import re

import fixtures
import testtools

from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import main as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def subparsers(parser) -> dict:
    action = next(a for a in parser._actions if a.dest == 'command')
    return action.choices


class ParserTest(testtools.TestCase):

    def parse(self, *argv):
        return cli.build_parser().parse_args(list(argv))

    def refused(self, *argv) -> str:
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            error = self.assertRaises(SystemExit, self.parse, *argv)
        self.assertEqual(errors.USAGE, error.code)
        lines = stderr.getvalue().strip().splitlines()
        self.assertEqual(1, len(lines), stderr.getvalue())
        return lines[0]

    def test_json_before_or_after_the_subcommand(self):
        self.assertTrue(self.parse('--json', 'plan').json)
        self.assertTrue(self.parse('plan', '--json').json)
        self.assertFalse(self.parse('plan').json)
        self.assertTrue(self.parse('plan', '--debug').debug)

    def test_every_cloud_command_reads_nova_conf(self):
        for command in ('plan', 'status', 'history'):
            args = self.parse(command, '--config-file', '/etc/x.conf')
            self.assertEqual((command, ['/etc/x.conf'], 0),
                             (args.command, args.config_file,
                              args.db_retries))

    def test_explain_needs_a_subject(self):
        self.assertEqual('host1', self.parse('explain', 'host1').subject)
        self.assertIn('the following arguments are required',
                      self.refused('explain'))

    def test_maintenance_plan_and_enter_take_several_hosts(self):
        args = self.parse('maintenance', 'plan', 'h1', 'h2',
                          '--config-file', '/etc/x.conf')
        self.assertEqual(('maintenance', ['h1', 'h2'], ['/etc/x.conf']),
                         (args.command, args.hosts, args.config_file))
        self.assertEqual(['h1', 'h2'], self.parse(
            'maintenance', 'enter', 'h1', 'h2', '--wait').hosts)
        self.assertIn('the following arguments are required: HOST',
                      self.refused('maintenance', 'plan'))

    def test_commands_match_the_console_script(self):
        self.assertEqual(set(cli.COMMANDS),
                         set(subparsers(cli.build_parser())))

    def test_demo_refuses_periods_and_scales_it_cannot_play(self):
        for argv in (('--periods', '0'), ('--periods', '-3'),
                     ('--scale', '-1'), ('--scale', '0'),
                     ('--periods', 'many')):
            line = self.refused('demo', *argv)
            self.assertIn(f'argument {argv[0]}', line)
        self.assertEqual(5, self.parse('demo', '--periods', '5').periods)

    def test_history_limit_is_not_negative(self):
        self.assertIn('argument --limit', self.refused('history', '--limit',
                                                       '-1'))


class SimulateJsonTest(testtools.TestCase):
    """``nova-drs simulate``: JSON whichever side of it --json is on."""

    def test_json_before_or_after_the_subcommand(self):
        out = self.useFixture(fixtures.TempDir()).path
        for argv in (['--json', 'simulate'], ['simulate', '--json']):
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                code = cli.main(argv + [
                    '--vms', '20', '--steps', '3', '--no-plot',
                    '--strategies', 'none', '--output-dir', out])
            self.assertEqual(0, code)
            document = json.loads(stdout.getvalue())
            self.assertEqual(['none'], [r['strategy']
                                        for r in document['results']])


class HelpTest(testtools.TestCase):
    """What ``--help`` shows is written for operators."""

    def test_every_option_and_command_is_explained(self):
        parser = cli.build_parser()
        self.assertNotIn('``', parser.description)
        self.assertNotIn(':mod:', parser.description)
        for name, sub in [('nova-drs', parser),
                          *subparsers(parser).items()]:
            self.assertTrue(sub.description, name)
            self.assertNotIn('later', sub.description)
            for action in sub._actions:
                if isinstance(action, (argparse._HelpAction,
                                       argparse._SubParsersAction)):
                    continue
                self.assertTrue(action.help, f'{name} {action.dest}')

    def test_exit_codes_in_help_and_doc_match(self):
        self.assertIn('70  unexpected error', errors.EPILOG)
        with open(os.path.join(ROOT, 'doc', 'cli.md')) as handle:
            text = handle.read()
        section = text.split('## Exit codes', 1)[1].split('\n## ', 1)[0]
        rows = re.findall(r'^\| (\d+) \| (.+?) \|$', section, re.M)
        self.assertEqual([code for code, _ in errors.CODES],
                         [int(code) for code, _ in rows])
