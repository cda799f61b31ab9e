"""A pool's demand by time of day, learnt across days.

Holt's forecast (:mod:`.forecast`) sees a ramp only once it has begun;
a cloud's morning ramp comes at about the same time every day.  The day
is cut into bins of :data:`BIN_SECONDS` on the UTC clock.  The samples of
one bin on one day are averaged; when the bin ends (the next sample falls
in another), that mean is folded into the bin's learnt demand, a mean of
the days weighted ``0.5 ** (days ago / day_halflife)``: recent days weigh
more, and a day missing ages the others as long as it lasted (as
:mod:`.forecast` weighs a missed period).

:func:`rise` reads the shape between two times of day, interpolating
linearly between the centres of neighbouring bins (wrapping at
midnight), only where every bin it reads has been learnt: a pool's first
day learns, the next ones use it.  A bin still being filled is not
learnt: what is learnt is whole bins of past samples.  Pure: the
timestamps are passed in (seconds since the epoch, UTC); the state is
immutable.
"""

import dataclasses
import math
from collections.abc import Iterable
from collections.abc import Mapping

#: Seconds in a day, on the UTC clock the bins follow.
DAY = 86400
#: Seconds of one bin: a quarter of an hour, finer than a boot time
#: ahead needs and coarse enough for a few samples per bin.
BIN_SECONDS = 900
#: Days for a day's weight to halve: yesterday counts most, and a change
#: of habit is learnt within a few days.
DAY_HALFLIFE = 2.0


@dataclasses.dataclass(frozen=True)
class Bin:
    """What one bin has learnt."""

    #: The demand, averaged over days, in the unit of the samples.
    demand: float
    #: Days that fed it.
    days: int
    #: The last of them, as days since the epoch.
    day: int
    #: Their weights' sum, as of :attr:`day` (1 for one day).
    weight: float = 1.0


@dataclasses.dataclass(frozen=True)
class DailyShape:
    """One pool's shape; :func:`update` returns the next."""

    bin_seconds: int = BIN_SECONDS
    day_halflife: float = DAY_HALFLIFE
    #: The learnt bins, by index from midnight; None where none yet.
    bins: tuple = ()
    #: The bin being filled: ``(day, index, sum, samples)``; None before
    #: the first sample.
    filling: tuple | None = None
    #: Time of the newest sample, seconds since the epoch.
    time: float | None = None

    def __post_init__(self):
        if self.bin_seconds <= 0 or DAY % self.bin_seconds:
            raise ValueError(f'a daily shape\'s bins must divide a day: '
                             f'{self.bin_seconds} s does not')
        if not self.bins:
            object.__setattr__(self, 'bins', (None,) * self.per_day)
        elif len(self.bins) != self.per_day:
            raise ValueError(f'{len(self.bins)} bins given, a day of '
                             f'{self.bin_seconds} s bins has '
                             f'{self.per_day}')

    @property
    def per_day(self) -> int:
        return DAY // self.bin_seconds


def _where(shape: DailyShape, t: float) -> tuple[int, int]:
    """``(day, bin index)`` of time ``t``."""
    day, seconds = divmod(t, DAY)
    return int(day), int(seconds // shape.bin_seconds)


def _fold(learnt: Bin | None, mean: float, day: int,
          halflife: float) -> Bin | None:
    """``learnt`` with one more day's mean; a day it already holds (a
    leader that took over within the bin) changes nothing."""
    if learnt is None:
        return Bin(mean, 1, day)
    if day <= learnt.day:
        return learnt
    weight = learnt.weight * 0.5 ** ((day - learnt.day) / halflife) + 1.0
    return Bin(learnt.demand + (mean - learnt.demand) / weight,
               learnt.days + 1, day, weight)


def update(shape: DailyShape, t: float, value: float) -> DailyShape:
    """``shape`` with the sample ``value`` taken at ``t``; a sample not
    newer than the last (read again, or a clock that stepped back) is
    ignored."""
    if shape.time is not None and t <= shape.time:
        return shape
    day, index = _where(shape, t)
    bins = shape.bins
    if shape.filling is not None:
        was_day, was_index, total, samples = shape.filling
        if (was_day, was_index) == (day, index):
            return dataclasses.replace(
                shape, filling=(day, index, total + value, samples + 1),
                time=t)
        bins = list(bins)
        bins[was_index] = _fold(bins[was_index], total / samples, was_day,
                                shape.day_halflife)
        bins = tuple(bins)
    return dataclasses.replace(shape, bins=bins,
                               filling=(day, index, value, 1), time=t)


def whole_days(shape: DailyShape) -> int:
    """Days every bin has learnt from (0 while a bin has none)."""
    return min(b.days if b is not None else 0 for b in shape.bins)


def _at(shape: DailyShape, t: float) -> float | None:
    """The learnt demand at ``t``'s time of day, between the centres of
    the two nearest bins; None where either has learnt nothing."""
    position = (t % DAY) / shape.bin_seconds - 0.5
    below = math.floor(position)
    low = shape.bins[below % shape.per_day]
    high = shape.bins[(below + 1) % shape.per_day]
    if low is None or high is None:
        return None
    share = position - below
    return low.demand + share * (high.demand - low.demand)


def rise(shape: DailyShape, t: float, seconds: float) -> float | None:
    """How far the learnt demand climbs from ``t`` to its highest within
    the next ``seconds`` (0 when it does not climb); None where a bin on
    the way has learnt nothing."""
    now = _at(shape, t)
    if now is None:
        return None
    times = [t + seconds]
    # Linear between bin centres: its highest is at a centre on the way
    # or at the end.
    centre = (math.floor((t % DAY) / shape.bin_seconds - 0.5) + 1.5) \
        * shape.bin_seconds + t - t % DAY
    while centre < t + seconds:
        times.append(centre)
        centre += shape.bin_seconds
    ahead = [_at(shape, when) for when in times]
    if any(value is None for value in ahead):
        return None
    return max(0.0, max(ahead) - now)


def changed(old: DailyShape, new: DailyShape) -> dict[int, Bin]:
    """The bins ``new`` learnt since ``old``, by index: what to store."""
    if old.bins is new.bins:
        return {}
    return {index: found for index, (was, found)
            in enumerate(zip(old.bins, new.bins, strict=True))
            if found is not None and found != was}


def restore(rows: Iterable[Mapping], bin_seconds: int = BIN_SECONDS
            ) -> tuple[DailyShape, list[str]]:
    """A shape from stored bins (``bin``, ``seconds``, ``demand``,
    ``days``, ``day``, ``weight``), and why each row it could not use was
    left out: another bin width, an index outside the day, a demand or
    weight that is not a finite number (at least 0, at least 1), or no
    day."""
    shape = DailyShape(bin_seconds=bin_seconds)
    bins, rejected = list(shape.bins), []
    for row in rows:
        why = _unusable(row, shape)
        if why:
            rejected.append(f'bin {row.get("bin")!r}: {why}')
            continue
        bins[row['bin']] = Bin(float(row['demand']), row['days'],
                               row['day'], float(row['weight']))
    return dataclasses.replace(shape, bins=tuple(bins)), rejected


def _unusable(row: Mapping, shape: DailyShape) -> str:
    """Why a stored bin cannot be used, or ''."""
    if row.get('seconds') != shape.bin_seconds:
        return (f'bins of {row.get("seconds")!r} s, this code learns '
                f'{shape.bin_seconds} s')
    index = row.get('bin')
    if not isinstance(index, int) or not 0 <= index < shape.per_day:
        return f'not a bin of the day (0 to {shape.per_day - 1})'
    for name, least in (('demand', 0.0), ('weight', 1.0)):
        value = row.get(name)
        if (not isinstance(value, (int, float)) or not math.isfinite(value)
                or value < least):
            return f'{name} {value!r} is not a number at least {least:g}'
    days, day = row.get('days'), row.get('day')
    if not isinstance(days, int) or days < 1 or not isinstance(day, int) \
            or day < 0:
        return f'{days!r} days up to day {day!r}: no day learnt'
    return ''
