"""Trace parsing: both formats, detection, and clear errors."""

import dataclasses
import math

import fixtures
import testtools

from nova_drs_scheduler.simulate import traces
from tests import tempfiles

_TRACES = 'nova_drs_scheduler.simulate.traces.'


class _Draws:
    """A random source whose draws are read off their parameters and a
    script, so a generated series can be worked out by hand."""

    def __init__(self, randoms=(), shares=(), zs=(), scale=1.0):
        self.randoms = list(randoms)
        #: How far from a to b each randint() and uniform() lands (the
        #: generator's two uniform() draws take a quarter when none is left).
        self.shares = list(shares)
        self.zs = list(zs)
        self.scale = scale

    def random(self):
        return self.randoms.pop(0)

    def uniform(self, a, b):
        return a + (self.shares.pop(0) if self.shares else 0.25) * (b - a)

    def randint(self, a, b):
        return a + round(self.shares.pop(0) * (b - a))

    def lognormvariate(self, mu, sigma):
        return math.exp(mu) * (1 + sigma) * self.scale

    def paretovariate(self, alpha):
        return 1 + 1 / alpha

    def gauss(self, mu, sigma):
        return mu + self.zs.pop(0) * sigma


class TraceTest(testtools.TestCase):

    def test_needs_names_and_steps_and_is_immutable(self):
        trace = traces.Trace(('a',), ((1.0,),))
        self.assertEqual(300, trace.step_seconds)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, trace,
                          'steps', ())
        self.assertRaises(traces.TraceError, traces.Trace, ('a',), ())
        self.assertRaises(traces.TraceError, traces.Trace, (), ((1.0,),))


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
        # Without a header the first VM is on line 1.
        self.assertIn(':2: 2 samples, expected 3 like the first VM',
                      self._error('a,1,2,3\nb,1,2\n'))
        self.assertIn(':2: 2 samples, expected 1',
                      self._error('a,1\nb,1,2\n'))
        self.assertIn(':2: 1 columns, the header has 2',
                      self._error('a,b\n1\n'))
        self.assertIn(':1: a VM row needs a name and at least one sample',
                      self._error('a\n', 'planetlab'))

    def test_a_day_of_samples(self):
        # 288 five-minute samples per VM, 300 VMs: wider than the ints
        # CPython caches.
        day = ','.join(['1'] * 288)
        self.assertEqual(288, len(traces.load(
            self._file(f'a,{day}\nb,{day}\n')).steps))
        names = ','.join(f'vm{i}' for i in range(300))
        self.assertEqual(300, len(traces.load(
            self._file(f'{names}\n{",".join(["1"] * 300)}\n')).names))

    def test_format_names_compared_by_value(self):
        # As argparse hands them over: equal to the constants, not them.
        path = self._file('a,10,20\nb,1,2\n')
        for fmt in ('auto', 'planetlab'):
            self.assertEqual(('a', 'b'),
                             traces.load(path, fmt.upper().lower()).names)

    def test_not_utf8(self):
        path = self._file('')
        with open(path, 'wb') as handle:
            handle.write(b'a,1\n\xff\xfe,2\n')
        self.assertIn('not a CSV file', self._error_at(path))

    def _error_at(self, path):
        return str(self.assertRaises(traces.TraceError, traces.load, path))

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

    def test_bounds_defaults_and_names(self):
        for vms, steps in ((0, 5), (5, 0)):
            error = self.assertRaises(traces.TraceError, traces.synthetic,
                                      vms, steps, 1)
            self.assertIn('synthetic trace needs at least 1 VM', str(error))
        self.assertEqual(300, traces.synthetic(1, 1, 1).step_seconds)
        for vms, names in ((10, ('vm-0', 'vm-9')), (11, ('vm-00', 'vm-10'))):
            trace = traces.synthetic(vms, 1, 1)
            self.assertEqual(names, (trace.names[0], trace.names[-1]))

    def test_one_vm_by_hand(self):
        # A mean of 7 * (1 + 1.1) = 14.7 %, a swing of a quarter of 0.6 of
        # it (2.205) and a phase of a quarter of 2 pi, so with 4 steps a
        # day the swing adds 2.205 * cos(pi * step / 2); noise z * 7.35;
        # bursts of (1 + 1 / 1.5) * 15 = 25 points.
        draws = _Draws(randoms=[0.5,     # no burst: 14.7 + 2.205 + 14.7
                                0.01,    # none: 14.7 + 3.675 = 18.375
                                0.0,     # starts: 14.7 - 2.2 + 147 + 25
                                0.25,    # goes on: 14.7 + 8.82 + 25
                                0.5,     # goes on: 14.7 + 2.205 + 25
                                0.1,     # ends: 14.7 + 8.82
                                0.5],    # none: 14.7 - 2.205 - 58.8
                       zs=[2, 0.5, 20, 1.2, 0, 1.2, -8])
        self.assertEqual([31.6, 18.4, 100.0, 48.5, 41.9, 23.5, 0.0],
                         traces._vm_series(draws, 7, 4))
        # A mean drawn at 147 % is held at 90: 90 + 13.5 - 45.
        capped = _Draws(randoms=[0.5], zs=[-1], scale=10.0)
        self.assertEqual([58.5], traces._vm_series(capped, 1, 4))

    def test_a_day_of_steps(self):
        days = []
        self.useFixture(fixtures.MockPatch(
            _TRACES + '_vm_series',
            side_effect=lambda rng, steps, per_day: days.append(per_day)
            or [1.0] * steps))
        for step_seconds in (300, 7, 2 * 86400):
            traces.synthetic(1, 1, 1, step_seconds)
        self.assertEqual([288, 12342, 1], days)

    def test_peak(self):
        # 1 + 0.8 * exp(-d^2 / 8) at d hours from the centre.
        for hour, centre, factor in ((12, 12, 1.8),
                                     (1, 23, 1.4852245),   # over midnight
                                     (15, 12, 1.2597220),
                                     (8, 12, 1.1082682)):
            self.assertAlmostEqual(factor, traces._peak(hour, centre))

    def test_peaks_follow_the_hour_of_day(self):
        self.useFixture(fixtures.MockPatch(
            _TRACES + '_vm_series',
            side_effect=lambda rng, steps, per_day: [50.0] * steps))
        self.useFixture(fixtures.MockPatch(_TRACES + '_peak_centres',
                                           return_value=[21.0, 3.0]))
        # Every day as the first (the day-to-day noise: below).
        self.useFixture(fixtures.MockPatch(
            _TRACES + '_days', side_effect=lambda count, seed: [
                (0.0, 1.0)] * count))
        trace = traces.synthetic(2, 279, 1, step_seconds=1800,
                                 shape='staggered')
        # Half-hour steps: hour 1 is 4 h from 21 h and 2 h from 3 h; 1.5
        # is 4.5 and 1.5 h away; 23 h is 2 and 4 h away; step 278 is hour
        # 139, 19 h on the sixth day: 2 and 8 h away.
        self.assertEqual([(55.4, 74.3), (53.2, 80.2), (74.3, 55.4),
                          (74.3, 50.0)],
                         [trace.steps[step] for step in (2, 3, 46, 278)])

    def test_each_day_after_the_first_is_shifted_and_scaled_a_little(self):
        found = traces._days(4, seed=5)
        self.assertEqual(found, traces._days(4, seed=5))
        self.assertNotEqual(found, traces._days(4, seed=6))
        self.assertEqual((0.0, 1.0), found[0])
        for shift, factor in found[1:]:
            self.assertLessEqual(abs(shift), traces.DAY_SHIFT_HOURS)
            self.assertNotEqual(0.0, shift)
            self.assertLess(abs(factor - 1.0),
                            5 * traces.DAY_LEVEL_NOISE)

    def test_several_days_repeat_the_day_with_noise(self):
        # A one-day trace has no day-to-day noise.
        self.assertEqual([(0.0, 1.0)], traces._days(1, seed=4))
        three = traces.synthetic(200, 3 * 288, 4, shape='day-night')

        def hourly(day):
            steps = three.steps[day * 288:(day + 1) * 288]
            return [sum(map(sum, steps[h * 12:(h + 1) * 12]))
                    for h in range(24)]
        first = hourly(0)
        for day in (1, 2):
            later = hourly(day)
            self.assertNotEqual(first, later)
            # The same day: night low, afternoon high, each hour near the
            # first day's.
            self.assertLess(min(later[2:5]) * 2.5, max(later[13:17]))
            for hour in range(24):
                self.assertLess(abs(later[hour] - first[hour]),
                                0.3 * first[hour], (day, hour))

    def test_shapes_keep_the_planetlab_base_and_reject_unknown(self):
        base = traces.synthetic(8, 288, seed=2)
        # The shape as argparse hands it over: equal, not the constant.
        self.assertEqual(base, traces.synthetic(8, 288, seed=2,
                                                shape='PLANETLAB'.lower()))
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


class StepsShapeTest(testtools.TestCase):

    def test_a_share_steps_up_at_each_hour_and_stays(self):
        def day(share):
            return traces.synthetic(100, 24, 3, step_seconds=3600,
                                    shape='steps', step_hours=(12.0, 6.0),
                                    step_share=share)
        trace, steady = day(0.2), day(0.0)
        self.assertEqual(trace, day(0.2))
        # The same draws without a step: where the two differ, a VM has
        # stepped up, from its hour to the end, to 85-100 % (with noise).
        starts = []
        for vm in range(100):
            changed = [t for t in range(24)
                       if trace.steps[t][vm] != steady.steps[t][vm]]
            if changed:
                starts.append(changed[0])
                self.assertEqual(list(range(changed[0], 24)), changed)
                self.assertTrue(all(trace.steps[t][vm] >= 77.0
                                    for t in changed))
        self.assertEqual([6] * 10 + [12] * 10, sorted(starts))

    def test_steady_levels_are_planetlab_like_and_low(self):
        trace = traces.synthetic(400, 2, 1, shape='steps')
        levels = sorted(trace.steps[0])
        self.assertLess(levels[200], 12.0)
        self.assertTrue(all(0.0 <= v <= 100.0 for v in levels))


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

    def test_bursts_by_hand(self):
        # Hour-long steps: 60 minutes each, 300 in all.
        base = traces.Trace(('a', 'b'), ((5.0, 20.0),) * 5, 3600)
        # VM a: a burst at minute 0 (1 minute, 40 + 0.1234 * 50 points),
        # none at 2 (0.01 is not under 0.01) or 3, one at 4 (3 minutes, 90
        # points), none up to 298, one there (1 minute, 40 points), which
        # ends the column at minute 300. VM b: one at 0 (3 minutes, 90
        # points, held at 100 %), one at 299 (3, 65 points), cut at 300.
        draws = _Draws(
            randoms=([0.0, 0.01, 0.5, 0.0] + [1.0] * 290 + [0.0]
                     + [0.0] + [1.0] * 295 + [0.0]),
            shares=[0, 0.1234, 1, 1, 0, 0, 1, 1, 1, 0.5])
        self.useFixture(fixtures.MockPatch(_TRACES + 'random.Random',
                                           return_value=draws))
        bursty = traces.with_bursts(base, seed=1)
        self.assertEqual(([], [], []),
                         (draws.randoms, draws.shares, draws.zs))
        a = {minute: value for minute, (value, _) in enumerate(bursty.steps)
             if value != 5.0}
        b = {minute: value for minute, (_, value) in enumerate(bursty.steps)
             if value != 20.0}
        self.assertEqual(300, len(bursty.steps))
        self.assertEqual({0: 51.2, 4: 95.0, 5: 95.0, 6: 95.0, 298: 45.0}, a)
        self.assertEqual({0: 100.0, 1: 100.0, 2: 100.0, 299: 85.0}, b)

    def test_refuses_steps_that_are_not_whole_minutes(self):
        trace = traces.Trace(('vm',), ((1.0,),), 90)
        error = self.assertRaises(traces.TraceError, traces.with_bursts,
                                  trace, 1)
        self.assertIn('90 s', str(error))
