"""What a strategy achieved in one simulated run, period by period.

Overload is judged on each period's measured host CPU (what tenants felt),
not on the smoothed window the planner reads, so a strategy cannot look good
by being slow to notice.  Host CPU above 100 % is demand the host could not
serve; the model does not throttle it, so the worst overload shows how far
over capacity a host was pushed.
"""

import collections
import math
import statistics


def percentile(values, fraction: float) -> float:
    """Nearest-rank percentile; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _mean_ms(seconds: list) -> float:
    return round(1000.0 * statistics.fmean(seconds), 3) if seconds else 0.0


class Scorecard:
    """Accumulates the benchmark's columns for one strategy."""

    def __init__(self, threshold: float, ping_pong_periods: int):
        self.threshold = threshold
        self.ping_pong_periods = ping_pong_periods
        self.overloaded_series = []
        self.stddev_series = []
        self.worst = 0.0
        self.migrations = 0
        self.failed = collections.Counter()
        self.moved_mb = 0
        self.ping_pongs = 0
        #: Per period, seconds building the strategy's input, and deciding.
        self.input_seconds = []
        self.plan_seconds = []
        #: {vm: {host it left: period it left}}
        self._left = {}

    def observe(self, host_percent: dict) -> None:
        """One period's measured CPU of every host, in percent."""
        values = list(host_percent.values())
        self.overloaded_series.append(
            sum(1 for v in values if v > self.threshold))
        self.stddev_series.append(statistics.pstdev(values))
        self.worst = max(self.worst, max(values))

    def planned(self, built: float, decided: float) -> None:
        """One period's input-building and decision times, in seconds."""
        self.input_seconds.append(built)
        self.plan_seconds.append(decided)

    def migrated(self, period: int, vm: str, source: str,
                 destination: str, memory_mb: int) -> None:
        """A migration started; a return within the window is a ping-pong."""
        left = self._left.setdefault(vm, {})
        if (destination in left
                and period - left[destination] <= self.ping_pong_periods):
            self.ping_pongs += 1
        left[source] = period
        self.migrations += 1
        self.moved_mb += memory_mb

    def refused(self, reason: str) -> None:
        """A planned move that Nova would refuse to start, and why."""
        self.failed[reason] += 1

    def summary(self) -> dict:
        plan_ms = [1000.0 * s for s in self.plan_seconds]
        total_ms = [1000.0 * (i + s) for i, s in zip(
            self.input_seconds, self.plan_seconds, strict=True)]
        return {
            'overloaded_host_periods': sum(self.overloaded_series),
            'worst_overload_percent': round(self.worst, 1),
            'migrations': self.migrations,
            'failed_migrations': sum(self.failed.values()),
            'gb_moved': round(self.moved_mb / 1024.0, 1),
            'ping_pongs': self.ping_pongs,
            'stddev_mean': round(statistics.fmean(self.stddev_series), 2)
            if self.stddev_series else 0.0,
            'stddev_p95': round(percentile(self.stddev_series, 0.95), 2),
            'input_ms_mean': _mean_ms(self.input_seconds),
            'plan_ms_mean': _mean_ms(self.plan_seconds),
            'plan_ms_p95': round(percentile(plan_ms, 0.95), 3),
            'total_ms_p95': round(percentile(total_ms, 0.95), 3),
        }
