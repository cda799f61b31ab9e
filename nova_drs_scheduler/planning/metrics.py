"""Sliding windows and stabilization counters: when is a host violated.

This is the seed design, kept exactly:

- each host keeps a window of its last ``window`` samples, averaged;
- once per rebalance period, a host whose average is over its threshold
  gets its counter incremented; one period under the threshold resets it;
- the host is *violated* when the counter reaches ``stabilization`` and
  again at every multiple of it, so a sustained overload is acted on every
  ``stabilization`` periods, never a spike shorter than that.

A host is *over* when its CPU average is above its CPU threshold **or** its
RAM average is above its RAM threshold: both are resources a live migration
relieves, and an operator who only wants CPU sets ``ram_threshold`` to 100.
CPU is required, RAM is optional (no RAM sample: only CPU is judged).

Staleness: a sample older than ``max_age`` seconds is ignored.  When a
host's newest sample is stale (or it has none) it is not judged: its window
and counter are cleared and its status has ``cpu_percent=None``, which the
planner reads as "neither a source nor a destination".  Clearing is the
conservative choice: after an outage a host must show a full stabilization
again before it is acted on.

Expected load: besides the window, each host keeps an exponentially
weighted mean of its CPU samples with a half-life of ``halflife`` seconds
(:func:`ewma`), the load it is expected to carry over the next periods
whatever the newest sample says (``HostSnapshot.cpu_expected``);
``halflife = 0`` turns it off.  With it goes an exponentially weighted
standard deviation of the samples around that mean, on the same
half-life (the root of :func:`ewm_variance`, ``HostSnapshot.cpu_deviation``):
how far the host strays from its usual load.  Bursty hosts get a large
one, smooth hosts a small one; a host that just received (or sent) an
instance too, for about a half-life, as the step shows up as spread and
then fades.

Rises: a *rise* is a period whose CPU average is at least ``rise_points``
(``[drs] level_rise_points``) above the period before: load that arrives
in one step, faster than any reaction to a violation.  Each host keeps an
exponentially weighted rate of them, per hour, with a half-life of
``rise_halflife`` seconds (``HostSnapshot.rise_rate``; ``rise_halflife =
0`` turns it off): the evidence the planner's leveling waits for
(``planner``).  It measures the workload, not the planner: moves change
where load sits, not how often it jumps.

Contention: a sample may carry the cores of demand that waited for a CPU
(``HostSample.cpu_waiting``), what a CPU capped at 100 % cannot show.  It
is averaged over the window as CPU is, but only while the newest sample
has it: a host whose source stopped measuring it is seen by its CPU alone
at once, not by an old average (``HostStatus.cpu_waiting`` None).

Time is explicit: :meth:`MetricsWindows.update` takes ``now`` in seconds on
the same clock as the samples' timestamps (wall clock live, simulated time in
the simulator), and nothing here reads a clock.
"""

import collections
import dataclasses
import math
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True)
class HostSample:
    """One measurement of a host, as a metric source returns it."""

    #: Seconds, on the caller's clock (e.g. the Unix epoch).
    timestamp: float
    #: Percent of the host's physical CPUs.
    cpu_percent: float
    #: Percent of the host's physical memory; None when unknown.
    ram_percent: float | None = None
    #: CPU demand that waited for a CPU, in cores (PSI, or its instances'
    #: vCPU wait): what ``cpu_percent``, capped at 100, cannot show; None
    #: when the source does not measure it.
    cpu_waiting: float | None = None


@dataclasses.dataclass(frozen=True)
class HostStatus:
    """A host's judged state after one period, ready for a HostSnapshot."""

    host: str
    #: Window averages; cpu_percent is None when metrics are stale/missing.
    cpu_percent: float | None
    ram_percent: float | None
    counter: int
    #: CPU samples of the window, oldest first.
    window: tuple
    violated: bool
    reason: str
    #: Exponentially weighted mean of the CPU samples; None when off.
    cpu_expected: float | None = None
    #: Exponentially weighted standard deviation of the CPU samples around
    #: ``cpu_expected``, points; None when off.
    cpu_deviation: float | None = None
    #: Rises per hour, exponentially weighted; None when off.
    rise_rate: float | None = None
    #: Window average of ``HostSample.cpu_waiting``, cores; None when the
    #: newest sample has none (the host is then seen by its CPU alone).
    cpu_waiting: float | None = None


def is_over(cpu: float, ram: float | None, cpu_threshold: float,
            ram_threshold: float) -> bool:
    """Over when either resource is strictly above its threshold."""
    return cpu > cpu_threshold or (ram is not None and ram > ram_threshold)


def is_violated(counter: int, stabilization: int) -> bool:
    """True at ``stabilization`` consecutive periods over, and every
    multiple of it."""
    return counter >= stabilization and counter % stabilization == 0


#: Reason of a host without a fresh CPU sample.
NOT_JUDGED = 'no fresh CPU metrics: not judged'


def judgement(cpu: float | None, ram: float | None, cpu_threshold: float,
              ram_threshold: float, counter: int, stabilization: int,
              samples: int) -> str:
    """The human-readable why of a verdict, shared by windows and planner."""
    if cpu is None:
        return NOT_JUDGED
    parts = [f'cpu {cpu:.1f}% {">" if cpu > cpu_threshold else "<="} '
             f'{cpu_threshold:g}%']
    if ram is not None:
        parts.append(f'ram {ram:.1f}% {">" if ram > ram_threshold else "<="}'
                     f' {ram_threshold:g}%')
    head = ', '.join(parts)
    if samples:
        head += f' (average of {samples} samples)'
    if not is_over(cpu, ram, cpu_threshold, ram_threshold):
        return f'{head}: under threshold'
    if is_violated(counter, stabilization):
        return (f'{head}: over for {counter} periods, stabilization '
                f'{stabilization}: violated')
    next_at = (counter // stabilization + 1) * stabilization
    return (f'{head}: over for {counter} periods, stabilization '
            f'{stabilization}: not violated until {next_at}')


class _HostWindow:
    __slots__ = ('samples', 'counter', 'expected', 'variance', 'previous',
                 'rises')

    def __init__(self, size: int):
        self.samples = collections.deque(maxlen=size)
        self.counter = 0
        self.expected = None
        self.variance = None
        #: The CPU average of the last period, and the rise rate.
        self.previous = None
        self.rises = 0.0


class MetricsWindows:
    """Per-host windows and counters, updated once per rebalance period."""

    def __init__(self, window: int, stabilization: int, max_age: float,
                 cpu_threshold: float, ram_threshold: float,
                 halflife: float = 0.0, rise_points: float = 10.0,
                 rise_halflife: float = 0.0):
        if window < 1 or stabilization < 1:
            raise ValueError('window and stabilization must be >= 1')
        self.halflife = halflife
        self.rise_points = rise_points
        self.rise_halflife = rise_halflife
        self.window = window
        self.stabilization = stabilization
        self.max_age = max_age
        self.cpu_threshold = cpu_threshold
        self.ram_threshold = ram_threshold
        self._hosts: dict[str, _HostWindow] = {}

    def update(self, now: float,
               samples: Mapping[str, HostSample | None],
               thresholds: Mapping[str, tuple[float, float]] | None = None,
               ) -> dict[str, HostStatus]:
        """Advance one period and return every tracked host's status.

        ``samples`` maps each host tracked this period to its latest sample
        (None when the source had none); hosts left out are forgotten.  A
        sample whose timestamp is not newer than the last one kept is the
        same measurement read again and is not added twice, but the counter
        still advances: it counts periods, not samples.  ``thresholds``
        gives per-host ``(cpu, ram)`` overrides (aggregate metadata).
        """
        thresholds = thresholds or {}
        for gone in [h for h in self._hosts if h not in samples]:
            del self._hosts[gone]
        statuses = {}
        for host in sorted(samples):
            state = self._hosts.get(host)
            if state is None:
                state = self._hosts[host] = _HostWindow(self.window)
            cpu_thr, ram_thr = thresholds.get(
                host, (self.cpu_threshold, self.ram_threshold))
            statuses[host] = self._advance(
                host, state, samples[host], now, cpu_thr, ram_thr)
        return statuses

    def restart(self, hosts) -> None:
        """Forget ``hosts``' windows, counters and trends.

        For hosts being drained: they are not judged, and the fall of
        their load as they empty is no history for when they are back (a
        deviation learnt from it would keep a host just back from
        maintenance from taking the next host's instances).
        """
        for host in hosts:
            self._hosts.pop(host, None)

    def export(self) -> dict:
        """The windows and counters as plain JSON-able data.

        Saved with each decision record, so that a restarted scheduler and
        the ``nova-drs plan`` dry run continue from the same state instead
        of starting every counter from zero.
        """
        exported = {}
        for host, state in sorted(self._hosts.items()):
            exported[host] = {'counter': state.counter, 'samples': [
                [s.timestamp, s.cpu_percent, s.ram_percent]
                + ([] if s.cpu_waiting is None else [s.cpu_waiting])
                for s in state.samples]}
            if state.expected is not None:
                exported[host]['expected'] = state.expected
                exported[host]['variance'] = state.variance
            if state.previous is not None:
                exported[host]['previous'] = state.previous
                exported[host]['rises'] = state.rises
        return exported

    def restore(self, exported: Mapping) -> None:
        """Load what :meth:`export` produced; bad entries are skipped.

        Staleness still applies at the next :meth:`update`: samples older
        than ``max_age`` are dropped then, with their counter.
        """
        for host, data in (exported or {}).items():
            try:
                state = _HostWindow(self.window)
                # The fourth value, contention, only when measured.
                for timestamp, cpu, ram, *waiting in data['samples']:
                    state.samples.append(HostSample(
                        float(timestamp), float(cpu),
                        None if ram is None else float(ram),
                        _optional(waiting[0] if waiting else None)))
                state.counter = max(0, int(data['counter']))
                expected = data.get('expected')
                if expected is not None and state.samples:
                    state.expected = float(expected)
                    state.variance = max(
                        0.0, float(data.get('variance') or 0.0))
                previous = data.get('previous')
                if previous is not None and state.samples:
                    state.previous = float(previous)
                    state.rises = max(
                        0.0, float(data.get('rises') or 0.0))
            except (KeyError, TypeError, ValueError):
                continue
            self._hosts[host] = state

    def _fresh(self, sample: HostSample | None, now: float) -> bool:
        return sample is not None and now - sample.timestamp <= self.max_age

    def _advance(self, host, state, sample, now, cpu_thr, ram_thr):
        last = state.samples[-1] if state.samples else None
        elapsed = None
        if self._fresh(sample, now) and (
                last is None or sample.timestamp > last.timestamp):
            state.samples.append(sample)
            elapsed = sample.timestamp - last.timestamp if last else 0.0
            if self.halflife > 0:
                state.variance = ewm_variance(
                    state.expected, state.variance, sample.cpu_percent,
                    elapsed, self.halflife)
                state.expected = ewma(state.expected, sample.cpu_percent,
                                      elapsed, self.halflife)
            last = sample
        if not self._fresh(last, now):
            state.samples.clear()
            state.counter = 0
            state.expected = state.variance = state.previous = None
            state.rises = 0.0
            return HostStatus(host, None, None, 0, (), False, NOT_JUDGED)
        cpu = _mean([s.cpu_percent for s in state.samples])
        ram = _mean([s.ram_percent for s in state.samples
                     if s.ram_percent is not None])
        waiting = None if last.cpu_waiting is None else _mean(
            [s.cpu_waiting for s in state.samples
             if s.cpu_waiting is not None])
        if is_over(cpu, ram, cpu_thr, ram_thr):
            state.counter += 1
        else:
            state.counter = 0
        if elapsed is not None and self.rise_halflife > 0:
            rise = (state.previous is not None
                    and cpu - state.previous >= self.rise_points)
            state.rises = event_rate(state.rises, rise, elapsed,
                                     self.rise_halflife)
        state.previous = cpu
        return HostStatus(
            host, cpu, ram, state.counter,
            tuple(s.cpu_percent for s in state.samples),
            is_violated(state.counter, self.stabilization),
            judgement(cpu, ram, cpu_thr, ram_thr, state.counter,
                      self.stabilization, len(state.samples)),
            state.expected,
            None if state.variance is None else math.sqrt(state.variance),
            state.rises if self.rise_halflife > 0 else None, waiting)


class LoadTrends(Mapping):
    """Each instance's load, exponentially weighted: its expected load and
    how far it swings (cores), on the hosts' half-life.

    A mapping of uuid to ``(expected, deviation)`` (``Snapshot.trends``).
    Fed with whatever loads were measured this period; an instance not
    measured for ``max_age`` seconds is forgotten at the next update, and
    one measured once has an expected load but no deviation yet.  Kept in
    memory: a new leader learns the swings again.
    """

    #: Half-lives an instance's trend is kept unmeasured by default: its
    #: swing is old news by then.
    KEPT_HALFLIVES = 3

    def __init__(self, halflife: float, max_age: float | None = None):
        self.halflife = halflife
        self.max_age = (self.KEPT_HALFLIVES * halflife if max_age is None
                        else max_age)
        #: uuid -> [timestamp, mean, variance or None]
        self._loads: dict[str, list] = {}

    def update(self, now: float, loads: Mapping[str, float]) -> None:
        """Add this period's measured loads, in cores.

        :func:`ewma` and :func:`ewm_variance` inlined: thousands of
        instances are measured every period on a large busy cloud.
        """
        if self.halflife <= 0:
            return
        known, halflife = self._loads, self.halflife
        for uuid, cores in loads.items():
            state = known.get(uuid)
            if state is None:
                known[uuid] = [now, cores, None]
                continue
            elapsed = now - state[0]
            if elapsed <= 0:
                continue
            keep = 0.5 ** (elapsed / halflife)
            mean = state[1]
            state[2] = keep * ((state[2] or 0.0)
                               + (1.0 - keep) * (cores - mean) ** 2)
            state[1] = keep * mean + (1.0 - keep) * cores
            state[0] = now
        for uuid in [u for u, state in known.items()
                     if now - state[0] > self.max_age]:
            del known[uuid]

    def __getitem__(self, uuid: str) -> tuple:
        """``(expected cores, deviation in cores or None)``."""
        state = self._loads[uuid]
        return state[1], None if state[2] is None else math.sqrt(state[2])

    def __iter__(self):
        return iter(self._loads)

    def __len__(self) -> int:
        return len(self._loads)


def ewma(previous: float | None, value: float, elapsed: float,
         halflife: float) -> float:
    """``previous`` moved towards ``value``: after ``elapsed`` seconds the
    old mean keeps half its weight per ``halflife``.  Time-aware, so that a
    missed sample weighs as long as it lasted."""
    if previous is None or halflife <= 0:
        return value
    keep = 0.5 ** (max(elapsed, 0.0) / halflife)
    return keep * previous + (1.0 - keep) * value


def ewm_variance(mean: float | None, variance: float | None, value: float,
                 elapsed: float, halflife: float) -> float:
    """The exponentially weighted variance around :func:`ewma`'s mean,
    updated with ``value`` (``mean`` is the mean *before* it): the old
    spread keeps the old mean's weight, and the new sample adds its squared
    distance from that mean, weighted as :func:`ewma` weighs it."""
    if mean is None or variance is None or halflife <= 0:
        return 0.0
    keep = 0.5 ** (max(elapsed, 0.0) / halflife)
    return keep * (variance + (1.0 - keep) * (value - mean) ** 2)


def event_rate(rate: float, event: bool, elapsed: float,
               halflife: float) -> float:
    """An exponentially weighted rate of events, per hour: ``rate`` decays
    by half per ``halflife`` seconds, and an event adds ln 2 per half-life
    in hours, so that events coming steadily at r an hour hold it at r."""
    rate *= 0.5 ** (max(elapsed, 0.0) / halflife)
    return rate + math.log(2) * 3600.0 / halflife if event else rate


def contention_percent(waiting: float | None,
                       vcpus: int) -> float | None:
    """Cores waiting for a CPU as percent of a host's ``vcpus`` CPUs
    (``HostSnapshot.cpu_contention``), the unit of its CPU; None stays
    None (not measured)."""
    if waiting is None or vcpus <= 0:
        return None
    return 100.0 * waiting / vcpus


def _optional(value) -> float | None:
    return None if value is None else float(value)


def _mean(values):
    return sum(values) / len(values) if values else None
