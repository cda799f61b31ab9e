"""A pool's demand by time of day, learnt across days, and the outlook
that raises Holt's forecast where it climbs."""

import dataclasses
import math

import hypothesis
import testtools
from hypothesis import strategies as st

from nova_drs_scheduler.planning import daily_shape
from nova_drs_scheduler.planning import forecast
from nova_drs_scheduler.planning import outlook

DAY = daily_shape.DAY
BIN = daily_shape.BIN_SECONDS
#: A Monday, midnight UTC, in seconds since the epoch.
MONDAY = 20425 * DAY


def feed(samples, shape=None):
    shape = shape or daily_shape.DailyShape()
    for t, value in samples:
        shape = daily_shape.update(shape, t, value)
    return shape


def days(count, demand, start=MONDAY, step=300, skip=()):
    """Samples every ``step`` seconds for ``count`` days of
    ``demand(seconds into the day)``, leaving out the days in ``skip``."""
    return [(start + day * DAY + s, demand(s))
            for day in range(count) if day not in skip
            for s in range(0, DAY, step)]


def morning(seconds):
    """10 cores at night, 40 from 08:00: a ramp between 07:00 and 08:00."""
    hour = seconds / 3600.0
    return 10.0 + 30.0 * min(1.0, max(0.0, hour - 7.0))


class DailyShapeTest(testtools.TestCase):

    def test_the_defaults(self):
        shape = daily_shape.DailyShape()
        self.assertEqual((900, 96, 2.0), (shape.bin_seconds, shape.per_day,
                                          shape.day_halflife))
        self.assertEqual((None,) * 96, shape.bins)
        self.assertEqual(0, daily_shape.whole_days(shape))

    def test_bins_must_divide_the_day(self):
        for seconds in (0, -900, 7 * 3600):
            self.assertRaises(ValueError, daily_shape.DailyShape,
                              bin_seconds=seconds)
        for count in (95, 97):
            self.assertRaises(ValueError, daily_shape.DailyShape,
                              bins=(None,) * count)
        self.assertEqual(24, daily_shape.DailyShape(bin_seconds=3600).per_day)
        # Any width that divides the day, down to a second.
        self.assertEqual(DAY, daily_shape.DailyShape(bin_seconds=1).per_day)

    def test_finer_bins_learn_alike(self):
        # Five-minute bins: 288 of them in a day.
        shape = feed([(MONDAY, 4.0), (MONDAY + 100, 8.0),
                      (MONDAY + 300, 1.0)],
                     daily_shape.DailyShape(bin_seconds=300))
        self.assertEqual(288, len(shape.bins))
        self.assertEqual(daily_shape.Bin(6.0, 1, 20425), shape.bins[0])
        self.assertEqual((20425, 1, 1.0, 1), shape.filling)

    def test_a_shape_is_immutable(self):
        # A leader compares the shape it had with the one it has now.
        shape = feed(days(1, morning) + [(MONDAY + DAY, 10.0)])
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, shape,
                          'time', None)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr,
                          shape.bins[0], 'demand', 0.0)

    def test_empty_knows_nothing(self):
        shape = daily_shape.DailyShape()
        self.assertIsNone(daily_shape.rise(shape, MONDAY, 1800))
        self.assertEqual({}, daily_shape.changed(shape, shape))

    def test_one_sample_fills_a_bin_but_learns_nothing(self):
        shape = feed([(MONDAY + 100, 5.0)])
        self.assertEqual((20425, 0, 5.0, 1), shape.filling)
        self.assertEqual((None,) * 96, shape.bins)
        self.assertEqual(MONDAY + 100, shape.time)

    def test_a_bin_learns_its_mean_when_the_next_begins(self):
        shape = feed([(MONDAY, 4.0), (MONDAY + 300, 6.0), (MONDAY + 600, 8.0),
                      (MONDAY + BIN, 100.0)])
        self.assertEqual(daily_shape.Bin(6.0, 1, 20425), shape.bins[0])
        self.assertEqual((20425, 1, 100.0, 1), shape.filling)

    def test_a_sample_not_newer_is_ignored(self):
        shape = feed([(MONDAY, 4.0), (MONDAY + 300, 6.0)])
        self.assertIs(shape, daily_shape.update(shape, MONDAY + 300, 99.0))
        self.assertIs(shape, daily_shape.update(shape, MONDAY, 99.0))

    def test_one_whole_day_then_the_next_learns_with_recent_days_heavier(self):
        shape = feed(days(1, lambda s: 10.0) + [(MONDAY + DAY, 0.0)])
        self.assertEqual(1, daily_shape.whole_days(shape))
        self.assertTrue(all(b == daily_shape.Bin(10.0, 1, 20425)
                            for b in shape.bins))
        shape = feed(days(1, lambda s: 20.0, start=MONDAY + DAY)
                     + [(MONDAY + 2 * DAY, 0.0)], shape)
        # Tuesday at 20 against Monday at 10: Tuesday weighs 1, Monday
        # 0.5 ** 0.5 (a day ago over a half-life of two).
        monday = 0.5 ** 0.5
        self.assertEqual(2, daily_shape.whole_days(shape))
        self.assertAlmostEqual(10.0 + 10.0 / (1.0 + monday),
                               shape.bins[40].demand)
        self.assertAlmostEqual(1.0 + monday, shape.bins[40].weight)

    def test_a_day_missing_ages_the_days_before_it(self):
        shape = feed(days(3, lambda s: 10.0, skip=(1,))
                     + [(MONDAY + 3 * DAY, 0.0)])
        self.assertEqual(2, daily_shape.whole_days(shape))
        # Wednesday's weight 1 against Monday's 0.5 (two days ago).
        self.assertAlmostEqual(1.5, shape.bins[0].weight)
        self.assertEqual(20425 + 2, shape.bins[0].day)

    def test_a_day_a_bin_already_holds_changes_nothing(self):
        learnt = daily_shape.Bin(10.0, 2, 20425, 1.7)
        shape = daily_shape.DailyShape(bins=(learnt,) * 96)
        # A new leader that read the bin takes over within it.
        shape = feed([(MONDAY + 600, 50.0), (MONDAY + BIN, 50.0)], shape)
        self.assertIs(learnt, shape.bins[0])

    def test_every_day_learnt_counts(self):
        shape = feed(days(3, lambda s: 10.0) + [(MONDAY + 3 * DAY, 0.0)])
        self.assertEqual(3, daily_shape.whole_days(shape))
        self.assertEqual(3, shape.bins[50].days)
        self.assertEqual(20425 + 2, shape.bins[50].day)

    def test_a_day_before_the_one_a_bin_holds_changes_nothing(self):
        # Bins restored as learnt up to Tuesday, from a leader whose
        # samples are still Monday's (a clock behind the one that wrote
        # them): Monday is not a newer day.
        learnt = daily_shape.Bin(10.0, 2, 20426, 1.7)
        shape = daily_shape.DailyShape(bins=(learnt,) * 96)
        shape = feed([(MONDAY + 600, 50.0), (MONDAY + BIN, 50.0)], shape)
        self.assertIs(learnt, shape.bins[0])
        self.assertEqual({}, daily_shape.changed(
            daily_shape.DailyShape(bins=(learnt,) * 96), shape))

    def test_bins_wrap_at_midnight(self):
        shape = feed(days(1, lambda s: 30.0 if s < 3600 else 10.0)
                     + [(MONDAY + DAY, 0.0)])
        # At 23:50 the next bin centres are 23:52:30 (10) and 00:07:30 (30):
        # the climb is read across midnight.
        t = MONDAY + DAY + DAY - 600
        self.assertAlmostEqual(20.0, daily_shape.rise(shape, t, 1200))
        # Between 23:52:30 and 00:07:30, halfway at midnight.
        self.assertAlmostEqual(20.0, daily_shape._at(shape, MONDAY))

    def test_just_before_a_centre_the_bin_before_is_read(self):
        bins = [daily_shape.Bin(10.0, 1, 0)] * 96
        bins[95] = None
        shape = daily_shape.DailyShape(bins=tuple(bins))
        # Bin 95 (23:45 to midnight) never learnt: up to 00:07:30, bin 0's
        # centre, the shape is read between bins 95 and 0, however little
        # before it; from there on, between bins 0 and 1.  On the epoch's
        # first day, a Monday, and the day 32-bit time runs out (2038-01-19).
        for midnight in (0, MONDAY, 24855 * DAY):
            centre = midnight + BIN / 2
            self.assertIsNone(daily_shape._at(
                shape, math.nextafter(centre, 0)))
            self.assertIsNone(daily_shape.rise(
                shape, math.nextafter(centre, 0), 600))
            self.assertEqual(10.0, daily_shape._at(shape, centre))
            self.assertEqual(0.0, daily_shape.rise(shape, centre, 600))

    def test_a_ramp_is_seen_coming_a_day_later(self):
        shape = feed(days(1, morning) + [(MONDAY + DAY, 10.0)])
        # Tuesday 06:40: the ramp starts at 07:00.  At 07:20 the shape is
        # between the bins 07:00 (12.5 cores at its centre 07:07:30) and
        # 07:15 (20 at 07:22:30): 18.75, 8.75 over now.
        t = MONDAY + DAY + 6 * 3600 + 2400
        self.assertAlmostEqual(10.0, daily_shape._at(shape, t))
        self.assertAlmostEqual(8.75, daily_shape.rise(shape, t, 2400))
        # Falling or flat: no climb.
        self.assertEqual(0.0, daily_shape.rise(shape, t - 3 * 3600, 1800))

    def test_the_highest_point_within_counts_not_only_the_end(self):
        bins = [daily_shape.Bin(10.0, 1, 0)] * 96
        bins[2] = daily_shape.Bin(50.0, 1, 0)
        shape = daily_shape.DailyShape(bins=tuple(bins))
        # From 00:07:30 (bin 0's centre) 45 minutes ahead: bin 2 peaks at
        # 00:37:30, the end (00:52:30, bin 3's centre) is back at 10.
        self.assertAlmostEqual(40.0, daily_shape.rise(shape, 450, 2700))

    def test_a_climb_already_past_is_not_read(self):
        bins = [daily_shape.Bin(10.0, 1, 20425)] * 96
        bins[40] = daily_shape.Bin(50.0, 1, 20425)
        shape = daily_shape.DailyShape(bins=tuple(bins))
        # Tuesday 10:12:30, five minutes past bin 40's peak (at 10:07:30):
        # the shape falls from 36.7 to 10 at 10:22:30, and neither the
        # peak behind nor the bins before it count.
        t = MONDAY + DAY + 40 * BIN + 750
        self.assertAlmostEqual(50.0 - 40.0 / 3, daily_shape._at(shape, t))
        self.assertEqual(0.0, daily_shape.rise(shape, t, 600))
        self.assertEqual(0.0, daily_shape.rise(shape, t, 3 * 3600))

    def test_a_peak_at_the_next_bin_centre_counts(self):
        bins = [daily_shape.Bin(10.0, 1, 20425)] * 96
        bins[41] = daily_shape.Bin(50.0, 1, 20425)
        shape = daily_shape.DailyShape(bins=tuple(bins))
        # Tuesday 10:12:30: a third of the way from bin 40's centre (10)
        # to bin 41's (50, at 10:22:30); 20 minutes ahead the shape is
        # back at 23.3, but it peaked at 50 on the way.
        t = MONDAY + DAY + 40 * BIN + 750
        self.assertAlmostEqual(10.0 + 40.0 / 3, daily_shape._at(shape, t))
        self.assertAlmostEqual(40.0 - 40.0 / 3,
                               daily_shape.rise(shape, t, 1200))
        # Three hours ahead the peak still counts, once.
        self.assertAlmostEqual(40.0 - 40.0 / 3,
                               daily_shape.rise(shape, t, 3 * 3600))
        # A few minutes ahead, short of it: the climb so far.
        self.assertAlmostEqual(40.0 / 3 * 0.5,
                               daily_shape.rise(shape, t, 150))

    def test_a_bin_never_learnt_on_the_way_gives_nothing(self):
        bins = [daily_shape.Bin(10.0, 1, 0)] * 96
        bins[5] = None
        shape = daily_shape.DailyShape(bins=tuple(bins))
        self.assertIsNone(daily_shape.rise(shape, 3 * BIN, 3 * BIN))
        self.assertEqual(0.0, daily_shape.rise(shape, 10 * BIN, 3 * BIN))

    def test_changed_names_the_bins_learnt(self):
        before = feed(days(1, morning))
        after = daily_shape.update(before, MONDAY + DAY, 10.0)
        self.assertEqual({95: after.bins[95]},
                         daily_shape.changed(before, after))
        self.assertEqual({}, daily_shape.changed(after, after))


class RestoreTest(testtools.TestCase):

    def row(self, **changes):
        return dict({'bin': 4, 'seconds': 900, 'demand': 12.5, 'days': 3,
                     'day': 20425, 'weight': 2.2}, **changes)

    def test_stored_bins_come_back(self):
        shape, rejected = daily_shape.restore([self.row(),
                                               self.row(bin=0, demand=0)])
        self.assertEqual([], rejected)
        self.assertEqual(daily_shape.Bin(12.5, 3, 20425, 2.2), shape.bins[4])
        self.assertEqual(daily_shape.Bin(0.0, 3, 20425, 2.2), shape.bins[0])
        self.assertEqual(94, shape.bins.count(None))

    def test_bad_rows_are_left_out_with_why(self):
        bad = [self.row(seconds=600), self.row(bin=96), self.row(bin=-1),
               self.row(bin='4'), self.row(demand=-1.0),
               self.row(demand=math.nan), self.row(demand=None),
               self.row(weight=0.5), self.row(days=0), self.row(day=-3),
               self.row(days=None)]
        shape, rejected = daily_shape.restore(bad + [self.row(bin=7)])
        self.assertEqual(len(bad), len(rejected))
        self.assertEqual(95, shape.bins.count(None))
        self.assertIn('bin 4: bins of 600 s, this code learns 900 s',
                      rejected)
        self.assertIn('bin 96: not a bin of the day (0 to 95)', rejected)
        self.assertIn('bin 4: demand -1.0 is not a number at least 0',
                      rejected)
        self.assertIn('bin 4: weight 0.5 is not a number at least 1',
                      rejected)
        self.assertIn('bin 4: 0 days up to day 20425: no day learnt',
                      rejected)


    def test_the_edges_of_a_usable_row(self):
        # One day learnt, and a day as early as the epoch's, are days.
        good = [self.row(bin=1, days=1), self.row(bin=2, day=0)]
        bad = [self.row(day=-1), self.row(bin=97), self.row(bin=500),
               self.row(seconds=1800), self.row(seconds=None)]
        shape, rejected = daily_shape.restore(good + bad)
        self.assertEqual(len(bad), len(rejected))
        self.assertEqual(daily_shape.Bin(12.5, 1, 20425, 2.2), shape.bins[1])
        self.assertEqual(daily_shape.Bin(12.5, 3, 0, 2.2), shape.bins[2])
        self.assertEqual(94, shape.bins.count(None))
        self.assertIn('bin 4: 3 days up to day -1: no day learnt', rejected)
        self.assertIn('bin 97: not a bin of the day (0 to 95)', rejected)
        self.assertIn('bin 4: bins of 1800 s, this code learns 900 s',
                      rejected)
        self.assertIn('bin 4: bins of None s, this code learns 900 s',
                      rejected)


class OutlookTest(testtools.TestCase):

    def test_without_a_shape_it_is_holts(self):
        state = outlook.Outlook()
        self.assertEqual((0.0, 0.0), outlook.ahead(state, 600))
        holt = forecast.Forecast()
        for n in range(10):
            t = MONDAY + n * 300
            state = outlook.update(state, t, 5.0 + n)
            holt = forecast.update(holt, t, 5.0 + n)
        self.assertEqual(holt, state.holt)
        self.assertEqual(forecast.ahead(holt, 900), outlook.ahead(state, 900))

    def test_a_learnt_ramp_raises_the_forecast_before_it_begins(self):
        state = outlook.Outlook()
        for t, value in days(1, morning) + days(
                1, morning, start=MONDAY + DAY)[:83]:
            state = outlook.update(state, t, value)
        # Tuesday 06:50, flat at 10 since midnight: Holt sees nothing.
        self.assertEqual(MONDAY + DAY + 82 * 300, state.holt.time)
        holt, deviation = forecast.ahead(state.holt, 1320)
        self.assertAlmostEqual(10.0, holt, places=3)
        expected, spread = outlook.ahead(state, 1320)
        self.assertEqual(deviation, spread)
        # At 07:12, between 12.5 (07:07:30) and 20 (07:22:30): 14.75.
        self.assertAlmostEqual(4.75, daily_shape.rise(
            state.shape, state.holt.time, 1320))
        self.assertAlmostEqual(state.holt.level + 4.75, expected)

    def test_a_falling_shape_never_lowers_holts(self):
        falling = [daily_shape.Bin(40.0 - i * 0.4, 1, 0) for i in range(96)]
        state = outlook.Outlook(shape=daily_shape.DailyShape(
            bins=tuple(falling)))
        for n in range(6):
            state = outlook.update(state, MONDAY + 3600 + n * 300,
                                   20.0 + n)
        self.assertEqual(forecast.ahead(state.holt, 1800),
                         outlook.ahead(state, 1800))


    def test_an_outlook_is_immutable(self):
        # A leader compares the shape it had with the one it has now.
        state = outlook.Outlook()
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, state,
                          'shape', daily_shape.DailyShape())

    def test_now_and_behind_read_no_climb(self):
        # Over the morning ramp, seen from 07:30: no time ahead, no climb
        # (a negative horizon reads none either, even of a falling shape).
        state = outlook.Outlook()
        for t, value in days(1, morning) + days(
                1, morning, start=MONDAY + DAY)[:91]:
            state = outlook.update(state, t, value)
        self.assertEqual(forecast.ahead(state.holt, 0),
                         outlook.ahead(state, 0))
        falling = outlook.Outlook(state.holt, daily_shape.DailyShape(
            bins=tuple(daily_shape.Bin(40.0 - i * 0.4, 1, 0)
                       for i in range(96))))
        self.assertEqual(forecast.ahead(state.holt, -600),
                         outlook.ahead(falling, -600))


class PropertyTest(testtools.TestCase):

    @hypothesis.settings(max_examples=60, deadline=None)
    @hypothesis.given(st.lists(st.tuples(
        st.floats(0, 4 * DAY, allow_nan=False),
        st.floats(0, 1000, allow_nan=False)), max_size=60),
        st.sampled_from((300, 900, 3600)))
    def test_learnt_bins_stay_within_the_samples(self, samples, seconds):
        shape = feed([(MONDAY + t, v) for t, v in sorted(samples)],
                     daily_shape.DailyShape(bin_seconds=seconds))
        values = [v for _, v in samples]
        for found in shape.bins:
            if found is not None:
                self.assertGreaterEqual(found.demand, min(values) - 1e-9)
                self.assertLessEqual(found.demand, max(values) + 1e-9)
                self.assertGreaterEqual(found.weight, 1.0)
                self.assertLessEqual(found.days, 5)
        for t in (0, DAY - 1, DAY / 2):
            climb = daily_shape.rise(shape, MONDAY + t, 3600)
            self.assertTrue(climb is None or climb >= 0.0)

    @hypothesis.settings(max_examples=40, deadline=None)
    @hypothesis.given(st.floats(0, DAY, allow_nan=False),
                      st.floats(0, 2 * DAY, allow_nan=False))
    def test_a_flat_day_never_climbs(self, t, seconds):
        shape = daily_shape.DailyShape(bins=(daily_shape.Bin(7.0, 1, 0),)
                                       * 96)
        self.assertAlmostEqual(0.0, daily_shape.rise(shape, MONDAY + t,
                                                     seconds))

    def test_a_restored_shape_learns_on_as_the_one_saved(self):
        samples = days(3, morning)
        whole = feed(samples)
        half = feed(samples[:400])
        rows = [dict(dataclasses.asdict(b), bin=i, seconds=900)
                for i, b in enumerate(half.bins) if b is not None]
        restored, rejected = daily_shape.restore(rows)
        self.assertEqual([], rejected)
        # The bin being filled is not stored: it starts again.
        resumed = feed(samples[400:], restored)
        self.assertEqual(whole.bins[40:], resumed.bins[40:])
