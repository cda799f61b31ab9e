"""Trace parsing: both formats, detection, and clear errors."""


import testtools

from nova_drs_scheduler.simulate import traces
from tests import tempfiles


class LoadTest(testtools.TestCase):

    def _file(self, text):
        return tempfiles.write(self, text, '.csv')

    def test_planetlab_with_header(self):
        path = self._file('vm,t000,t001,t002\na,10,20,30\nb,0,5,100\n')
        trace = traces.load(path)
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 0), (20, 5), (30, 100)), trace.steps)
        self.assertEqual(300, trace.step_seconds)

    def test_planetlab_without_header(self):
        trace = traces.load(self._file('a,10,20\nb,1,2\n'))
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 1), (20, 2)), trace.steps)

    def test_generic_with_index_column(self):
        path = self._file('time,a,b\n0,10,1\n300,20,2\n600,30,3\n')
        trace = traces.load(path, step_seconds=60)
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 1), (20, 2), (30, 3)), trace.steps)
        self.assertEqual(60, trace.step_seconds)

    def test_generic_without_index_column(self):
        trace = traces.load(self._file('a,b\n10,1\n20,2\n'))
        self.assertEqual(('a', 'b'), trace.names)
        self.assertEqual(((10, 1), (20, 2)), trace.steps)

    def test_forced_format_overrides_detection(self):
        # VM names that look like numbers: only the user can tell.
        path = self._file('1,2\n10,20\n')
        self.assertEqual(('1', '2'),
                         traces.load(path, fmt='generic').names)
        self.assertEqual(('1', '10'), traces.load(path).names)

    def test_head(self):
        trace = traces.load(self._file('a,1,2,3\n'))
        self.assertEqual(((1,), (2,)), trace.head(2).steps)

    def _error(self, text, fmt='auto'):
        return str(self.assertRaises(traces.TraceError, traces.load,
                                     self._file(text), fmt))

    def test_not_a_number(self):
        message = self._error('vm,t0,t1\na,10,x\n')
        self.assertIn(":2: 'x' is not a number", message)

    def test_out_of_range(self):
        self.assertIn("'101' is not a percentage",
                      self._error('vm,t0\na,101\n'))
        self.assertIn("'-1' is not a percentage",
                      self._error('a,b\n1,-1\n'))
        self.assertIn("'nan' is not a percentage", self._error('a,nan\n'))

    def test_ragged_rows(self):
        self.assertIn(':3: 1 samples, expected 2',
                      self._error('vm,t0,t1\na,1,2\nb,1\n'))
        self.assertIn(':3: 3 columns, the header has 2',
                      self._error('a,b\n1,2\n1,2,3\n'))

    def test_duplicate_vm(self):
        self.assertIn("VM 'a' appears twice", self._error('a,1\na,2\n'))

    def test_empty_inputs(self):
        self.assertIn('empty file', self._error(''))
        self.assertIn('no sample rows', self._error('a,b\n'))
        self.assertIn('no VM rows', self._error('vm,t0\n', 'planetlab'))
        self.assertIn('one-column', self._error('a\n1\n'))

    def test_missing_file_and_bad_format(self):
        error = self.assertRaises(traces.TraceError, traces.load,
                                  '/nonexistent/trace.csv')
        self.assertIn('/nonexistent/trace.csv', str(error))
        error = self.assertRaises(traces.TraceError, traces.load,
                                  '/dev/null', 'xml')
        self.assertIn("unknown trace format 'xml'", str(error))


class SyntheticTest(testtools.TestCase):

    def test_reproducible_and_in_range(self):
        first = traces.synthetic(20, 50, seed=3)
        self.assertEqual(first, traces.synthetic(20, 50, seed=3))
        self.assertNotEqual(first, traces.synthetic(20, 50, seed=4))
        self.assertEqual(50, len(first.steps))
        self.assertEqual(20, len(first.names))
        values = [v for step in first.steps for v in step]
        self.assertTrue(all(0 <= v <= 100 for v in values))

    def test_rejects_empty(self):
        self.assertRaises(traces.TraceError, traces.synthetic, 0, 5, 1)

    def test_shapes_keep_the_planetlab_base_and_reject_unknown(self):
        base = traces.synthetic(8, 288, seed=2)
        self.assertEqual(base, traces.synthetic(8, 288, seed=2,
                                                shape='planetlab'))
        error = self.assertRaises(traces.TraceError, traces.synthetic,
                                  8, 10, 2, shape='flat')
        self.assertIn("unknown synthetic shape 'flat'", str(error))

    def test_shared_peak_lifts_every_vm_at_midday(self):
        base = traces.synthetic(40, 288, seed=2)
        peak = traces.synthetic(40, 288, seed=2, shape='shared-peak')
        noon, midnight = 144, 0
        # At noon every VM carries 1.8x its base load (capped at 100);
        # at midnight, 12 h from the peak, the bump is negligible.
        for vm in range(40):
            self.assertAlmostEqual(
                min(base.steps[noon][vm] * 1.8, 100.0),
                peak.steps[noon][vm], delta=0.11)
            self.assertAlmostEqual(base.steps[midnight][vm],
                                   peak.steps[midnight][vm], delta=0.11)

    def test_staggered_peaks_fall_at_four_times_of_day(self):
        base = traces.synthetic(40, 288, seed=2)
        staggered = traces.synthetic(40, 288, seed=2, shape='staggered')
        centres = {3: 36, 9: 108, 15: 180, 21: 252}   # hour: 5-min step
        peaks = []
        for vm in range(40):
            ratios = {hour: staggered.steps[step][vm] / base.steps[step][vm]
                      for hour, step in centres.items()
                      if 10.0 <= base.steps[step][vm] <= 50.0}
            # x1.8 at its own peak, x1.01 or less 6 hours away.
            peaks += [hour for hour, ratio in ratios.items()
                      if abs(ratio - 1.8) < 0.02]
            self.assertTrue(all(abs(ratio - 1.8) < 0.02 or ratio < 1.02
                                for ratio in ratios.values()), ratios)
        self.assertEqual({3, 9, 15, 21}, set(peaks))


class BurstsTest(testtools.TestCase):

    def test_minute_steps_hold_the_trace_and_add_short_bursts(self):
        base = traces.Trace(tuple(f'vm{i}' for i in range(50)),
                            ((10.0,) * 50, (20.0,) * 50), 300)
        bursty = traces.with_bursts(base, seed=1)
        self.assertEqual(60, bursty.step_seconds)
        self.assertEqual(10, len(bursty.steps))
        self.assertEqual(bursty, traces.with_bursts(base, seed=1))
        runs = []
        for vm in range(50):
            column = [step[vm] for step in bursty.steps]
            held = [10.0] * 5 + [20.0] * 5
            extra = [c - h for c, h in zip(column, held, strict=True)]
            self.assertTrue(all(e == 0 or 40 <= e <= 90 for e in extra),
                            extra)
            length = 0
            for value in extra + [0]:
                if value:
                    length += 1
                elif length:
                    runs.append(length)
                    length = 0
        # Bursts are rare and short: 1-3 minutes (two may touch).
        self.assertTrue(runs)
        self.assertLess(sum(runs), 0.1 * 500)
        self.assertTrue(all(1 <= r <= 6 for r in runs), runs)

    def test_refuses_steps_that_are_not_whole_minutes(self):
        trace = traces.Trace(('vm',), ((1.0,),), 90)
        error = self.assertRaises(traces.TraceError, traces.with_bursts,
                                  trace, 1)
        self.assertIn('90 s', str(error))
