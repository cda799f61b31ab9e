"""Per-VM CPU traces: loading the two accepted formats, and a generator.

A trace value is the CPU a VM used during one step, in percent of the VM's
*own* vCPUs (0-100), as in the PlanetLab/CoMon data; the cluster model
turns it into cores with the VM's flavor.  Formats:

- ``planetlab``: one row per VM, ``name,v0,v1,...``, with an optional header
  row (``vm,t000,t001,...``);
- ``generic``: one row per step and one column per VM, with a header row of
  VM names; a first column headed ``time``/``timestamp``/``step`` (or empty)
  is an index and is skipped.

Bad input raises :class:`TraceError` naming the file, the line and the
problem, so a user never has to guess why a trace was refused.
"""

import csv
import dataclasses
import math
import random
import re

FORMATS = ('auto', 'planetlab', 'generic')
_INDEX_COLUMNS = ('', 'time', 'timestamp', 'timestep', 'step')
_STEP_LABEL = re.compile(r'^t\d+$', re.IGNORECASE)


class TraceError(ValueError):
    """A trace file that cannot be used; the message says where and why."""


@dataclasses.dataclass(frozen=True)
class Trace:
    names: tuple
    #: ``steps[t][i]``: CPU of VM ``names[i]`` at step t, percent of its
    #: own vCPUs.
    steps: tuple
    step_seconds: int = 300

    def __post_init__(self):
        if not self.names or not self.steps:
            raise TraceError('a trace needs at least one VM and one step')

    def head(self, count: int) -> 'Trace':
        """The first ``count`` steps, for short runs."""
        return dataclasses.replace(self, steps=self.steps[:count])


def _value(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TraceError(f'{where}: {text!r} is not a number')
    if not math.isfinite(value) or not 0.0 <= value <= 100.0:
        raise TraceError(f'{where}: {text!r} is not a percentage (0-100)')
    return value


def _unique(names: list, path: str) -> tuple:
    seen = set()
    for name in names:
        if not name:
            raise TraceError(f'{path}: empty VM name')
        if name in seen:
            raise TraceError(f'{path}: VM {name!r} appears twice')
        seen.add(name)
    return tuple(names)


def _is_planetlab_header(row: list) -> bool:
    return len(row) > 1 and all(_STEP_LABEL.match(c.strip())
                                for c in row[1:])


def _planetlab(rows: list, path: str) -> tuple:
    first = 1 if _is_planetlab_header(rows[0]) else 0
    names, series = [], []
    width = None
    for lineno, row in enumerate(rows[first:], start=first + 1):
        if width is None:
            width = len(row)
        if len(row) != width:
            raise TraceError(f'{path}:{lineno}: {len(row) - 1} samples, '
                             f'expected {width - 1} like the first VM')
        if width < 2:
            raise TraceError(f'{path}:{lineno}: a VM row needs a name and '
                             f'at least one sample')
        names.append(row[0].strip())
        series.append([_value(v, f'{path}:{lineno}') for v in row[1:]])
    if not series:
        raise TraceError(f'{path}: no VM rows')
    return _unique(names, path), tuple(zip(*series, strict=True))


def _generic(rows: list, path: str) -> tuple:
    header = [c.strip() for c in rows[0]]
    skip = 1 if header[0].lower() in _INDEX_COLUMNS else 0
    names = _unique(header[skip:], path)
    if not names:
        raise TraceError(f'{path}:1: the header names no VM')
    steps = []
    for lineno, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise TraceError(f'{path}:{lineno}: {len(row)} columns, the '
                             f'header has {len(header)}')
        steps.append(tuple(_value(v, f'{path}:{lineno}')
                           for v in row[skip:]))
    if not steps:
        raise TraceError(f'{path}: no sample rows after the header')
    return names, tuple(steps)


def detect_format(rows: list) -> str:
    """PlanetLab when rows are VMs (step-labelled header or a name first).

    A generic file's header is all VM names, so its second cell is never a
    step label or a number; a PlanetLab row's second cell always is.
    """
    head = rows[0]
    if _is_planetlab_header(head):
        return 'planetlab'
    if len(head) > 1:
        try:
            float(head[1])
        except ValueError:
            return 'generic'
        return 'planetlab'
    raise TraceError('cannot tell the format of a one-column file')


def load(path: str, fmt: str = 'auto', step_seconds: int = 300) -> Trace:
    """Read a trace file in one of :data:`FORMATS`."""
    if fmt not in FORMATS:
        raise TraceError(f'unknown trace format {fmt!r}; use one of '
                         f'{", ".join(FORMATS)}')
    try:
        with open(path, newline='') as stream:
            rows = [row for row in csv.reader(stream) if row]
    except OSError as exc:
        raise TraceError(f'{path}: {exc.strerror}')
    except (csv.Error, UnicodeDecodeError) as exc:
        raise TraceError(f'{path}: not a CSV file ({exc})')
    if not rows:
        raise TraceError(f'{path}: empty file')
    try:
        fmt = detect_format(rows) if fmt == 'auto' else fmt
    except TraceError as exc:
        raise TraceError(f'{path}: {exc}')
    reader = _planetlab if fmt == 'planetlab' else _generic
    names, steps = reader(rows, path)
    return Trace(names=names, steps=steps, step_seconds=step_seconds)


def _vm_series(rng: random.Random, steps: int, per_day: int) -> list:
    """One VM: heavy-tailed mean, diurnal swing, noise and on/off bursts.

    Calibrated on the shape of PlanetLab (median VM mean ~7 %, a tail of
    VMs busy most of the day, weak step-to-step correlation, rare spikes).
    """
    mean = min(rng.lognormvariate(math.log(7.0), 1.1), 90.0)
    swing = rng.uniform(0.0, 0.6) * mean
    phase = rng.uniform(0.0, 2 * math.pi)
    burst_level = rng.paretovariate(1.5) * 15.0
    burst_start, burst_stop = 0.01, 0.25
    bursting = False
    series = []
    for step in range(steps):
        bursting = (rng.random() < burst_start if not bursting
                    else rng.random() >= burst_stop)
        diurnal = swing * math.sin(2 * math.pi * step / per_day + phase)
        value = (mean + diurnal + rng.gauss(0.0, 0.5 * mean)
                 + (burst_level if bursting else 0.0))
        series.append(round(min(max(value, 0.0), 100.0), 1))
    return series


#: Shapes of :func:`synthetic` traces.  ``planetlab``: every VM on its own
#: daily phase (hosts rarely peak together).  ``shared-peak``: on top of
#: that, every VM peaks around midday, so the whole cluster is hot at
#: once and no host can take load.  ``staggered``: each VM peaks at one of
#: four times of day, 6 hours apart, so a host's peak depends on its mix.
#: ``day-night``: every VM's load follows the cluster's day, lowest at
#: 03:00 and highest at 15:00 (:data:`DAY_NIGHT`): what power management
#: is for.  ``steps``: most VMs hold steady, and at given hours a share of
#: them steps up and stays there (:func:`steps`): a cluster that warms and
#: stays warm.
SHAPES = ('planetlab', 'shared-peak', 'staggered', 'day-night', 'steps')
#: Peak multiplier on a VM's load at the top of its peak, and the peak's
#: width (standard deviation of a Gaussian bump), in hours.
PEAK_HEIGHT = 0.8
PEAK_HOURS = 2.0


#: Multiplier of every VM's load at night (03:00) and by day (15:00) in
#: the ``day-night`` shape; a cosine in between.
DAY_NIGHT = (0.3, 1.5)
DAY_NIGHT_TROUGH = 3.0


def _day_night(hour: float, _centre: float) -> float:
    """Multiplier of a VM's load at ``hour`` in the ``day-night`` shape."""
    night, day = DAY_NIGHT
    rise = (1.0 - math.cos(2 * math.pi * (hour - DAY_NIGHT_TROUGH) / 24.0))
    return night + (day - night) * rise / 2.0


def _peak(hour: float, centre: float) -> float:
    """Multiplier of a VM's load at ``hour`` for a daily peak at
    ``centre`` (hours, wrapping around midnight)."""
    distance = min(abs(hour - centre), 24.0 - abs(hour - centre))
    return 1.0 + PEAK_HEIGHT * math.exp(-0.5 * (distance / PEAK_HOURS) ** 2)


#: Day-to-day noise of the shapes that bend every VM's load by the hour
#: (all but ``planetlab`` and ``steps``), from the second day on (the
#: first is as a one-day trace): each day the bend is shifted by up to
#: :data:`DAY_SHIFT_HOURS` either way and its load scaled by a factor of
#: mean 1 and standard deviation :data:`DAY_LEVEL_NOISE`, so that a day
#: is like the one before, not the same.
DAY_SHIFT_HOURS = 0.5
DAY_LEVEL_NOISE = 0.05


def _days(count: int, seed: int) -> list:
    """``(shift hours, level factor)`` of each of ``count`` days."""
    rng = random.Random(f'{seed}-days')
    return [(0.0, 1.0)] + [
        (rng.uniform(-DAY_SHIFT_HOURS, DAY_SHIFT_HOURS),
         max(0.0, rng.gauss(1.0, DAY_LEVEL_NOISE)))
        for _ in range(count - 1)]


def _peak_centres(shape: str, vms: int, seed: int) -> list:
    if shape in ('shared-peak', 'day-night'):
        return [12.0] * vms
    rng = random.Random(f'{seed}-peaks')
    return [rng.choice((3.0, 9.0, 15.0, 21.0)) for _ in range(vms)]


#: The ``steps`` shape: a VM holds a level drawn as :func:`_vm_series`
#: draws its mean (heavy-tailed, median 7 %), with Gaussian noise of
#: :data:`STEADY_NOISE` points of its own vCPUs; :data:`STEP_SHARE` of the
#: VMs, dealt evenly over :data:`STEP_HOURS`, step at that hour to a level
#: in :data:`STEP_LEVEL` and hold it, with the same noise, to the end.
#: Sized for its mean (60 %), a cluster starts the day at about 45 % and
#: ends it at about 76 %: warm, with little room under 75 %.
STEADY_NOISE = 2.0
STEP_LEVEL = (85.0, 100.0)
STEP_SHARE = 0.12
STEP_HOURS = (8.0, 16.0)


def step_series(vms: int, count: int, seed: int, step_seconds: int = 300,
                hours: tuple = STEP_HOURS,
                share: float = STEP_SHARE) -> list:
    """Per VM, ``count`` values of the ``steps`` shape (see
    :data:`STEP_SHARE`): a load that rises and stays, unlike a burst."""
    rng = random.Random(f'{seed}-steps')
    levels = [min(rng.lognormvariate(math.log(7.0), 1.1), 90.0)
              for _ in range(vms)]
    starts = [count] * vms
    order = list(range(vms))
    rng.shuffle(order)
    stepping = order[:round(share * vms)]
    for index, hour in enumerate(sorted(hours)):
        start = min(count, math.ceil(hour * 3600.0 / step_seconds))
        for vm in stepping[index::len(hours)]:
            starts[vm] = start
    raised = [rng.uniform(*STEP_LEVEL) for _ in range(vms)]
    return [[round(min(max((raised[vm] if step >= starts[vm]
                            else levels[vm])
                           + rng.gauss(0.0, STEADY_NOISE), 0.0), 100.0), 1)
             for step in range(count)] for vm in range(vms)]


def synthetic(vms: int, steps: int, seed: int,
              step_seconds: int = 300, shape: str = 'planetlab',
              step_hours: tuple = STEP_HOURS,
              step_share: float = STEP_SHARE) -> Trace:
    """A reproducible PlanetLab-like trace, so the benchmark ships no data.

    Longer than a day, it repeats the day with day-to-day noise (see
    :data:`DAY_SHIFT_HOURS`).  ``step_hours`` and ``step_share``: the
    ``steps`` shape's (see :func:`step_series`).
    """
    if vms < 1 or steps < 1:
        raise TraceError('a synthetic trace needs at least 1 VM and 1 step')
    if shape not in SHAPES:
        raise TraceError(f'unknown synthetic shape {shape!r}; use one of '
                         f'{", ".join(SHAPES)}')
    rng = random.Random(seed)
    per_day = max(1, 86400 // step_seconds)
    if shape == 'steps':
        series = step_series(vms, steps, seed, step_seconds, step_hours,
                             step_share)
    else:
        series = [_vm_series(rng, steps, per_day) for _ in range(vms)]
    if shape not in ('planetlab', 'steps'):
        days = _days(math.ceil(steps / per_day), seed)
        # Each step's hour of the day, shifted as its day is, and its
        # day's level factor.
        hours, factors = [], []
        for step in range(steps):
            shift, factor = days[step // per_day]
            hours.append((step * step_seconds / 3600.0 - shift) % 24.0)
            factors.append(factor)
        bend = _day_night if shape == 'day-night' else _peak
        series = [[round(min(value * factor * bend(hour, centre), 100.0), 1)
                   for value, hour, factor in zip(values, hours, factors,
                                                  strict=True)]
                  for values, centre in zip(
                      series, _peak_centres(shape, vms, seed), strict=True)]
    width = len(str(vms - 1))
    names = tuple(f'vm-{i:0{width}d}' for i in range(vms))
    return Trace(names=names, steps=tuple(zip(*series, strict=True)),
                 step_seconds=step_seconds)


#: Bursts added by :func:`with_bursts`: chance per VM and minute that one
#: starts, its length in minutes, and the percentage points it adds.
BURST_START = 0.01
BURST_MINUTES = (1, 3)
BURST_POINTS = (40.0, 90.0)


def with_bursts(trace: Trace, seed: int) -> Trace:
    """``trace`` at 60 s steps (each step held) with short bursts added.

    Real ``cpu.percent`` samples come every minute and show bursts of one
    to three minutes that 5-minute traces average away; a trigger must not
    chase them.  Each VM starts a burst with probability
    :data:`BURST_START` per minute, lasting 1-3 minutes.
    """
    if trace.step_seconds % 60:
        raise TraceError(f'cannot add 1-minute bursts to steps of '
                         f'{trace.step_seconds} s (not whole minutes)')
    hold = trace.step_seconds // 60
    rng = random.Random(f'{seed}-bursts')
    minutes = len(trace.steps) * hold
    columns = []
    for index in range(len(trace.names)):
        column = [trace.steps[minute // hold][index]
                  for minute in range(minutes)]
        minute = 0
        while minute < minutes:
            if rng.random() < BURST_START:
                length = rng.randint(*BURST_MINUTES)
                points = rng.uniform(*BURST_POINTS)
                for burst in range(minute, min(minute + length, minutes)):
                    column[burst] = round(min(column[burst] + points, 100.0),
                                          1)
                minute += length
            minute += 1
        columns.append(column)
    return Trace(names=trace.names, steps=tuple(zip(*columns, strict=True)),
                 step_seconds=60)
