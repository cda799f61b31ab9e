"""The benchmark's Watcher grids (tools/bench_rebalance.py).

The single-row grids exist so that a run adds rows to earlier runs with
``--reuse``; their labels must be those of the same rows in ``full``, or
the rows would not be recognised as the same.
"""

import os
import sys

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
THRESHOLD = 80.0


def _bench():
    sys.path.insert(0, os.path.join(ROOT, 'tools'))
    try:
        import bench_rebalance
    finally:
        sys.path.remove(os.path.join(ROOT, 'tools'))
    return bench_rebalance


class WatcherGridTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.bench = _bench()

    def _labels(self, grid):
        return [v.label for v in self.bench.watcher_variants(grid, THRESHOLD)]

    def test_single_row_grids(self):
        self.assertEqual(['WB period 60 s, threshold 80'],
                         self._labels('wb60'))
        self.assertEqual(['WB period 60 s, threshold 70'],
                         self._labels('wb60-70'))
        self.assertEqual(['WB period 300 s, threshold 80 (default)'],
                         self._labels('wb300'))

    def test_wb300_is_workload_balance_at_its_default_period(self):
        [row] = self.bench.watcher_variants('wb300', THRESHOLD)
        self.assertEqual(self.bench.WB, row.kind)
        self.assertTrue(row.default)
        self.assertEqual({'period': 300, 'granularity': 300,
                          'threshold': THRESHOLD}, dict(row.parameters))

    def test_ws_is_every_workload_stabilization_row_of_full(self):
        full = self.bench.watcher_variants('full', THRESHOLD)
        ws = self.bench.watcher_variants('ws', THRESHOLD)
        self.assertEqual([v for v in full if v.kind == self.bench.WS], ws)
        self.assertEqual(5, len(ws))
        self.assertEqual(1, sum(v.default for v in ws))

    def test_every_grid_is_part_of_full(self):
        full = self._labels('full')
        self.assertEqual(len(full), len(set(full)))
        for grid in self.bench.GRIDS:
            self.assertTrue(set(self._labels(grid)) <= set(full), grid)

    def test_unknown_grid_is_refused_by_the_parser(self):
        error = self.assertRaises(SystemExit, self.bench.main,
                                  ['--grid', 'wb30', '--skip-scale'])
        self.assertEqual(2, error.code)
