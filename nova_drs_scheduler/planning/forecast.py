"""A pool's demand forecast: Holt's linear smoothing on an irregular clock.

Power management must wake a standby host a boot time *before* the pool
needs it, so it reads where the pool's demand is heading, not only where
it is.  Holt's linear (double exponential) smoothing keeps two numbers: a
*level* (the demand now, smoothed) and a *trend* (its slope, per second).
Each sample first predicts itself from the state before it (level plus
trend times the time since the last sample); the one-step error of that
prediction moves the level by a share ``alpha``, and the level's change
moves the trend by a share ``beta``.  The forecast ``seconds`` ahead is
``level + trend * seconds``.

Irregular clock: the shares come from half-lives in seconds, not from a
fixed step: after ``elapsed`` seconds ``alpha = 1 - 0.5 ** (elapsed /
level_halflife)`` (as :func:`.metrics.ewma` weighs a host's samples), so
a missed period weighs as long as it lasted, and a sample read twice
(same or older time) changes nothing.

Spread: the squared one-step errors are averaged exponentially (on
:data:`DEVIATION_HALFLIFE`) into a *deviation*.  The error ``h`` steps
ahead grows with ``h``; :func:`ahead` scales the one-step deviation by the
standard result for Holt's method under its own error model (Hyndman et al.,
*Forecasting with Exponential Smoothing*, 2008, class 1):
``var(h) = var(1) * (1 + (h - 1) * (alpha**2 + alpha*beta*h +
beta**2 * h * (2h - 1) / 6))``, with ``alpha``/``beta`` at the typical
step (an exponentially weighted mean of the time between samples).

First samples: the first sets the level, with no trend and no deviation
(:func:`ahead` gives the sample itself, deviation 0: the caller still
judges the current value); the trend starts at 0 and is learned at the
trend's pace: two noisy samples are no evidence of a slope.

The half-lives were chosen on the PlanetLab days and a generated
day/night trace (``tools/forecast_check.py``; the figures are in
``doc/power.md``): of the pairs tried (level 300 to 1800 s, trend one
to three times that), the shortest caught the most band crossings a boot
time ahead for the fewest false alarms, and an hour of errors gave a
steadier deviation than the trend's ten minutes.  Pure: no clock; the
state is immutable.
"""

import dataclasses
import math

#: Seconds for a level to keep half its weight: a boot takes minutes, so
#: the level must follow within minutes.
LEVEL_HALFLIFE = 300.0
#: Seconds for a trend to keep half its weight: twice the level's, so one
#: noisy period does not make a slope.
TREND_HALFLIFE = 600.0
#: Seconds for the mean squared error (and the mean step) to keep half
#: their weight: an hour of errors, a steadier spread than a few periods'.
DEVIATION_HALFLIFE = 3600.0


@dataclasses.dataclass(frozen=True)
class Forecast:
    """One pool's smoothing state; :func:`update` returns the next."""

    level_halflife: float = LEVEL_HALFLIFE
    trend_halflife: float = TREND_HALFLIFE
    deviation_halflife: float = DEVIATION_HALFLIFE
    #: Time of the newest sample, seconds on the caller's clock.
    time: float | None = None
    #: Smoothed demand at :attr:`time`, in the unit of the samples.
    level: float = 0.0
    #: Its slope, unit per second.
    trend: float = 0.0
    #: Exponentially weighted mean squared one-step error; None before
    #: the first error (one sample).
    variance: float | None = None
    #: Exponentially weighted mean seconds between samples.
    step: float = 0.0
    samples: int = 0


def _share(elapsed: float, halflife: float) -> float:
    """The weight a sample ``elapsed`` seconds after the last one gets; a
    half-life of 0 (or less) gives the newest sample all of it."""
    if halflife <= 0:
        return 1.0
    return 1.0 - 0.5 ** (elapsed / halflife)


def update(state: Forecast, t: float, value: float) -> Forecast:
    """``state`` with the sample ``value`` taken at time ``t`` (seconds).

    A sample not newer than the last is the same reading again (or a clock
    that stepped back) and is ignored.
    """
    if state.time is None:  # A fresh state: no trend, no spread yet.
        return dataclasses.replace(state, time=t, level=value, samples=1)
    elapsed = t - state.time
    if elapsed <= 0:
        return state
    predicted = state.level + state.trend * elapsed
    error = value - predicted
    level = predicted + _share(elapsed, state.level_halflife) * error
    beta = _share(elapsed, state.trend_halflife)
    trend = (beta * (level - state.level) / elapsed
             + (1.0 - beta) * state.trend)
    if state.variance is None:
        variance, step = error * error, elapsed
    else:
        weight = _share(elapsed, state.deviation_halflife)
        variance = state.variance + weight * (error * error - state.variance)
        step = state.step + weight * (elapsed - state.step)
    return dataclasses.replace(state, time=t, level=level, trend=trend,
                               variance=variance, step=step,
                               samples=state.samples + 1)


def ahead(state: Forecast, seconds: float) -> tuple[float, float]:
    """``(expected, deviation)`` of the demand ``seconds`` after the newest
    sample, in the samples' unit; ``(0.0, 0.0)`` with no sample yet."""
    if state.time is None:
        return 0.0, 0.0
    seconds = max(seconds, 0.0)
    expected = state.level + state.trend * seconds
    if state.variance is None:
        return expected, 0.0
    # A variance comes with a step: both start at the second sample.
    steps = max(seconds / state.step, 1.0)
    alpha = _share(state.step, state.level_halflife)
    beta = _share(state.step, state.trend_halflife)
    growth = 1.0 + (steps - 1.0) * (
        alpha * alpha + alpha * beta * steps
        + beta * beta * steps * (2.0 * steps - 1.0) / 6.0)
    return expected, math.sqrt(state.variance * growth)
