"""The power benchmark's sums, savings and bar (tools/bench_power.py)."""

import importlib.util
import io
import types

import fixtures
import testtools

from tests import tool_scripts


def _bench():
    return tool_scripts.load('bench_power')


def _run(row, seed=1, trace='t', **figures):
    run = dict(trace=trace, seed=seed, row=row, hosts=4, energy_kwh=10.0,
               host_hours_on=96.0, overloaded_host_periods=10,
               worst_overload_percent=90.0, unserved_core_minutes=0.0,
               migrations=5, gb_moved=10.0, ping_pongs=0, short_periods=0,
               failed_migrations=0, standbys=0, wakes=0,
               standby_drain_seconds=[], capture_bar=60.0, bound_kwh=8.0,
               bound_all_on_kwh=10.5, bound_host_hours_on=80.0)
    run.update(figures)
    return run


@testtools.skipUnless(importlib.util.find_spec('tabulate'),
                      'tabulate is not installed')
class BenchPowerTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.bench = _bench()

    def test_totals_add_seeds_and_keep_the_worst_host(self):
        total = self.bench.totals([
            _run('balanced', energy_kwh=10.25, worst_overload_percent=95.0),
            _run('balanced', seed=2, energy_kwh=9.5)])
        self.assertEqual((19.75, 95.0, 20), (
            total['energy_kwh'], total['worst_overload_percent'],
            total['overloaded_host_periods']))

    def test_standby_drains_pooled_and_listed(self):
        runs = [_run('p', standby_drain_seconds=[60.0, 300.0]),
                _run('p', seed=2, standby_drain_seconds=[120.0]),
                _run('q')]
        total = self.bench.totals(runs)
        self.assertEqual((2.7, 5.0), (total['standby_drain_minutes_mean'],
                                      total['standby_drain_minutes_max']))
        self.assertEqual('- p: 1.0, 5.0\n- p: 2.0',
                         self.bench.standby_drains(runs))
        self.assertEqual((None, None), tuple(
            self.bench.totals([_run('q')])[key]
            for key in ('standby_drain_minutes_mean',
                        'standby_drain_minutes_max')))

    def test_failed_names_each_check(self):
        balanced = _run('balanced', energy_kwh=10.0, bound_kwh=8.0,
                        overloaded_host_periods=200,
                        unserved_core_minutes=10.0)
        # Half the bound's saving, 10 % more overload and unserved demand.
        ours = _run('x', energy_kwh=9.0, overloaded_host_periods=220,
                    unserved_core_minutes=11.0)
        self.assertEqual('', self.bench.failed(ours, balanced, 50.0))
        self.assertEqual('', self.bench.failed(ours, balanced, None))
        worse = _run('x', energy_kwh=9.1, overloaded_host_periods=221,
                     unserved_core_minutes=11.1, short_periods=1)
        self.assertEqual('couz', self.bench.failed(worse, balanced, 50.0))

    def test_under_100_overloaded_host_periods_ten_more_are_allowed(self):
        balanced = _run('balanced', overloaded_host_periods=20)
        self.assertEqual('', self.bench.failed(
            _run('x', overloaded_host_periods=30), balanced, None))
        self.assertEqual('o', self.bench.failed(
            _run('x', overloaded_host_periods=31), balanced, None))

    def test_nothing_to_capture_passes_c(self):
        balanced = _run('balanced', energy_kwh=10.0, bound_kwh=10.0)
        self.assertEqual('', self.bench.failed(
            _run('x', energy_kwh=10.0), balanced, 75.0))

    def test_bar_per_trace_sum_and_seed(self):
        b = self.bench
        runs = []
        for seed, ours_kwh in ((1, 8.5), (2, 9.5)):
            runs += [_run(b.BALANCED, seed, energy_kwh=10.0),
                     _run(b.OURS, seed, energy_kwh=ours_kwh)]
        text, met = b.bar(runs)
        lines = [line for line in text.splitlines()
                 if line.split('|')[1].strip() == 't']
        # The bound saves 2 kWh a seed: the sum captures 50 % (bar 60);
        # seed 1 75 %, seed 2 25 %.
        self.assertEqual(['no (c)', 'yes', 'no (c)'],
                         [line.split('|')[-2].strip() for line in lines])
        self.assertEqual(['50 (60)', '75 (60)', '25 (60)'],
                         [line.split('|')[3].strip() for line in lines])
        self.assertFalse(met)

    def test_capture_bar_by_trace(self):
        self.assertEqual((75.0, 75.0, 60.0, None), (
            self.bench._capture_bar(True, 70.0),
            self.bench._capture_bar(True, 50.0),
            self.bench._capture_bar(False, 50.0),
            self.bench._capture_bar(False, 70.0)))

    def test_table_shows_the_bound_and_the_share_captured(self):
        b = self.bench
        runs = [_run(row, energy_kwh=kwh) for row, kwh in (
            (b.NONE, 10.0), (b.BALANCED, 10.0), (b.OURS, 9.0),
            (b.VMC, 7.0))]
        text = b.table(runs)
        rows = {line.split('|')[1].strip(): line.split('|')[4].strip()
                for line in text.splitlines() if line.startswith('|')}
        self.assertEqual(('50', '150', '100'), (
            rows[b.OURS], rows[b.VMC], rows['hindsight bound']))
        self.assertIn('the bound with every host on: 10.5 kWh, balanced '
                      '10 kWh', text)

    def test_table_shows_the_rows_run(self):
        b = self.bench
        runs = [_run(row) for row in (b.BALANCED, b.OURS)]
        shown = [line.split('|')[1].strip() for line in
                 b.table(runs).splitlines()[2:] if line.startswith('|')]
        self.assertEqual([b.BALANCED, b.OURS, 'hindsight bound'], shown)

    def test_rows_need_balanced_and_ours(self):
        self.useFixture(fixtures.MonkeyPatch('sys.stderr', io.StringIO()))
        for rows in ('none,balanced', 'balanced,balanced+power,bogus'):
            self.assertRaises(SystemExit, self.bench.main,
                              ['--rows', rows, '--synthetic-vms', '100'])

    def test_saved_against_balanced(self):
        self.assertEqual('25.0', self.bench._saved(
            {'energy_kwh': 7.5}, {'energy_kwh': 10.0}))
        self.assertEqual('-', self.bench._saved(
            {'energy_kwh': 7.5}, {'energy_kwh': 0.0}))

    def test_the_generated_trace_gets_its_days(self):
        def traces(days):
            return self.bench.traces(types.SimpleNamespace(
                peak_load=70.0, idle_watts=100.0, peak_watts=350.0,
                standby_watts=10.0, boot_seconds=None, config_file=[],
                trace=[], synthetic_vms=50, days=days))
        [(label, simulate, bar)] = traces(3)
        self.assertEqual('generated day-night (50 VMs, 3 days)', label)
        self.assertEqual(['--vms', '50', '--shape', 'day-night', '--days',
                          '3'], simulate[:6])
        self.assertEqual(75.0, bar)
        [(label, simulate, _)] = traces(1)
        self.assertEqual('generated day-night (50 VMs)', label)
        self.assertEqual(['--days', '1'], simulate[4:6])
