"""The maintenance benchmark's schedules, sums, ratios and bar
(tools/bench_maintenance.py)."""

import argparse
import importlib.util

import testtools

from nova_drs_scheduler.simulate import cli
from nova_drs_scheduler.simulate import maintenance
from tests import tool_scripts


def _bench():
    return tool_scripts.load('bench_maintenance')


def _run(trace, row, schedule='rolling', **figures):
    run = dict(trace=trace, seed=1, schedule=schedule, row=row,
               hosts_drained=2, hosts_emptied=2, drain_seconds=[60.0, 180.0],
               link_seconds=[60.0, 120.0], drain_migrations=4, migrations=5,
               drain_gb=8.0, gb_moved=10.0, overloaded_while_draining=1,
               overloaded_host_periods=10, unserved_core_minutes=0.5,
               left_behind=0, failed_migrations=0, refused_for_capacity=0,
               worst_overload_percent=90.0)
    run.update(figures)
    return run


@testtools.skipUnless(importlib.util.find_spec('tabulate'),
                      'tabulate is not installed')
class BenchMaintenanceTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.bench = _bench()

    def test_schedules_are_the_simulators_options(self):
        args = argparse.Namespace(drain_at=600.0, rolling_start=60.0,
                                  work_time=120.0, deadline=900.0)

        def schedule(name):
            return cli.prepare(cli.parser().parse_args(
                ['--vms', '200', '--steps', '2']
                + self.bench.schedule_argv(name, args))).maintenance

        self.assertEqual(maintenance.drain('host-0', 600.0, 900.0),
                         schedule('drain one host'))
        self.assertEqual(maintenance.rolling(60.0, 120.0, 900.0),
                         schedule('rolling'))

    def test_totals_sum_and_pool_the_drain_times(self):
        total = self.bench.totals([
            _run('a', 'x'),
            _run('b', 'x', drain_seconds=[600.0], worst_overload_percent=99.0,
                 left_behind=3, hosts_emptied=1)])
        self.assertEqual((4, 3, 8, 20.0, 20, 3, 99.0), (
            total['hosts_drained'], total['hosts_emptied'],
            total['drain_migrations'], total['gb_moved'],
            total['overloaded_host_periods'], total['left_behind'],
            total['worst_overload_percent']))
        # (60 + 180 + 600) / 3 s, and the longest; the link limit's mean.
        self.assertEqual((4.7, 10.0, 1.5, 1.0), (
            total['drain_minutes_mean'], total['drain_minutes_max'],
            total['link_minutes_mean'], total['unserved_core_minutes']))

    def test_table_gives_the_ratios_of_like_rows(self):
        bench = self.bench
        runs = [_run('a', bench.OURS, gb_moved=12.0),
                _run('a', bench.DRAINS, gb_moved=8.0),
                _run('a', bench.HM, overloaded_host_periods=40),
                _run('a', bench.HM_WB, left_behind=2)]
        header, _, *lines = [[cell.strip() for cell in line.split('|')[1:-1]]
                             for line in bench.table(runs, 'rolling')
                             .splitlines()]
        rows = {line[0]: dict(zip(header, line, strict=True))
                for line in lines}
        to_hm = rows[f'{bench.OURS} / {bench.HM}']
        self.assertEqual(('0.25', '1.2', '=', '1'), (
            to_hm['overloaded host-periods'], to_hm['GB moved'],
            to_hm['left behind'], to_hm['drain min max']))
        self.assertEqual('0.00',
                         rows[f'{bench.OURS} / {bench.HM_WB}']['left behind'])
        self.assertEqual('2/2', rows[bench.OURS]['hosts emptied'])
        self.assertEqual('0.8',
                         rows[f'{bench.DRAINS} / {bench.HM}']['GB moved'])

    def test_bar_per_trace_and_row(self):
        bench = self.bench

        def trace(name, ours=None, drains=None, hm=None, hm_wb=None):
            return [_run(name, bench.OURS, **(ours or {})),
                    _run(name, bench.DRAINS, **(drains or {})),
                    _run(name, bench.HM, **(hm or {})),
                    _run(name, bench.HM_WB, **(hm_wb or {}))]

        met = {'overloaded_host_periods': 5}
        runs = (trace('met', met)
                # Slower than HM, and over 1.5 times the link limit.
                + trace('slow', met, {'drain_seconds': [600.0]})
                + trace('more GB', dict(met, gb_moved=11.0),
                        {'gb_moved': 10.5}, {}, {'gb_moved': 10.5})
                + trace('left', dict(met, left_behind=1),
                        {'refused_for_capacity': 2})
                + trace('hot', {'overloaded_host_periods': 10})
                # Another schedule's runs do not count.
                + [_run('met', bench.OURS, 'drain one host', left_behind=9)])
        verdicts = {tuple(cell.strip() for cell in line.split('|')[1:3]):
                    line.split('|')[-2].strip()
                    for line in bench.bar(runs).splitlines()[2:]}
        ours, drains = bench.OURS, bench.DRAINS
        self.assertEqual({
            ('met', ours): 'yes', ('met', drains): 'yes',
            ('slow', ours): 'yes', ('slow', drains): 'no (tl)',
            ('more GB', ours): 'no (g)', ('more GB', drains): 'no (g)',
            ('left', ours): 'no (b)', ('left', drains): 'no (c)',
            ('hot', ours): 'no (o)', ('hot', drains): 'yes'}, verdicts)
