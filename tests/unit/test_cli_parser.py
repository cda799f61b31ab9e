"""``nova-drs`` argument parsing, before anything talks to a cloud."""

import testtools

from nova_drs_scheduler import cli


class ParserTest(testtools.TestCase):

    def parse(self, *argv):
        return cli.build_parser().parse_args(list(argv))

    def test_json_before_or_after_the_subcommand(self):
        self.assertTrue(self.parse('--json', 'plan').json)
        self.assertTrue(self.parse('plan', '--json').json)
        self.assertFalse(self.parse('plan').json)

    def test_every_cloud_command_reads_nova_conf(self):
        for command in ('plan', 'status', 'history'):
            args = self.parse(command, '--config-file', '/etc/x.conf')
            self.assertEqual((command, ['/etc/x.conf']),
                             (args.command, args.config_file))

    def test_explain_needs_a_subject(self):
        self.assertEqual('host1', self.parse('explain', 'host1').subject)
        self.assertRaises(SystemExit, self.parse, 'explain')

    def test_commands_match_the_console_script(self):
        parser = cli.build_parser()
        subparsers = next(a for a in parser._actions
                          if a.dest == 'command')
        self.assertEqual(set(cli.COMMANDS), set(subparsers.choices))
