"""The benchmark's Watcher grids and per-seed checks
(tools/bench_rebalance.py).

The single-row grids exist so that a run adds rows to earlier runs with
``--reuse``; their labels must be those of the same rows in ``full``, or
the rows would not be recognised as the same.  The checks are made per
seed, against the best Watcher row of that seed.
"""

import argparse
import importlib
import json
import os
import sys
from unittest import mock

import fixtures
import testtools

from nova_drs_scheduler.simulate import cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
TOOLS = os.path.join(ROOT, 'tools')
THRESHOLD = 80.0


def _tool(name):
    """A module of tools/, imported as the benchmark imports it."""
    sys.path.insert(0, TOOLS)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(TOOLS)


bench = _tool('bench_rebalance')
checks = _tool('benchlib.rebalance.checks')
markdown = _tool('benchlib.rebalance.markdown')
runner = _tool('benchlib.rebalance.runs')
plot = _tool('benchlib.rebalance.plot')
watcher_grid = _tool('benchlib.rebalance.watcher_grid')


class WatcherGridTest(testtools.TestCase):

    def _labels(self, grid):
        return [v.label
                for v in watcher_grid.watcher_variants(grid, THRESHOLD)]

    def test_single_row_grids(self):
        self.assertEqual(['WB period 60 s, threshold 80'],
                         self._labels('wb60'))
        self.assertEqual(['WB period 60 s, threshold 70'],
                         self._labels('wb60-70'))
        self.assertEqual(['WB period 300 s, threshold 80 (default)'],
                         self._labels('wb300'))
        self.assertEqual(['WB period 300 s, threshold 70'],
                         self._labels('wb300-70'))
        self.assertEqual(['WS period 60 s, threshold 0.05, retry 1'],
                         self._labels('ws60-05'))
        self.assertEqual(['WB period 300 s, threshold 80 (default)',
                          'WB period 60 s, threshold 80',
                          'WB period 60 s, threshold 70'],
                         self._labels('wb+70'))

    def test_wb300_is_workload_balance_at_its_default_period(self):
        [row] = watcher_grid.watcher_variants('wb300', THRESHOLD)
        self.assertEqual(watcher_grid.WB, row.kind)
        self.assertTrue(row.default)
        self.assertEqual({'period': 300, 'granularity': 300,
                          'threshold': THRESHOLD}, dict(row.parameters))

    def test_ws_is_every_workload_stabilization_row_of_full(self):
        full = watcher_grid.watcher_variants('full', THRESHOLD)
        ws = watcher_grid.watcher_variants('ws', THRESHOLD)
        self.assertEqual([v for v in full if v.kind == watcher_grid.WS], ws)
        self.assertEqual(5, len(ws))
        self.assertEqual(1, sum(v.default for v in ws))

    def test_ws60_05_is_a_row_of_ws_at_60_s_threshold_005_retry_1(self):
        [row] = watcher_grid.watcher_variants('ws60-05', THRESHOLD)
        self.assertIn(row, watcher_grid.watcher_variants('ws', THRESHOLD))
        parameters = dict(row.parameters)
        self.assertEqual({'instance': 60, 'compute_node': 60, 'node': 0},
                         parameters['periods'])
        self.assertEqual(0.05,
                         parameters['thresholds']['instance_cpu_usage'])
        self.assertEqual(1, parameters['retry_count'])
        self.assertFalse(row.default)

    def test_every_grid_is_part_of_full(self):
        full = self._labels('full')
        self.assertEqual(len(full), len(set(full)))
        for grid in watcher_grid.GRIDS:
            self.assertTrue(set(self._labels(grid)) <= set(full), grid)

    def test_unknown_grid_is_refused_by_the_parser(self):
        error = self.assertRaises(SystemExit, bench.main,
                                  ['--grid', 'wb30', '--skip-scale'])
        self.assertEqual(2, error.code)


def _run(strategy, seed, overloaded, migrations, gb=10.0, worst=90.0,
         ping_pongs=0, watcher=None, caused=0, unserved=0.0, held=None):
    watcher = strategy.startswith('WB') if watcher is None else watcher
    return {'strategy': strategy, 'seed': seed, 'watcher': watcher,
            'default': False, 'overloaded_host_periods': overloaded,
            'drs_caused_overloaded_host_periods': caused,
            'migrations': migrations, 'gb_moved': gb,
            'instance_minutes_in_migration': migrations / 30.0,
            'worst_overload_percent': worst, 'ping_pongs': ping_pongs,
            'unserved_core_minutes': unserved,
            'relief_checked': 0 if held is None else 10,
            'relief_held_percent': held,
            'failed_migrations': 0, 'input_ms_mean': 1.0,
            'plan_ms_mean': 1.0, 'total_ms_p95': 2.0}


class SeedChecksTest(testtools.TestCase):

    def test_each_seed_is_judged_against_its_own_best_row(self):
        runs = [
            _run('none', 1, 500, 0, gb=0.0, worst=110.0),
            _run('balanced', 1, 40, 30, gb=300.0, worst=95.0),
            _run('WB a', 1, 50, 20, gb=200.0),
            _run('WB b', 1, 60, 10, gb=100.0),
            _run('none', 2, 400, 0, gb=0.0, worst=100.0),
            _run('balanced', 2, 70, 30, gb=300.0, worst=101.0,
                 ping_pongs=1),
            _run('WB a', 2, 80, 90, gb=900.0),
            _run('WB b', 2, 70, 40, gb=400.0),
        ]
        first, second = checks.seed_checks(runs)
        self.assertEqual('WB a', first['best_watcher']['strategy'])
        self.assertEqual('m', first['failed'])
        self.assertEqual('WB b', second['best_watcher']['strategy'])
        self.assertEqual('opw', second['failed'])

    def test_best_row_ties_go_to_fewer_migrations(self):
        runs = [_run('balanced', 3, 10, 5), _run('WB a', 3, 20, 9),
                _run('WB b', 3, 20, 8)]
        [check] = checks.seed_checks(runs)
        self.assertEqual('WB b', check['best_watcher']['strategy'])
        self.assertEqual('', check['failed'])

    def test_seed_without_watcher_or_ours_is_left_out(self):
        runs = [_run('balanced', 1, 10, 5), _run('WB a', 2, 20, 9)]
        self.assertEqual([], checks.seed_checks(runs))

    def test_mean_and_spread_of_each_seeds_best_row(self):
        runs = [_run('balanced', 1, 10, 5), _run('WB a', 1, 20, 9),
                _run('WB b', 1, 30, 1),
                _run('balanced', 2, 14, 7), _run('WB a', 2, 50, 9),
                _run('WB b', 2, 40, 3)]
        rows = checks.best_per_seed(checks.seed_checks(runs))
        by_name = {r['strategy']: r for r in rows}
        self.assertEqual(['balanced', checks.BEST_PER_SEED],
                         [r['strategy'] for r in rows])
        best = by_name[checks.BEST_PER_SEED]
        self.assertEqual([20, 40], best['overloaded_host_periods_per_seed'])
        mean, spread = best['overloaded_host_periods']
        self.assertEqual(30.0, mean)
        self.assertAlmostEqual(14.142, spread, places=3)
        mean, spread = by_name['balanced']['overloaded_host_periods']
        self.assertEqual(12.0, mean)
        self.assertAlmostEqual(2.828, spread, places=3)

    def test_markdown_counts_failed_checks(self):
        runs = [_run('none', 1, 5, 0, worst=80.0),
                _run('balanced', 1, 10, 5, worst=85.0),
                _run('WB a', 1, 8, 2, gb=5.0)]
        text = markdown.seed_markdown(checks.seed_checks(runs))
        self.assertIn('| 1 | WB a | 8 / 2 / 5, 90.0 | 5, 80.0 | '
                      '10 / 5 / 10, 85.0, 0 | ✗omw |', text)
        self.assertIn('3 failed checks over 1 seeds.', text)


class BarChecksTest(testtools.TestCase):
    """Every row put to the per-seed check, against the best of the others."""

    def setUp(self):
        super().setUp()
        self.runs = [
            _run('none', 1, 500, 0, gb=0.0, worst=100.0),
            _run('balanced', 1, 40, 30, gb=300.0, worst=95.0),
            _run('WB a', 1, 50, 20, gb=200.0, ping_pongs=2),
            _run('WB b', 1, 60, 10, gb=100.0, worst=101.0),
            _run('none', 2, 400, 0, gb=0.0, worst=100.0),
            _run('balanced', 2, 70, 30, gb=300.0, worst=95.0),
            _run('WB a', 2, 80, 90, gb=900.0),
            _run('WB b', 2, 65, 40, gb=400.0),
        ]

    def test_each_row_against_the_best_of_the_others(self):
        rows = {r['strategy']: r for r in checks.bar_checks(self.runs)}
        self.assertEqual(['balanced', 'WB a', 'WB b'], list(rows))
        # balanced: seed 1 against WB a (m), seed 2 against WB b (o).
        self.assertEqual({'m': 1, 'o': 1}, rows['balanced']['failed'])
        # WB a: against WB b alone; seed 1 m and p, seed 2 o and m.
        self.assertEqual({'m': 2, 'p': 1, 'o': 1}, rows['WB a']['failed'])
        # WB b: against WB a alone; seed 1 o and w, seed 2 passes.
        self.assertEqual({'o': 1, 'w': 1}, rows['WB b']['failed'])
        self.assertEqual([2, 2, 1], [rows[n]['lost'] for n in rows])
        self.assertEqual([1, 2], rows['WB b']['seeds'])

    def test_balanced_row_is_seed_checks(self):
        [ours] = [r for r in checks.bar_checks(self.runs)
                  if r['strategy'] == 'balanced']
        letters = ''.join(c['failed']
                          for c in checks.seed_checks(self.runs))
        self.assertEqual(sorted(letters),
                         sorted(k for k, n in ours['failed'].items()
                                for _ in range(n)))

    def test_a_seed_with_one_watcher_row_judges_only_ours(self):
        runs = [_run('balanced', 1, 10, 5), _run('WB a', 1, 20, 9)]
        [row] = checks.bar_checks(runs)
        self.assertEqual('balanced', row['strategy'])
        self.assertEqual([1], row['seeds'])
        self.assertEqual({}, row['failed'])
        self.assertEqual('WB a', row['against'])
        self.assertEqual('', row['mean_failed'])

    def test_each_row_against_the_best_other_row_on_the_mean(self):
        rows = {r['strategy']: r for r in checks.bar_checks(self.runs)}
        # Means: balanced 55 / 30 / 300, WB a 65 / 55 / 550, WB b 62.5 /
        # 25 / 250.
        self.assertEqual('WB b', rows['balanced']['against'])
        self.assertEqual('m', rows['balanced']['mean_failed'])
        self.assertEqual('WB b', rows['WB a']['against'])
        self.assertEqual('omp', rows['WB a']['mean_failed'])
        self.assertEqual('WB a', rows['WB b']['against'])
        self.assertEqual('w', rows['WB b']['mean_failed'])

    def test_rows_not_run_on_every_seed_do_not_compete_on_the_mean(self):
        runs = [r for r in self.runs
                if not (r['strategy'] == 'WB b' and r['seed'] == 2)]
        rows = {r['strategy']: r for r in checks.bar_checks(runs)}
        self.assertEqual('WB a', rows['balanced']['against'])
        self.assertIsNone(rows['WB b']['mean_failed'])
        self.assertIsNone(rows['WB b']['against'])
        self.assertEqual([1], rows['WB b']['seeds'])
        # The mean verdict of the run itself ignores the short row too.
        result = checks.verdict(checks.aggregate(runs))
        self.assertEqual('WB a', result['best_watcher'])

    def test_markdown_columns(self):
        text = markdown.bar_markdown(checks.bar_checks(self.runs))
        self.assertIn('| **balanced** | 2 | 1 | 1 | 0 | 0 | 2 | 2 | WB b | '
                      '✗m |', text)
        self.assertIn('| WB a | 2 | 1 | 2 | 1 | 0 | 4 | 2 | WB b | ✗omp |',
                      text)
        self.assertIn('| WB b | 2 | 1 | 0 | 0 | 1 | 2 | 1 | WB a | ✗w |',
                      text)

    def test_markdown_of_a_row_that_passes_and_of_a_short_row(self):
        rows = [{'strategy': 'WB a', 'seeds': [1, 2], 'failed': {},
                 'lost': 0, 'against': 'WB b', 'mean_failed': ''},
                {'strategy': 'WB b', 'seeds': [1], 'failed': {'o': 1},
                 'lost': 1, 'against': None, 'mean_failed': None}]
        text = markdown.bar_markdown(rows)
        self.assertIn('| WB a | 2 | 0 | 0 | 0 | 0 | 0 | 0 | WB b | pass |',
                      text)
        self.assertIn('| WB b | 1 | 1 | 0 | 0 | 0 | 1 | 1 | - | - |', text)


class SingleSettingChecksTest(testtools.TestCase):
    """The headline verdict: sums over the seeds, against Watcher's best
    single setting on the trace."""

    WB60 = 'WB period 60 s, threshold 80'

    def setUp(self):
        super().setUp()
        # Sums: balanced 100 overloaded / 60 migrations / 10 DRS-caused /
        # 30 unserved / worst 95; WB60 130 / 80 / unserved 40 / worst 97;
        # WB b 120 / 50 / unserved 31 / worst 99.
        self.runs = [
            _run('none', 1, 500, 0, worst=120.0, unserved=90.0),
            _run('none', 2, 500, 0, worst=110.0, unserved=90.0),
            _run('balanced', 1, 60, 40, worst=95.0, caused=6,
                 unserved=20.0, held=80.0),
            _run('balanced', 2, 40, 20, worst=90.0, caused=4,
                 unserved=10.0, held=60.0),
            _run(self.WB60, 1, 70, 40, worst=97.0, unserved=20.0),
            _run(self.WB60, 2, 60, 40, worst=90.0, unserved=20.0),
            _run('WB b', 1, 50, 30, worst=99.0, unserved=16.0),
            _run('WB b', 2, 70, 20, worst=80.0, unserved=15.0),
        ]

    def _check(self, runs, bursts=True):
        return checks.single_setting_checks(checks.aggregate(runs),
                                                bursts)

    def _figures(self, result):
        return {c['letter']: (c['ours'], c['theirs'], c['passed'])
                for c in result['checks']}

    def test_the_best_single_setting_by_sums(self):
        result = self._check(self.runs)
        # WB b: 120 over the seeds, fewer than WB60's 130 (though WB60 is
        # better on seed 2 and WB b on seed 1).
        self.assertEqual('WB b', result['against'])
        self.assertEqual(self.WB60, watcher_grid.WB60)
        self.assertEqual({'o': (100, 120, True), 'm': (60, 50, False),
                          'p': (0, 0, True), 'u': (30.0, 31.0, True),
                          'w': (95.0, 99.0, True), 'd': (10, 10.0, True),
                          'b': (60, 80, True)},
                         self._figures(result))
        self.assertEqual('m', result['failed'])
        self.assertEqual([1, 2], result['seeds'])

    def test_each_letter_fails(self):
        runs = [dict(r) for r in self.runs]
        ours = [r for r in runs if r['strategy'] == 'balanced']
        ours[0].update(overloaded_host_periods=80, migrations=70,
                       ping_pongs=1, unserved_core_minutes=25.0,
                       worst_overload_percent=99.5,
                       drs_caused_overloaded_host_periods=9)
        result = self._check(runs)
        # 120 over: o fails on equality; 90 migrations above WB b's 50 and
        # WB60's 80; 35 unserved above WB b's 31; 13 DRS-caused above 12.
        self.assertEqual('ompuwdb', result['failed'])
        self.assertEqual((90, 80, False), self._figures(result)['b'])

    def test_unserved_against_every_watcher_row(self):
        runs = [dict(r) for r in self.runs]
        runs[4]['unserved_core_minutes'] = 9.0   # WB60, seed 1: 29 in all
        figures = self._figures(self._check(runs))
        self.assertEqual((30.0, 29.0, False), figures['u'])

    def test_b_only_with_bursts_and_fails_without_its_row(self):
        self.assertNotIn('b', self._figures(self._check(self.runs, False)))
        runs = [r for r in self.runs
                if not (r['strategy'] == self.WB60 and r['seed'] == 2)]
        result = self._check(runs)
        self.assertEqual((60, None, False), self._figures(result)['b'])
        self.assertIn('b', result['failed'])
        self.assertIn('not run', markdown.headline_markdown(result))

    def test_rows_not_run_on_every_seed_are_not_the_best(self):
        runs = self.runs + [_run('WB c', 1, 1, 1, unserved=0.0)]
        result = self._check(runs)
        self.assertEqual('WB b', result['against'])
        self.assertTrue(self._figures(result)['u'][2])

    def test_no_verdict_without_a_watcher_row(self):
        self.assertEqual({}, self._check(self.runs[:4]))
        self.assertIn('No verdict', markdown.headline_markdown({}))

    def test_markdown_gives_both_figures(self):
        text = markdown.headline_markdown(self._check(self.runs))
        self.assertIn('- yes (o): fewer overloaded host-periods than the '
                      'best Watcher row: 100 / 120', text)
        self.assertIn('- **NO** (m): no more migrations than it: 60 / 50',
                      text)
        self.assertIn('Verdict: **bar not met** (failed: m)', text)

    def test_relief_held_of_rows_without_checks(self):
        rows = {r['strategy']: r for r in checks.aggregate(self.runs)}
        self.assertEqual((None, None), rows['WB b']['relief_held_percent'])
        mean, spread = rows['balanced']['relief_held_percent']
        self.assertEqual(70.0, mean)
        self.assertIn('| 0.8 ± 0.2 | 0.0 ± 0.0 | - | 1.00 ± 0.00 |',
                      markdown.quality_markdown(list(rows.values())))


class ReuseTest(testtools.TestCase):
    """--reuse takes Watcher's runs of an earlier quality.json, not those
    made before the migration cost model."""

    def setUp(self):
        super().setUp()
        self.args = argparse.Namespace(
            seeds='1', vms=10, shape='planetlab', trace=None, bursts=True,
            config_file=[], step_seconds=300, target_load=60.0)
        self.source = cli.describe(
            cli.parser().parse_args(
                list(runner.simulate_argv(self.args, 1))))

    def _write(self, runs):
        path = os.path.join(self.useFixture(
            fixtures.TempDir()).path, 'quality.json')
        with open(path, 'w') as stream:
            json.dump({'source': self.source, 'seeds': [1], 'runs': runs},
                      stream)
        return path

    def test_runs_with_every_column_are_reused(self):
        run = _run('WB a', 1, 10, 5)
        path = self._write([run, _run('balanced', 1, 5, 5)])
        self.assertEqual([run], runner.reused([path], self.args))

    def test_runs_without_the_new_columns_are_refused(self):
        run = _run('WB a', 1, 10, 5)
        del run['unserved_core_minutes']
        path = self._write([run])
        error = self.assertRaises(SystemExit, runner.reused, [path],
                                  self.args)
        self.assertIn('unserved_core_minutes', str(error))
        self.assertIn('run those rows again', str(error))


class WatcherFailureTest(testtools.TestCase):
    """A failure inside Watcher costs its row, not the run."""

    def setUp(self):
        super().setUp()
        for name in ('_setup', 'strategies'):
            patcher = mock.patch.object(runner, name)
            patcher.start()
            self.addCleanup(patcher.stop)
        patcher = mock.patch.object(runner.watcher_adapter,
                                    'WatcherStrategy')
        self.watcher = patcher.start()
        self.addCleanup(patcher.stop)
        patcher = mock.patch.object(runner.engine, 'run',
                                    side_effect=KeyError('edge'))
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_watcher_row_gives_its_error(self):
        [row] = watcher_grid.watcher_variants('wb60', THRESHOLD)
        self.watcher.return_value.name = row.label
        run = runner.run_one((), 6, row)
        self.assertEqual({'strategy': row.label, 'seed': 6, 'watcher': True,
                          'default': False, 'error': "KeyError: 'edge'"},
                         run)

    def test_our_row_still_raises(self):
        self.assertRaises(KeyError, runner.run_one, (), 6, 'balanced')


class UnservedFirstTest(testtools.TestCase):
    """Every row leads with what a tenant feels: unserved demand and the
    worst host; each trace gets its plot of unserved demand against
    migrations."""

    def setUp(self):
        super().setUp()
        self.runs = [_run('balanced', seed, 900, 700, worst=120.1,
                          unserved=70.0 + seed) for seed in (1, 2)]
        self.runs += [_run('WB a', seed, 950, 600, worst=102.0,
                           unserved=5.0) for seed in (1, 2)]

    def test_table_columns_start_with_unserved_and_worst_host(self):
        header, _, ours, _ = markdown.quality_markdown(
            checks.aggregate(self.runs)).splitlines()
        self.assertTrue(header.startswith(
            '| strategy | unserved core-min | worst host % | overloaded '))
        self.assertTrue(ours.startswith(
            '| **balanced** | 71.5 ± 0.7 | 120.1 ± 0.0 | 900 ± 0 |'), ours)

    def test_printed_run_starts_with_unserved_and_worst_host(self):
        self.assertTrue(markdown.run_line(self.runs[0]).startswith(
            'seed 1: balanced: 71.0 unserved core-min, worst host 120.1 %, '
            '900 overloaded host-periods'))

    def test_one_plot_per_trace_is_written(self):
        directory = self.useFixture(fixtures.TempDir()).path
        path = plot.tradeoff_png(checks.aggregate(self.runs), 'a trace',
                                 directory, '20110303')
        self.assertEqual(os.path.join(directory, 'tradeoff-20110303.png'),
                         path)
        with open(path, 'rb') as stream:
            self.assertEqual(b'\x89PNG', stream.read(4))

    def test_plot_named_after_the_trace(self):
        def args(trace=None, shape='planetlab', bursts=False):
            return argparse.Namespace(trace=trace, shape=shape,
                                      bursts=bursts)

        self.assertEqual('20110303', plot.trace_name(
            args('/data/planetlab/20110303.csv')))
        self.assertEqual('steps-bursts', plot.trace_name(
            args(shape='steps', bursts=True)))
        self.assertEqual('planetlab', plot.trace_name(args()))
