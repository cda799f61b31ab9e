"""The benchmark's Watcher grids and per-seed checks
(tools/bench_rebalance.py).

The single-row grids exist so that a run adds rows to earlier runs with
``--reuse``; their labels must be those of the same rows in ``full``, or
the rows would not be recognised as the same.  The checks are made per
seed, against the best Watcher row of that seed.
"""

import argparse
import importlib
import inspect
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
        self.assertEqual(['WS period 60 s, threshold 0.1, retry 1'],
                         self._labels('ws60-10'))
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
        self.assertEqual(7, len(ws))
        self.assertEqual(1, sum(v.default for v in ws))

    def test_ws_unforced_skips_audits_while_a_plan_runs(self):
        rows = watcher_grid.watcher_variants('ws-unforced', THRESHOLD)
        self.assertEqual(
            ['WS period 60 s, threshold 0.05, retry 1, no audit while a '
             'plan runs',
             'WS period 60 s, threshold 0.1, retry 1, no audit while a plan '
             'runs'], [v.label for v in rows])
        self.assertEqual([False, False], [v.force for v in rows])
        self.assertTrue(all(v.force for v in watcher_grid.watcher_variants(
            'full', THRESHOLD) if v not in rows))

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
    single setting on the trace and against WB60."""

    WB60 = 'WB period 60 s, threshold 80'

    def setUp(self):
        super().setUp()
        # Sums: balanced 100 overloaded (10 DRS-caused: 10 %) / 60
        # migrations / 30 unserved / worst 95; WB60 130 (26 DRS-caused:
        # 20 %) / 80 / 40 / worst 97; WB b 120 (none DRS-caused) / 50 /
        # 31 / worst 99.
        self.runs = [
            _run('none', 1, 500, 0, worst=120.0, unserved=90.0),
            _run('none', 2, 500, 0, worst=110.0, unserved=90.0),
            _run('balanced', 1, 60, 40, worst=95.0, caused=6,
                 unserved=20.0, held=80.0),
            _run('balanced', 2, 40, 20, worst=90.0, caused=4,
                 unserved=10.0, held=60.0),
            _run(self.WB60, 1, 70, 40, worst=97.0, caused=13,
                 unserved=20.0),
            _run(self.WB60, 2, 60, 40, worst=90.0, caused=13,
                 unserved=20.0),
            _run('WB b', 1, 50, 30, worst=99.0, unserved=16.0),
            _run('WB b', 2, 70, 20, worst=80.0, unserved=15.0),
        ]

    def _edit(self, strategy, seed, runs=None, **values):
        """The runs with ``values`` in ``strategy``'s run of ``seed``."""
        runs = [dict(r) for r in (self.runs if runs is None else runs)]
        [run] = [r for r in runs
                 if r['strategy'] == strategy and r['seed'] == seed]
        run.update(values)
        return runs

    def _check(self, runs, bursts=False, real_trace=False):
        return checks.single_setting_checks(checks.aggregate(runs),
                                            bursts, real_trace)

    def _figures(self, result):
        letters = [c['letter'] for c in result['checks']]
        self.assertEqual(len(letters), len(set(letters)))
        return {c['letter']: (c['ours'], c['theirs'], c['passed'])
                for c in result['checks']}

    def _one(self, letter, runs=None, bursts=False, real_trace=False):
        """Check ``letter``'s figures, and its text."""
        result = self._check(self.runs if runs is None else runs, bursts,
                             real_trace)
        [check] = [c for c in result['checks'] if c['letter'] == letter]
        self.assertEqual(not check['passed'], letter in result['failed'])
        return (check['ours'], check['theirs'], check['passed']), \
            check['check']

    def test_the_best_single_setting_by_sums(self):
        result = self._check(self.runs)
        # WB b: 120 over the seeds, fewer than WB60's 130 (though WB60 is
        # better on seed 2 and WB b on seed 1).
        self.assertEqual('WB b', result['against'])
        self.assertEqual(self.WB60, watcher_grid.WB60)
        self.assertEqual({'o': (100, 120, True), 'm': (60, 50, False),
                          'p': (0, 0, True), 'u': (30.0, 40.0, True),
                          'w': (95.0, 97.0, True), 'd': (10.0, 20.0, True)},
                         self._figures(result))
        self.assertEqual('m', result['failed'])
        self.assertEqual([1, 2], result['seeds'])
        self.assertEqual('balanced', result['strategy'])
        self.assertEqual(['o', 'm', 'p', 'u', 'w', 'd'],
                         [c['letter'] for c in result['checks']])
        for check in result['checks']:
            self.assertEqual({'letter', 'check', 'ours', 'theirs',
                              'passed'}, set(check))

    def test_the_old_checks_are_gone(self):
        for bursts in (False, True):
            for real_trace in (False, True):
                figures = self._figures(self._check(self.runs, bursts,
                                                    real_trace))
                self.assertNotIn('b', figures)
                self.assertEqual(set('ompuwd'), set(figures))
        self.assertFalse(hasattr(checks, 'DRS_CAUSED_SHARE'))

    def test_each_letter_fails(self):
        runs = self._edit('balanced', 1, overloaded_host_periods=80,
                          migrations=70, ping_pongs=1,
                          unserved_core_minutes=35.0,
                          worst_overload_percent=99.5,
                          drs_caused_overloaded_host_periods=22)
        # 120 overloaded: o fails on equality; 90 migrations above WB b's
        # 50; 45 unserved above WB60's 40; 99.5 % above 97 %; 26 of 120
        # DRS-caused is 21.67 %, above WB60's 20 %.
        result = self._check(runs)
        self.assertEqual('ompuwd', result['failed'])
        self.assertEqual((21.67, 20.0, False), self._figures(result)['d'])

    # o: fewer than the best single setting; bursty: no more than WB60.

    def test_o_fails_on_equal_figures_and_passes_one_under(self):
        runs = self._edit('balanced', 1, overloaded_host_periods=80)
        self.assertEqual((120, 120, False), self._one('o', runs)[0])
        runs = self._edit('balanced', 1, overloaded_host_periods=79)
        self.assertEqual((119, 120, True), self._one('o', runs)[0])
        # A PlanetLab day has the same bar.
        self.assertEqual((119, 120, True),
                         self._one('o', runs, real_trace=True)[0])

    def test_o_on_the_bursty_trace_is_against_wb60_equal_passes(self):
        # 130: above WB b's 120, equal to WB60's.
        runs = self._edit('balanced', 1, overloaded_host_periods=90)
        self.assertFalse(self._one('o', runs)[0][2])
        figures, text = self._one('o', runs, bursts=True)
        self.assertEqual((130, 130, True), figures)
        self.assertIn(f'no more overloaded host-periods than {self.WB60}',
                      text)
        self.assertIn('bursty trace', text)
        runs = self._edit('balanced', 1, overloaded_host_periods=91)
        self.assertEqual((131, 130, False),
                         self._one('o', runs, bursts=True)[0])
        # Bursts on a trace file: still the bursty bar.
        self.assertEqual((131, 130, False),
                         self._one('o', runs, True, True)[0])

    # m: no more than the best single setting; bursty: 1.25 x WB60's.

    def test_m_passes_on_equal_figures_and_fails_one_over(self):
        runs = self._edit('balanced', 1, migrations=30)
        figures, text = self._one('m', runs)
        self.assertEqual((50, 50, True), figures)
        self.assertEqual('no more migrations than it', text)
        runs = self._edit('balanced', 1, migrations=31)
        self.assertEqual((51, 50, False), self._one('m', runs)[0])
        self.assertEqual((51, 50, False),
                         self._one('m', runs, real_trace=True)[0])

    def test_m_on_the_bursty_trace_is_a_quarter_over_wb60(self):
        # WB60: 80 migrations, so at most 100.
        runs = self._edit('balanced', 1, migrations=80)
        self.assertFalse(self._one('m', runs)[0][2])
        figures, text = self._one('m', runs, bursts=True)
        self.assertEqual((100, 100.0, True), figures)
        self.assertEqual(f"no more migrations than 1.25 times {self.WB60}'s "
                         f"80 (bursty trace)", text)
        runs = self._edit('balanced', 1, migrations=81)
        self.assertEqual((101, 100.0, False),
                         self._one('m', runs, bursts=True)[0])
        self.assertEqual(1.25, checks.BURST_MIGRATIONS_FACTOR)

    # p: zero ping-pongs on every seed.

    def test_p_fails_on_one_ping_pong_on_any_seed(self):
        for seed in (1, 2):
            runs = self._edit('balanced', seed, ping_pongs=1)
            for bursts in (False, True):
                self.assertEqual((1, 0, False),
                                 self._one('p', runs, bursts)[0])

    # u: no more than WB60; on a PlanetLab day, than every Watcher row.

    def test_u_passes_on_equal_figures_and_fails_just_over(self):
        # WB60: 40 unserved core-minutes.
        runs = self._edit('balanced', 1, unserved_core_minutes=30.0)
        figures, text = self._one('u', runs)
        self.assertEqual((40.0, 40.0, True), figures)
        self.assertEqual(f'no more unserved core-minutes than {self.WB60} '
                         f'(not a PlanetLab day: the other Watcher rows '
                         f'not checked)', text)
        runs = self._edit('balanced', 1, unserved_core_minutes=30.01)
        self.assertEqual((40.0, 40.0, False), self._one('u', runs)[0])
        self.assertEqual((40.0, 40.0, False),
                         self._one('u', runs, bursts=True)[0])

    def test_u_is_against_wb60_not_the_best_single_setting(self):
        # WB60 29 in all, below ours (30) though WB b has 31.
        runs = self._edit(self.WB60, 1, unserved_core_minutes=9.0)
        self.assertEqual((30.0, 29.0, False), self._one('u', runs)[0])

    def test_u_on_a_planetlab_day_is_against_every_watcher_row(self):
        # 35: under WB60's 40, above WB b's 31.
        runs = self._edit('balanced', 1, unserved_core_minutes=25.0)
        self.assertTrue(self._one('u', runs)[0][2])
        self.assertTrue(self._one('u', runs, bursts=True)[0][2])
        self.assertTrue(self._one('u', runs, True, True)[0][2])
        figures, text = self._one('u', runs, real_trace=True)
        self.assertEqual((35.0, 31.0, False), figures)
        self.assertEqual(f'no more unserved core-minutes than {self.WB60} '
                         f'and than every Watcher row (PlanetLab day; the '
                         f'least: WB b)', text)

    def test_u_says_how_much_fell_in_episodes_first_periods(self):
        # Runs of an older scorecard lack the figure: no split then.
        runs = self._edit('balanced', 1, unserved_first_core_minutes=4.0)
        self.assertNotIn('first period', self._one('u', runs)[1])
        # Nor when some run counted the unserved demand but not the
        # episodes.
        for strategy, seed in (('balanced', 2), (self.WB60, 1),
                               (self.WB60, 2)):
            runs = self._edit(strategy, seed, runs,
                              unserved_first_core_minutes=1.0)
        self.assertNotIn('first period', self._one('u', runs)[1])
        for seed, first, starts in ((1, 4.0, 2), (2, 1.5, 1)):
            runs = self._edit('balanced', seed, runs,
                              unserved_first_core_minutes=first,
                              starved_starts=starts)
        for seed, first, starts in ((1, 2.0, 1), (2, 0.0, 0)):
            runs = self._edit(self.WB60, seed, runs,
                              unserved_first_core_minutes=first,
                              starved_starts=starts)
        self.assertNotIn('first period', self._one(
            'u', runs, real_trace=True)[1])   # WB b: unknown
        self.assertTrue(self._one('u', runs)[1].endswith(
            ' (in the first period of an episode past 100 %: 5.5 of ours, '
            'in 3 episodes, 2.0 of theirs, in 1)'))

    def test_u_on_a_planetlab_day_equal_to_the_least_passes(self):
        runs = self._edit('balanced', 1, unserved_core_minutes=21.0)
        self.assertEqual((31.0, 31.0, True),
                         self._one('u', runs, real_trace=True)[0])
        runs = self._edit('balanced', 1, unserved_core_minutes=21.01)
        self.assertEqual((31.0, 31.0, False),
                         self._one('u', runs, real_trace=True)[0])

    def test_u_on_a_planetlab_day_when_wb60_is_the_least(self):
        runs = self._edit(self.WB60, 1, unserved_core_minutes=9.0)
        figures, text = self._one('u', runs, real_trace=True)
        self.assertEqual((30.0, 29.0, False), figures)
        self.assertIn(f'the least: {self.WB60}', text)

    def test_u_on_a_planetlab_day_ignores_rows_not_run_on_every_seed(self):
        runs = self.runs + [_run('WB c', 1, 1, 1, unserved=0.0)]
        self.assertEqual((30.0, 31.0, True),
                         self._one('u', runs, real_trace=True)[0])

    # w: worst host (max over the seeds) no hotter than WB60's.

    def test_w_passes_on_equal_figures_and_fails_just_over(self):
        runs = self._edit('balanced', 1, worst_overload_percent=97.0)
        figures, text = self._one('w', runs)
        self.assertEqual((97.0, 97.0, True), figures)
        self.assertEqual(f"worst host (max over the seeds) no hotter than "
                         f"{self.WB60}'s", text)
        runs = self._edit('balanced', 1, worst_overload_percent=97.1)
        self.assertEqual((97.1, 97.0, False), self._one('w', runs)[0])
        for bursts, real_trace in ((True, False), (False, True)):
            self.assertEqual((97.1, 97.0, False),
                             self._one('w', runs, bursts, real_trace)[0])

    def test_w_is_against_wb60_over_every_seed(self):
        # 98: under the best single setting's 99, over WB60's 97.
        runs = self._edit('balanced', 1, worst_overload_percent=98.0)
        self.assertEqual((98.0, 97.0, False), self._one('w', runs)[0])
        # Ours at its worst on seed 2, WB60 on seed 1: the maxima count.
        runs = self._edit('balanced', 2, worst_overload_percent=97.5)
        self.assertEqual((97.5, 97.0, False), self._one('w', runs)[0])
        runs = self._edit('balanced', 1, worst_overload_percent=96.0)
        runs = self._edit(self.WB60, 1, runs, worst_overload_percent=80.0)
        runs = self._edit(self.WB60, 2, runs, worst_overload_percent=96.5)
        self.assertEqual((96.0, 96.5, True), self._one('w', runs)[0])

    # d: DRS-caused share under WB60's (the 10 % cap is gone).

    def test_d_fails_on_equal_shares_and_passes_just_under(self):
        # 20 of 100 against 26 of 130: fewer DRS-caused, the same share.
        runs = self._edit('balanced', 1,
                          drs_caused_overloaded_host_periods=16)
        figures, text = self._one('d', runs)
        self.assertEqual((20.0, 20.0, False), figures)
        self.assertEqual(f"DRS-caused share of overloaded host-periods, in "
                         f"%, under {self.WB60}'s (20 of 100 against 26 "
                         f"of 130)", text)
        runs = self._edit('balanced', 1,
                          drs_caused_overloaded_host_periods=15)
        self.assertEqual((19.0, 20.0, True), self._one('d', runs)[0])
        for bursts, real_trace in ((True, False), (False, True)):
            self.assertEqual((19.0, 20.0, True),
                             self._one('d', runs, bursts, real_trace)[0])

    def test_d_is_a_share_not_a_count_nor_a_ten_percent_cap(self):
        # 21 of 100 (21 %) against 26 of 130 (20 %): fewer, yet above.
        runs = self._edit('balanced', 1,
                          drs_caused_overloaded_host_periods=17)
        self.assertEqual((21.0, 20.0, False), self._one('d', runs)[0])
        # WB60 at 10 %: ours at 10 % fails, 9 % passes.
        runs = self._edit(self.WB60, 1, drs_caused_overloaded_host_periods=0)
        self.assertEqual((10.0, 10.0, False), self._one('d', runs)[0])
        runs = self._edit('balanced', 1, runs,
                          drs_caused_overloaded_host_periods=5)
        self.assertEqual((9.0, 10.0, True), self._one('d', runs)[0])

    def test_d_when_wb60_has_no_overload(self):
        runs = self._edit(self.WB60, 1, overloaded_host_periods=0,
                          drs_caused_overloaded_host_periods=0)
        runs = self._edit(self.WB60, 2, runs, overloaded_host_periods=0,
                          drs_caused_overloaded_host_periods=0)
        figures, text = self._one('d', runs)
        self.assertEqual((10, 0, False), figures)
        self.assertEqual(f'no DRS-caused overloaded host-period, as '
                         f'{self.WB60} has no overloaded host-period '
                         f'(counts)', text)
        for seed in (1, 2):
            runs = self._edit('balanced', seed, runs,
                              drs_caused_overloaded_host_periods=0)
        self.assertEqual((0, 0, True), self._one('d', runs)[0])
        runs = self._edit('balanced', 2, runs,
                          drs_caused_overloaded_host_periods=1)
        self.assertEqual((1, 0, False), self._one('d', runs)[0])

    def test_d_with_no_overload_of_ours(self):
        runs = self.runs
        for seed in (1, 2):
            runs = self._edit('balanced', seed, runs,
                              overloaded_host_periods=0,
                              drs_caused_overloaded_host_periods=0)
        self.assertEqual((0.0, 20.0, True), self._one('d', runs)[0])
        # WB60 overloaded, none of it DRS-caused: none of ours either is
        # the best there is; one of ours fails.
        for seed in (1, 2):
            runs = self._edit(self.WB60, seed, runs,
                              drs_caused_overloaded_host_periods=0)
        self.assertEqual((0.0, 0.0, True), self._one('d', runs)[0])
        runs = self._edit('balanced', 1, runs, overloaded_host_periods=5,
                          drs_caused_overloaded_host_periods=1)
        self.assertEqual((20.0, 0.0, False), self._one('d', runs)[0])

    # WB60 not run on every seed of ours.

    def _without_wb60_seed_2(self):
        return [r for r in self.runs
                if not (r['strategy'] == self.WB60 and r['seed'] == 2)]

    def test_checks_needing_wb60_fail_without_it(self):
        for runs in (self._without_wb60_seed_2(),
                     [r for r in self.runs if r['strategy'] != self.WB60]):
            for real_trace in (False, True):
                result = self._check(runs, real_trace=real_trace)
                figures = self._figures(result)
                # o and m against WB b, as with WB60.
                self.assertEqual((100, 120, True), figures['o'])
                self.assertEqual((60, 50, False), figures['m'])
                self.assertEqual((30.0, None, False), figures['u'])
                self.assertEqual((95.0, None, False), figures['w'])
                self.assertEqual((10.0, None, False), figures['d'])
                self.assertEqual('muwd', result['failed'])
                for check in result['checks']:
                    self.assertEqual(
                        check['letter'] in 'uwd',
                        check['check'].endswith(
                            f'({self.WB60} not run on every seed: no '
                            f'figure)'), check)

    def test_checks_needing_wb60_fail_without_it_on_the_bursty_trace(self):
        result = self._check(self._without_wb60_seed_2(), bursts=True)
        figures = self._figures(result)
        self.assertEqual((100, None, False), figures['o'])
        self.assertEqual((60, None, False), figures['m'])
        self.assertEqual((0, 0, True), figures['p'])
        self.assertEqual('omuwd', result['failed'])
        text = markdown.headline_markdown(result)
        self.assertIn(f'- **NO** (o): no more overloaded host-periods than '
                      f'{self.WB60} (bursty trace) ({self.WB60} not run on '
                      f'every seed: no figure): 100 / -', text)
        self.assertIn(f"- **NO** (m): no more migrations than 1.25 times "
                      f"{self.WB60}'s (bursty trace) ({self.WB60} not run "
                      f"on every seed: no figure): 60 / -", text)

    def test_rows_not_run_on_every_seed_are_not_the_best(self):
        runs = self.runs + [_run('WB c', 1, 1, 1, unserved=0.0)]
        result = self._check(runs)
        self.assertEqual('WB b', result['against'])
        self.assertTrue(self._figures(result)['o'][2])

    def test_no_verdict_without_a_watcher_row(self):
        self.assertEqual({}, self._check(self.runs[:4]))
        self.assertIn('No verdict', markdown.headline_markdown({}))

    def test_no_verdict_without_our_row(self):
        runs = [r for r in self.runs if r['strategy'] != 'balanced']
        self.assertEqual({}, self._check(runs))

    def test_markdown_gives_both_figures(self):
        text = markdown.headline_markdown(self._check(self.runs))
        self.assertIn(f"balanced against Watcher's best single setting on "
                      f"this trace, WB b (fewest overloaded host-periods "
                      f"summed over seeds 1, 2), and against {self.WB60}",
                      text)
        self.assertIn('- yes (o): fewer overloaded host-periods than the '
                      'best Watcher row: 100 / 120', text)
        self.assertIn('- **NO** (m): no more migrations than it: 60 / 50',
                      text)
        self.assertIn(f"- yes (d): DRS-caused share of overloaded "
                      f"host-periods, in %, under {self.WB60}'s (10 of 100 "
                      f"against 26 of 130): 10 / 20", text)
        self.assertIn('Verdict: **bar not met** (failed: m)', text)

    def test_markdown_of_a_bar_met(self):
        runs = self._edit('balanced', 1, migrations=30)
        text = markdown.headline_markdown(self._check(runs))
        self.assertIn('Verdict: **bar met**', text)
        self.assertNotIn('**NO**', text)

    def test_relief_held_of_rows_without_checks(self):
        rows = {r['strategy']: r for r in checks.aggregate(self.runs)}
        self.assertEqual((None, None), rows['WB b']['relief_held_percent'])
        mean, spread = rows['balanced']['relief_held_percent']
        self.assertEqual(70.0, mean)
        self.assertIn('| 0.8 ± 0.2 | 0.0 ± 0.0 | - | 1.00 ± 0.00 |',
                      markdown.quality_markdown(list(rows.values())))


class VerdictTraceKindTest(testtools.TestCase):
    """The tool tells the headline verdict which trace it judges: bursty
    with ``--bursts``, a PlanetLab day with ``--trace`` and no
    ``--bursts``."""

    class StopError(Exception):
        pass

    def _called_with(self, argv):
        runs = [_run(name, 1, 10, 5)
                for name in ('none', 'balanced', watcher_grid.WB60)]
        self.useFixture(fixtures.MockPatchObject(
            bench, 'reused', return_value=runs))
        verdict = self.useFixture(fixtures.MockPatchObject(
            bench, 'single_setting_checks', side_effect=self.StopError)).mock
        self.assertRaises(self.StopError, bench.main,
                          argv + ['--grid', 'wb60', '--seeds', '1',
                                  '--skip-scale'])
        args, kwargs = verdict.call_args
        bound = inspect.signature(checks.single_setting_checks).bind(
            *args, **kwargs).arguments
        self.assertEqual(['none', 'balanced', watcher_grid.WB60],
                         [r['strategy'] for r in bound['rows']])
        self.assertNotIn('name', bound)
        return bound['bursts'], bound['real_trace']

    def test_trace_kinds(self):
        self.assertEqual((False, True),
                         self._called_with(['--trace', '20110303.csv']))
        self.assertEqual((True, True), self._called_with(
            ['--trace', '20110303.csv', '--bursts']))
        self.assertEqual((False, False),
                         self._called_with(['--shape', 'staggered']))
        self.assertEqual((True, False), self._called_with(['--bursts']))


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

    def test_printed_run_names_unserved_in_episodes_first_periods(self):
        run = dict(self.runs[0], unserved_first_core_minutes=3.5,
                   starved_starts=2)
        self.assertTrue(markdown.run_line(run).startswith(
            'seed 1: balanced: 71.0 unserved core-min (3.5 in the first '
            'period of 2 episodes past 100 %), worst host 120.1 %, '))
        run['starved_starts'] = 1
        self.assertIn('(3.5 in the first period of 1 episode past 100 %)',
                      markdown.run_line(run))

    def test_one_plot_per_trace_is_written(self):
        directory = self.useFixture(fixtures.TempDir()).path
        path = plot.tradeoff_png(checks.aggregate(self.runs), 'a trace',
                                 directory, '20110303')
        self.assertEqual(os.path.join(directory, 'tradeoff-20110303.png'),
                         path)
        with open(path, 'rb') as stream:
            self.assertEqual(b'\x89PNG', stream.read(4))

    def test_points_are_labelled_in_few_words(self):
        self.assertEqual('WB 60 s, 80 (default)',
                         plot.short('WB period 60 s, threshold 80 (default)'))
        self.assertEqual('WS 720/600 s, 0.1, r1',
                         plot.short('WS period 720/600 s, threshold 0.1, '
                                    'retry 1'))
        self.assertEqual('WS 60 s, 0.05, r1, unforced', plot.short(
            'WS period 60 s, threshold 0.05, retry 1, no audit while a '
            'plan runs'))
        self.assertEqual('balanced', plot.short('balanced'))

    def test_plot_named_after_the_trace(self):
        def args(trace=None, shape='planetlab', bursts=False):
            return argparse.Namespace(trace=trace, shape=shape,
                                      bursts=bursts)

        self.assertEqual('20110303', plot.trace_name(
            args('/data/planetlab/20110303.csv')))
        self.assertEqual('steps-bursts', plot.trace_name(
            args(shape='steps', bursts=True)))
        self.assertEqual('20110303-bursts', plot.trace_name(
            args('/data/planetlab/20110303.csv', bursts=True)))
        self.assertEqual('planetlab', plot.trace_name(args()))

    def test_plot_titled_without_the_trace_file_s_directory(self):
        found = argparse.Namespace(trace='/data/planetlab/20110303.csv')
        self.assertEqual('20110303.csv with bursts', plot.trace_title(
            '/data/planetlab/20110303.csv with bursts', found))
        self.assertEqual('synthetic steps (seed 1)', plot.trace_title(
            'synthetic steps (seed 1)', argparse.Namespace(trace=None)))
