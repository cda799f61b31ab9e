"""A pool's demand outlook: Holt's forecast, raised where the day rises.

Holt's smoothing (:mod:`.forecast`) follows a ramp once it has begun;
the daily shape (:mod:`.daily_shape`) knows when it begins.  Power
management must never be short of hosts, and a host woken early costs
only its idle power, so the outlook ``seconds`` ahead is Holt's, or,
where the learnt shape climbs within those seconds, today's level plus
that climb when it is higher.  Where the shape falls or is not learnt,
Holt's alone: a shape never hastens a standby.  The deviation is Holt's
(the spread of its one-step errors).  Pure, like both.
"""

import dataclasses

from nova_drs_scheduler.planning import daily_shape
from nova_drs_scheduler.planning import forecast


@dataclasses.dataclass(frozen=True)
class Outlook:
    """One pool's forecast and daily shape; :func:`update` returns the
    next."""

    holt: forecast.Forecast = forecast.Forecast()
    shape: daily_shape.DailyShape = daily_shape.DailyShape()


def update(state: Outlook, t: float, value: float) -> Outlook:
    """``state`` with the sample ``value`` taken at ``t`` (seconds since
    the epoch, UTC: the shape's bins follow the UTC day)."""
    return Outlook(forecast.update(state.holt, t, value),
                   daily_shape.update(state.shape, t, value))


def ahead(state: Outlook, seconds: float) -> tuple[float, float]:
    """``(expected, deviation)`` of the demand ``seconds`` after the newest
    sample (see the module's docstring)."""
    expected, deviation = forecast.ahead(state.holt, seconds)
    if state.holt.time is None:
        return expected, deviation
    climb = daily_shape.rise(state.shape, state.holt.time, max(seconds, 0.0))
    if climb:
        expected = max(expected, state.holt.level + climb)
    return expected, deviation
