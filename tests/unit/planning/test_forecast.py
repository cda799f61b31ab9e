"""Holt's linear smoothing of a pool's demand on an irregular clock."""

import dataclasses
import math

import hypothesis
import testtools
from hypothesis import strategies as st

from nova_drs_scheduler.planning import forecast


def feed(samples, state=None):
    state = state or forecast.Forecast()
    for t, value in samples:
        state = forecast.update(state, t, value)
    return state


class ForecastTest(testtools.TestCase):

    def test_the_half_lives_judged_in_doc_rebalancer(self):
        self.assertEqual((300.0, 600.0, 3600.0), (
            forecast.LEVEL_HALFLIFE, forecast.TREND_HALFLIFE,
            forecast.DEVIATION_HALFLIFE))
        self.assertEqual((300.0, 600.0, 3600.0), (
            forecast.Forecast().level_halflife,
            forecast.Forecast().trend_halflife,
            forecast.Forecast().deviation_halflife))

    def test_nothing_known_before_the_first_sample(self):
        self.assertEqual((0.0, 0.0), forecast.ahead(forecast.Forecast(), 60))

    def test_first_sample_is_the_forecast_without_trend_or_spread(self):
        state = feed([(100.0, 42.0)])
        self.assertEqual((1, 100.0), (state.samples, state.time))
        self.assertEqual((42.0, 0.0), forecast.ahead(state, 900))

    def test_second_sample_starts_the_trend_short_of_the_raw_slope(self):
        # Two noisy samples are no evidence of a slope: the trend starts
        # from 0 at the trend's pace, not at (b - a) / dt.
        state = feed([(0.0, 10.0), (300.0, 40.0)])
        beta = 1 - 0.5 ** (300.0 / forecast.TREND_HALFLIFE)
        alpha = 1 - 0.5 ** (300.0 / forecast.LEVEL_HALFLIFE)
        level = 10.0 + alpha * 30.0
        self.assertAlmostEqual(level, state.level)
        self.assertAlmostEqual(beta * (level - 10.0) / 300.0, state.trend)
        self.assertLess(state.trend, 30.0 / 300.0)
        self.assertEqual((900.0, 300.0), (state.variance, state.step))

    def test_learns_a_ramp_and_forecasts_along_it(self):
        slope = 0.01  # points per second: 36 an hour
        state = feed([(t, 20.0 + slope * t) for t in range(0, 36000, 300)])
        self.assertAlmostEqual(slope, state.trend, places=6)
        now = 20.0 + slope * state.time
        expected, deviation = forecast.ahead(state, 900)
        self.assertAlmostEqual(now + slope * 900, expected, places=3)
        # The first errors (3 points, before the trend was learnt) fade
        # on the deviation's half-life: ten of them later, under a tenth.
        self.assertLess(deviation, 0.3)

    def test_irregular_clock_learns_the_same_ramp(self):
        times, t = [], 0.0
        for n in range(200):
            times.append(t)
            t += (60.0, 300.0, 170.0, 900.0)[n % 4]
        state = feed([(t, 5.0 + 0.002 * t) for t in times])
        self.assertAlmostEqual(0.002, state.trend, places=6)
        self.assertAlmostEqual(5.0 + 0.002 * (times[-1] + 600),
                               forecast.ahead(state, 600)[0], places=3)

    def test_a_missed_period_weighs_as_long_as_it_lasted(self):
        # With the trend frozen, one sample after two periods moves the
        # level as far as that value read at each of the two periods.
        frozen = forecast.Forecast(level_halflife=600.0,
                                   trend_halflife=1e15)
        start = feed([(0.0, 10.0)], frozen)
        once = forecast.update(start, 600.0, 50.0)
        twice = feed([(300.0, 50.0), (600.0, 50.0)], start)
        self.assertAlmostEqual(30.0, once.level)
        self.assertAlmostEqual(once.level, twice.level, places=6)

    def test_a_sample_read_again_or_older_changes_nothing(self):
        state = feed([(0.0, 10.0), (300.0, 20.0)])
        self.assertIs(state, forecast.update(state, 300.0, 99.0))
        self.assertIs(state, forecast.update(state, 10.0, 99.0))

    def test_state_is_immutable(self):
        state = feed([(0.0, 10.0)])
        later = forecast.update(state, 300.0, 20.0)
        self.assertEqual((1, 10.0), (state.samples, state.level))
        self.assertEqual(2, later.samples)
        self.assertRaises(dataclasses.FrozenInstanceError, setattr, state,
                          'level', 1.0)

    def test_deviation_is_the_one_step_error_and_grows_ahead(self):
        noisy = [(t * 300.0, 50.0 + (7.0 if t % 2 else -7.0))
                 for t in range(100)]
        state = feed(noisy)
        one = forecast.ahead(state, 300)[1]
        self.assertAlmostEqual(math.sqrt(state.variance), one)
        # Nearer than a step is still one step; never before the sample.
        self.assertEqual(one, forecast.ahead(state, 10)[1])
        self.assertEqual(one, forecast.ahead(state, -5)[1])
        sloped = dataclasses.replace(state, trend=0.5)
        self.assertEqual(sloped.level, forecast.ahead(sloped, 0)[0])
        self.assertEqual(forecast.ahead(sloped, 0),
                         forecast.ahead(sloped, -5))
        self.assertEqual(sloped.level + 5.0, forecast.ahead(sloped, 10)[0])
        self.assertGreater(one, 5.0)
        spreads = [forecast.ahead(state, s)[1] for s in (600, 900, 3600)]
        self.assertEqual(sorted(spreads), spreads)
        self.assertGreater(spreads[0], one)
        # Hyndman's class-1 variance for Holt's method, three steps ahead.
        alpha = 1 - 0.5 ** (300.0 / state.level_halflife)
        beta = 1 - 0.5 ** (300.0 / state.trend_halflife)
        growth = 1 + 2 * (alpha ** 2 + 3 * alpha * beta
                          + beta ** 2 * 3 * 5 / 6)
        self.assertAlmostEqual(one * math.sqrt(growth), spreads[1])
        # And a step and a half ahead, not rounded to whole steps.
        growth = 1 + 0.5 * (alpha ** 2 + 1.5 * alpha * beta
                            + beta ** 2 * 1.5 * 2 / 6)
        self.assertAlmostEqual(one * math.sqrt(growth),
                               forecast.ahead(state, 450)[1])

    def test_variance_and_step_are_weighted_on_their_half_life(self):
        state = feed([(0.0, 10.0), (300.0, 10.0), (900.0, 10.0)])
        # A constant: no error, no trend; the step moves towards 600.
        self.assertEqual((10.0, 0.0, 0.0), (state.level, state.trend,
                                            state.variance))
        weight = 1 - 0.5 ** (600.0 / forecast.DEVIATION_HALFLIFE)
        self.assertAlmostEqual(300.0 + weight * 300.0, state.step)
        state = feed([(0.0, 10.0), (300.0, 16.0), (900.0, 16.0)],
                     forecast.Forecast(deviation_halflife=600.0))
        second = feed([(0.0, 10.0), (300.0, 16.0)],
                      forecast.Forecast(deviation_halflife=600.0))
        error = 16.0 - (second.level + second.trend * 600.0)
        self.assertAlmostEqual(36.0 + 0.5 * (error ** 2 - 36.0),
                               state.variance)

    def test_zero_half_lives_follow_the_newest_sample(self):
        state = feed([(0.0, 10.0), (60.0, 30.0), (120.0, 20.0)],
                     forecast.Forecast(level_halflife=0, trend_halflife=0,
                                       deviation_halflife=0))
        self.assertEqual((20.0, -10.0 / 60.0), (state.level, state.trend))
        # The newest error alone: 20 against 30 + 20 / 60 * 60.
        self.assertEqual((900.0, 60.0), (state.variance, state.step))

    def test_half_lives_shorter_than_a_second_still_weigh(self):
        short = forecast.Forecast(level_halflife=0.5, trend_halflife=1e15)
        state = feed([(0.0, 0.0), (0.25, 100.0)], short)
        self.assertAlmostEqual(100.0 * (1 - 0.5 ** 0.5), state.level)
        # A negative half-life weighs as 0: the newest sample alone.
        negative = forecast.Forecast(level_halflife=-60.0,
                                     trend_halflife=1e15)
        self.assertEqual(100.0, feed([(0.0, 0.0), (60.0, 100.0)],
                                     negative).level)

    @hypothesis.given(st.lists(st.tuples(
        st.floats(1.0, 3600.0), st.floats(0.0, 1000.0)), min_size=1,
        max_size=40))
    def test_finite_and_deterministic(self, steps):
        t, samples = 0.0, []
        for elapsed, value in steps:
            t += elapsed
            samples.append((t, value))
        state = feed(samples)
        self.assertEqual(state, feed(samples))
        for seconds in (0, 660, 3600):
            expected, deviation = forecast.ahead(state, seconds)
            self.assertTrue(math.isfinite(expected))
            self.assertTrue(math.isfinite(deviation))
            self.assertGreaterEqual(deviation, 0.0)
        self.assertEqual(len(samples), state.samples)
