"""What a strategy achieved in one simulated run, period by period.

Overload is judged on each period's measured host CPU (what tenants felt),
not on the smoothed window the planner reads, so a strategy cannot look good
by being slow to notice.  Host CPU above 100 % is demand the host could not
serve; the model does not throttle it, so the worst overload shows how far
over capacity a host was pushed, and the unserved core-minutes how much.
An overloaded host-period is *DRS-caused* when the host would not be over
without the instances migrated onto it lately (:class:`Arrivals`): moves
must not buy one host's relief with another's overload.
"""

import collections
import math
import statistics
from collections.abc import Callable
from collections.abc import Mapping

from nova_drs_scheduler.planning import relief


def percentile(values, fraction: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _mean_ms(seconds: list) -> float:
    return round(1000.0 * statistics.fmean(seconds), 3) if seconds else 0.0


class Arrivals:
    """The instances each host received by a migration that ended within
    the last ``periods`` periods, and the overloaded hosts they explain.

    The simulator's scorecard and ``tools/diagnose_overload.py`` share it,
    so that both call the same host-periods DRS-caused.
    """

    def __init__(self, periods: int):
        self.periods = periods
        #: {host: {instance: period its load first counted there}}
        self._by_host = collections.defaultdict(dict)

    def arrived(self, period: int, instance: str, host: str) -> None:
        """``instance``'s migration to ``host`` ended before ``period``."""
        self._by_host[host][instance] = period

    def recent(self, period: int, host: str, location: Mapping) -> list:
        """The instances that arrived on ``host`` within the window and
        are still on it."""
        arrivals = self._by_host.get(host)
        if not arrivals:
            return []
        for name, when in list(arrivals.items()):
            if period - when >= self.periods or location[name] != host:
                del arrivals[name]
        return sorted(arrivals)

    def caused(self, period: int, host_percent: Mapping, threshold: float,
               location: Mapping,
               percent_of: Callable[[str], float]) -> set:
        """The hosts over ``threshold`` that would not be over without
        their recent arrivals (``percent_of(instance)``: its load now, in
        percent of its host)."""
        caused = set()
        for host, cpu in host_percent.items():
            if cpu <= threshold:
                continue
            arrived = sum(map(percent_of, self.recent(period, host,
                                                      location)))
            if arrived and cpu - arrived <= threshold:
                caused.add(host)
        return caused


def _hosts_over(host_percent: dict, level: float) -> frozenset:
    """The hosts whose CPU is above ``level`` percent."""
    return frozenset(host for host, value in host_percent.items()
                     if value > level)


class Scorecard:
    """Accumulates the benchmark's columns for one strategy, on hosts of
    ``host_vcpus`` CPUs measured every ``interval`` seconds."""

    def __init__(self, threshold: float, ping_pong_periods: int,
                 host_vcpus: int, interval: float):
        self.threshold = threshold
        self.ping_pong_periods = ping_pong_periods
        self.host_vcpus = host_vcpus
        self.interval = interval
        self.overloaded_series = []
        self.caused_series = []
        self.stddev_series = []
        self.worst = 0.0
        #: Percent points over 100 % summed over hosts and periods.
        self.unserved_points = 0.0
        #: Overloaded host-periods whose host was not over the period
        #: before: the first period of each episode, which a planner
        #: acting on what it measured cannot have prevented but by keeping
        #: the host cooler beforehand.
        self.overload_starts = 0
        self._over = frozenset()
        #: Of ``unserved_points``, those in the first period of each
        #: episode past 100 % (the host was at or under 100 % the period
        #: before): a step between two samples, before any planner can
        #: act on it.
        self.unserved_first_points = 0.0
        #: Episodes past 100 %: how many times a host went past it.
        self.starved_starts = 0
        self._starved = frozenset()
        self.migrations = 0
        self.migration_seconds = 0.0
        self.failed = collections.Counter()
        self.moved_mb = 0
        self.ping_pongs = 0
        #: :func:`~nova_drs_scheduler.planning.relief.check` results.
        self.reliefs = []
        #: Per period, seconds building the strategy's input, and deciding.
        self.input_seconds = []
        self.plan_seconds = []
        #: {vm: {host it left: period it left}}
        self._left = {}

    def observe(self, host_percent: dict, caused: int = 0) -> None:
        """One period's measured CPU of every host, in percent, and how
        many of the hosts over the threshold are DRS-caused
        (:meth:`Arrivals.caused`)."""
        values = list(host_percent.values())
        over = _hosts_over(host_percent, self.threshold)
        self.overloaded_series.append(len(over))
        self.overload_starts += len(over - self._over)
        self._over = over
        self.caused_series.append(caused)
        self.stddev_series.append(statistics.pstdev(values))
        self.worst = max(self.worst, max(values))
        self.unserved_points += sum(v - 100.0 for v in values if v > 100.0)
        starved = _hosts_over(host_percent, 100.0)
        started = starved - self._starved
        self.starved_starts += len(started)
        self.unserved_first_points += sum(
            host_percent[host] - 100.0 for host in started)
        self._starved = starved

    def planned(self, built: float, decided: float) -> None:
        """One period's input-building and decision times, in seconds."""
        self.input_seconds.append(built)
        self.plan_seconds.append(decided)

    def planned_between(self, built: float, decided: float) -> None:
        """Times spent planning at a moment between two periods: the
        last period's."""
        self.input_seconds[-1] += built
        self.plan_seconds[-1] += decided

    def migrated(self, period: int, vm: str, source: str,
                 destination: str, memory_mb: int) -> None:
        """A migration started; a return within the window is a
        ping-pong."""
        left = self._left.setdefault(vm, {})
        if (destination in left
                and period - left[destination] <= self.ping_pong_periods):
            self.ping_pongs += 1
        left[source] = period
        self.migrations += 1
        self.moved_mb += memory_mb

    def copied(self, seconds: float) -> None:
        """A migration's copy ran ``seconds`` (it has ended)."""
        self.migration_seconds += seconds

    def relieved(self, outcome: dict | None) -> None:
        """A move's relief checked after it (None: it could not be)."""
        self.reliefs.append(outcome)

    def refused(self, reason: str) -> None:
        """A planned move that Nova would refuse to start, and why."""
        self.failed[reason] += 1

    def _core_minutes(self, points: float) -> float:
        """Percent points of a host summed over periods, in core-minutes."""
        return round(points / 100.0 * self.host_vcpus * self.interval / 60.0,
                     1)

    def summary(self) -> dict:
        plan_ms = [1000.0 * s for s in self.plan_seconds]
        total_ms = [1000.0 * (i + s) for i, s in zip(
            self.input_seconds, self.plan_seconds, strict=True)]
        held, checked = relief.held_share(self.reliefs)
        return {
            'overloaded_host_periods': sum(self.overloaded_series),
            'drs_caused_overloaded_host_periods': sum(self.caused_series),
            'overload_starts': self.overload_starts,
            'worst_overload_percent': round(self.worst, 1),
            'unserved_core_minutes': self._core_minutes(
                self.unserved_points),
            'unserved_first_core_minutes': self._core_minutes(
                self.unserved_first_points),
            'starved_starts': self.starved_starts,
            'migrations': self.migrations,
            'failed_migrations': sum(self.failed.values()),
            'gb_moved': round(self.moved_mb / 1024.0, 1),
            'instance_minutes_in_migration': round(
                self.migration_seconds / 60.0, 1),
            'ping_pongs': self.ping_pongs,
            'relief_checked': checked,
            'relief_held_percent': round(100.0 * held / checked, 1)
            if checked else None,
            'stddev_mean': round(statistics.fmean(self.stddev_series), 2)
            if self.stddev_series else 0.0,
            'stddev_p95': round(percentile(self.stddev_series, 0.95), 2),
            'input_ms_mean': _mean_ms(self.input_seconds),
            'plan_ms_mean': _mean_ms(self.plan_seconds),
            'plan_ms_p95': round(percentile(plan_ms, 0.95), 3),
            'total_ms_p95': round(percentile(total_ms, 0.95), 3),
        }
