"""What ``nova-drs history`` and ``explain`` say about a move's relief:
expected with its cost, then as checked after the move."""

import contextlib
import io
import json
import types

import testtools

from nova_drs_scheduler.cli import cloud
from nova_drs_scheduler.cli import errors
from nova_drs_scheduler.cli import history
from nova_drs_scheduler.cli import inspect

HELD = {'status': 'checked', 'source_cpu': 72.0, 'destination_cpu': 55.5,
        'relief_points': 19.0, 'expected_points': 21.0,
        'source_relieved': True, 'destination_spared': True, 'held': True,
        'source_threshold': 80.0, 'destination_threshold': 80.0,
        'time': '2026-11-28T12:10:00'}
NOT_HELD = dict(HELD, destination_cpu=84.0, destination_spared=False,
                held=False)
EXPECTED = {'source_cpu_before': 93.0, 'source_cpu': 72.0,
            'destination_cpu': 50.0, 'relief': 12.25, 'cost': 1.5}


def move(instance, check=None, expected=EXPECTED, status='completed'):
    found = {'instance': instance, 'name': f'vm-{instance}',
             'source': 'host1', 'destination': 'host3',
             'reason': 'cpu 93.0% > 80.0%', 'expected': dict(expected),
             'outcome': {'status': status}}
    if check is not None:
        found['relief_check'] = check
    return found


def period(*moves):
    return {'id': 'rec-0001-abcdef', 'time': '2026-11-28T12:00:00',
            'automation': 'automatic', 'policy': 'balanced',
            'hosts': [{'host': 'host1', 'violated': True}],
            'moves': list(moves), 'notes': []}


class CLITestBase(testtools.TestCase):

    def run_cli(self, handler, json_output=False, **options):
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            code = handler(types.SimpleNamespace(json=json_output,
                                                 **options), None)
        text = stdout.getvalue()
        return code, json.loads(text) if json_output else text


class HistoryTest(CLITestBase):

    def history(self, records, json_output=False):
        self.patch(history, 'load', lambda conf, limit, moves_only: records)
        return self.run_cli(history.run, json_output, limit=20,
                            moves_only=False)[1]

    def row(self, text, instance):
        return next(line for line in text.splitlines()
                    if f'vm-{instance}' in line)

    def test_each_move_with_its_expected_and_checked_relief(self):
        text = self.history([period(
            move('i1', HELD), move('i2', NOT_HELD),
            move('i3', {'status': 'no sample', 'detail': 'no CPU sample'}),
            move('i4', expected={}, status='started'))])
        self.assertIn('relief / cost', text)
        self.assertIn('points bought', text)
        self.assertIn('to cpu', text)
        for instance, cells in (
                ('i1', ['12.2 / 1.5', '19.0 / 21.0', '55.5 / 80.0',
                        'yes']),
                ('i2', ['12.2 / 1.5', '19.0 / 21.0', '84.0 / 80.0',
                        'no']),
                ('i3', ['12.2 / 1.5', 'no sample'])):
            row = self.row(text, instance)
            positions = [row.index(cell) for cell in cells]
            self.assertEqual(sorted(positions), positions, row)
        self.assertEqual(
            ['started', '-', '-', '-', '-', 'cpu'],
            self.row(text, 'i4').split()[6:12])
        self.assertTrue(text.rstrip().endswith(
            'relief checked for 2 moves: the expectation held for 1 '
            '(50 %)'), text)

    def test_summary_over_every_record_shown(self):
        text = self.history([period(move('i1', HELD)),
                             period(move('i2', HELD), move('i3', NOT_HELD),
                                    move('i4'))])
        self.assertIn('relief checked for 3 moves: the expectation held '
                      'for 2 (67 %)', text)

    def test_summary_with_the_share_of_moved_loads_that_stayed(self):
        # i3's load was not read at its check: left out of that share.
        text = self.history([period(
            move('i1', dict(HELD, load_stayed=True)),
            move('i2', dict(NOT_HELD, load_stayed=False)),
            move('i3', HELD), move('i4', dict(HELD, load_stayed=True)))])
        self.assertIn('relief checked for 4 moves: the expectation held '
                      'for 3 (75 %); the moved load stayed for 2 of 3 '
                      '(67 %)\n', text)
        self.assertIn('the expectation held for 1 (100 %)\n',
                      self.history([period(move('i1', HELD))]))

    def test_summary_before_any_check(self):
        self.assertIn('relief checked for 0 moves\n',
                      self.history([period(move('i1'))]))
        self.assertIn('relief checked for 1 move: the expectation held '
                      'for 0 (0 %)',
                      self.history([period(move('i1', NOT_HELD))]))

    def test_records_older_than_the_fields_show_dashes(self):
        old = move('i1')
        del old['expected']
        text = self.history([period(old), period(move(
            'i2', expected={'relief': 'n/a'}))])
        self.assertEqual(['completed', '-', '-', '-', '-', 'cpu'],
                         self.row(text, 'i1').split()[6:12])
        self.assertIn('- / -', self.row(text, 'i2'))

    def test_json_keeps_the_records_with_each_moves_check(self):
        records = [period(move('i1', HELD), move('i2'))]
        found = self.history(records, json_output=True)
        self.assertEqual(records, found)
        self.assertEqual(HELD, found[0]['moves'][0]['relief_check'])
        self.assertEqual((12.25, 1.5), (
            found[0]['moves'][0]['expected']['relief'],
            found[0]['moves'][0]['expected']['cost']))


class ExplainTest(CLITestBase):

    def setUp(self):
        super().setUp()
        chosen = move('i1', status='dry-run')
        chosen['alternatives'] = []
        chosen['rejected'] = []
        older = move('i2', expected={'source_cpu': 70.0}, status='dry-run')
        older['source'] = 'host2'
        self.record = {
            'hosts': [{'host': 'host1', 'violated': True, 'reason': 'hot'},
                      {'host': 'host2', 'violated': True, 'reason': 'hot'}],
            'moves': [chosen, older], 'notes': [],
            'instance_hosts': {'i1': 'host1', 'i2': 'host2'},
            'instance_names': {'i1': 'vm-i1', 'i2': 'vm-i2'}}
        self.patch(cloud, 'dry_run', lambda conf: self.record)

    def explain(self, subject, json_output=False):
        return self.run_cli(inspect.explain, json_output, subject=subject)

    def test_a_hosts_moves_show_expected_relief_and_cost(self):
        code, text = self.explain('host1')
        self.assertEqual(errors.ACTION, code)
        self.assertIn('(core-min)', text)
        row = next(line for line in text.splitlines()
                   if line.startswith('i1 vm-i1'))
        self.assertEqual(['host1', 'host3', '72', '50', '12.2', '1.5'],
                         row.split()[2:8])

    def test_a_server_that_would_move_shows_them_too(self):
        code, text = self.explain('vm-i1')
        self.assertEqual(errors.ACTION, code)
        row = next(line for line in text.splitlines()
                   if line.startswith('i1 vm-i1'))
        self.assertEqual(['host1', 'host3', '72', '50', '12.2', '1.5'],
                         row.split()[2:8])
        code, found = self.explain('vm-i1', json_output=True)
        self.assertEqual((12.25, 1.5), (found['moves'][0]['expected']
                                        ['relief'],
                                        found['moves'][0]['expected']
                                        ['cost']))

    def test_a_plan_without_them_shows_dashes(self):
        code, text = self.explain('host2')
        row = next(line for line in text.splitlines()
                   if line.startswith('i2 vm-i2'))
        self.assertEqual(['host2', 'host3', '70', '-', '-', '-'],
                         row.split()[2:8])

    def test_a_move_inside_the_margin_says_so_and_why(self):
        chosen = self.record['moves'][0]
        chosen['expected'].update(inside_margin=True, graded_margin=0.0)
        chosen['reason'] += ('; balanced: cures the host; inside the '
                             'margin: no allowed destination keeps the '
                             'margin of 5 points')
        for subject in ('host1', 'vm-i1'):
            code, text = self.explain(subject)
            self.assertEqual(errors.ACTION, code)
            table = text.split('Moves inside the margin\n', 1)[1]
            row = next(line for line in table.splitlines()
                       if line.startswith('i1 vm-i1'))
            self.assertEqual(['host3', '0', 'no', 'allowed'],
                             row.split()[2:6])
        self.assertNotIn('inside the margin', self.explain('host2')[1])

    def test_a_move_past_the_threshold_says_so_and_why(self):
        chosen = self.record['moves'][0]
        chosen['expected'].update(inside_margin=True, graded_margin=0.0,
                                  past_threshold=True)
        chosen['reason'] += ('; balanced: partial; past the threshold: no '
                             'allowed destination stays under its threshold')
        code, text = self.explain('host1')
        table = text.split('Moves inside the margin\n', 1)[1]
        row = next(line for line in table.splitlines()
                   if line.startswith('i1 vm-i1'))
        self.assertEqual(['host3', 'past', 'threshold', 'no', 'allowed'],
                         row.split()[2:7])

