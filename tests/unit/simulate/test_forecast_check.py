"""How tools/forecast_check.py judges a forecast with the daily shape,
and counts only after the days that teach it."""

import testtools

from tests import tool_scripts

STEP = 300.0
DAY = 288


def ramp_days(count):
    """10 cores at night, 40 from 08:00, a ramp from 07:00, every day."""
    return [10.0 + 30.0 * min(1.0, max(0.0, (n % DAY) / 12 - 7.0))
            for n in range(count * DAY)]


class ForecastCheckTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.check = tool_scripts.load('forecast_check')

    def made(self, method, series):
        return self.check.forecasts(series, STEP, method, 300.0, 600.0,
                                    900.0)

    def test_the_shape_is_holts_on_the_first_day_and_earlier_after(self):
        series = ramp_days(2)
        holt, shaped = self.made('holt', series), self.made('holt+shape',
                                                            series)
        self.assertEqual(holt[:DAY], shaped[:DAY])
        # 06:50 on the second day: flat since midnight, Holt sees 10; the
        # shape sees the ramp 15 minutes ahead, at 07:05: between 10 at
        # 06:52:30 and the 07:00 bin's 12.5 at 07:07:30.
        at = DAY + 82
        self.assertAlmostEqual(10.0, holt[at][0], places=3)
        self.assertAlmostEqual(10.0 + 2.5 * 12.5 / 15, shaped[at][0],
                               places=3)

    def test_the_ramp_is_caught_a_boot_ahead_only_with_the_shape(self):
        series = ramp_days(2)
        lead, reach, quiet = 2, 3, 12
        found = {method: self.check.judge(
            series, self.made(method, series), 20.0, lead, reach, quiet,
            0.0, start=DAY) for method in ('holt', 'holt+shape')}
        # One crossing counted (the second day's), the first day's not.
        self.assertEqual((1, 0), found['holt'][:2])
        self.assertEqual((1, 1), found['holt+shape'][:2])
        self.assertEqual(0, found['holt+shape'][2])
        self.assertEqual(2, self.check.judge(
            series, self.made('holt', series), 20.0, lead, reach, quiet,
            0.0)[0])
